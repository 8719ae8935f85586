"""Maps every section of every seed to the scenarios whose ``source`` cites it.

Sections are the seed's headings, and the numbered items under a heading (``5.4``, ``§5.1 step 2``,
``Open Questions for Testing 8``). A scenario cites a section when its ``source`` names the seed
file and either the section's number (``§5.2``, ``TC4``) or its title (with its parent's title when
the title alone is ambiguous, e.g. "Read Tool Behavior / Error Conditions"). Sections no tool call
can observe carry a reason in ``docs/coverage-notes.yaml``; every other section must be covered.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from harness.scenario.model import Scenario

_HEADING = re.compile(r"^(#{2,4})\s+(.*?)\s*$")
_ITEM = re.compile(r"^(\d+)\.\s+\*\*(.+?)\*\*")
_NUMBER = re.compile(r"^(\d+(?:\.\d+)*)\.?\s+(.*)$")
_SHORT_ID = re.compile(r"^(TC\d+):\s*(.*)$")


@dataclass
class Section:
    """One heading or numbered item of a seed."""

    seed: str
    key: str  # the number ("5.2", "4.3.1", "TC4") or the title path
    title: str
    depth: int
    parent: Section | None = None
    scenarios: list[str] = field(default_factory=list)
    note: str | None = None

    @property
    def label(self) -> str:
        """Returns how the section is shown: its number and title."""
        return f"§{self.key} {self.title}" if self.key != self.title else f"§{self.title}"


def seeds_dir() -> Path:
    """Returns the default seeds folder: ../shared/seeds beside the checkout."""
    return Path(__file__).resolve().parents[3] / "shared" / "seeds"


def notes_file() -> Path:
    """Returns the file of reasons for sections no tool call can observe."""
    return Path(__file__).resolve().parents[2] / "docs" / "coverage-notes.yaml"


def parse_seed(path: Path) -> list[Section]:
    """Returns the sections of one seed, in document order."""
    sections: list[Section] = []
    stack: list[Section] = []
    in_fence = False
    for line in path.read_text("utf-8").splitlines():
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        heading = _HEADING.match(line)
        if heading:
            depth = len(heading.group(1))
            title = _clean(heading.group(2))
            while stack and stack[-1].depth >= depth:
                stack.pop()
            number = _NUMBER.match(title)
            short = _SHORT_ID.match(title)
            key = number.group(1) if number else short.group(1) if short else title
            title = number.group(2) if number else title
            section = Section(path.name, key, title, depth, stack[-1] if stack else None)
            sections.append(section)
            stack.append(section)
            continue
        item = _ITEM.match(line)
        if item and stack:
            parent = next((s for s in reversed(stack) if s.depth <= 4), stack[-1])
            if parent.depth > 4:  # items of items are not sections
                continue
            key = f"{parent.key}.{item.group(1)}" if _NUMBER.match(parent.key + " x") else f"{parent.key} {item.group(1)}"
            sections.append(Section(path.name, key, _clean(item.group(2)).rstrip(":"), 5, parent))
    return [s for s in sections if not s.title.lower().startswith("design proposal")]


def _clean(title: str) -> str:
    return re.sub(r"[*`]", "", title).strip()


def cites(section: Section, source: str, ambiguous: set[str]) -> bool:
    """Returns whether a scenario source cites the section."""
    lowered = source.lower()
    if section.seed.lower() not in lowered and not re.search(rf"\b{section.seed[:3]}\b", lowered):
        return False
    key = section.key
    if section.depth == 5 and section.parent is not None:  # a numbered item: §5.4, §5.1 step 2, "Questions 8"
        parent_key, index = section.parent.key, re.split(r"[. ]", key)[-1]
        patterns = [rf"§{re.escape(key)}(?!\.?\d)", rf"§{re.escape(parent_key)}\s+(step|item)\s+{index}\b",
                    rf"{re.escape(parent_key)}\s+{index}\b(?!\.\d)"]
        return any(re.search(p, source) for p in patterns)
    if re.fullmatch(r"[\d.]+", key):
        return re.search(rf"§{re.escape(key)}(?!\.?\d)", source) is not None
    if re.fullmatch(r"TC\d+", key) and re.search(rf"\b{key}\b", source):
        return True
    title = re.sub(r"\s*\(.*\)$", "", section.title)  # "Fallback (Local Filesystem)" is cited as "Fallback"
    if title.lower() in ambiguous:  # needs its parent: "Read Tool Behavior / Error Conditions", "§3 Goals"
        if section.parent is None:
            return False
        parent = re.escape(section.parent.title) + r"\s*/\s*([^§+;]*?\b)?"
        if re.fullmatch(r"[\d.]+", section.parent.key):
            parent = rf"(?:{parent}|§{re.escape(section.parent.key)}\s+)"
        return re.search(parent + re.escape(title) + r"\b", source) is not None
    return re.search(rf"(?<![\w/]){re.escape(title)}\b", source) is not None


def _ambiguous(sections: list[Section]) -> set[str]:
    """Titles that cannot stand alone: repeated, or a word of another heading ("Read" in "Read Tool Behavior")."""
    titles = [re.sub(r"\s*\(.*\)$", "", s.title) for s in sections if s.depth < 5]
    out = set()
    for title in titles:
        others = [t for t in titles if t != title]
        if titles.count(title) > 1 or any(re.search(rf"\b{re.escape(title)}\b", other) for other in others):
            out.add(title.lower())
    return out


def build(seeds: Path, scenarios: Iterable[Scenario], notes: dict[str, dict[str, str]] | None = None) -> list[Section]:
    """Returns every section of every seed with the scenarios that cite it."""
    notes = notes or {}
    all_sections: list[Section] = []
    scenarios = list(scenarios)
    for path in sorted(seeds.glob("0*.md")):
        sections = parse_seed(path)
        ambiguous = _ambiguous(sections)
        for section in sections:
            section.scenarios = sorted(s.id for s in scenarios if cites(section, s.source, ambiguous))
            section.note = notes.get(path.name, {}).get(section.key)
        all_sections += sections
    return all_sections


def load_notes(path: Path | None = None) -> dict[str, dict[str, str]]:
    """Returns the reasons for unobservable sections, by seed file and section key."""
    path = path or notes_file()
    if not path.is_file():
        return {}
    data = yaml.safe_load(path.read_text("utf-8")) or {}
    return {seed: {str(key): str(reason) for key, reason in entries.items()} for seed, entries in data.items()}


def uncovered(sections: list[Section]) -> list[Section]:
    """Returns the sections with neither a scenario (here or below) nor a note."""
    out = []
    for section in sections:
        below = [s for s in sections if _is_below(s, section)]
        if not section.scenarios and not section.note and not any(s.scenarios for s in below):
            out.append(section)
    return out


def _is_below(candidate: Section, ancestor: Section) -> bool:
    parent = candidate.parent
    while parent is not None:
        if parent is ancestor:
            return True
        parent = parent.parent
    return False


def markdown(sections: list[Section], scenario_count: int) -> str:
    """Returns the coverage table as Markdown (docs/coverage.md)."""
    lines = ["# Coverage of the seeds", "",
             "Generated by `harness coverage --markdown docs/coverage.md`; do not edit by hand.",
             f"Each section of each seed, and the scenarios whose `source` cites it ({scenario_count} scenarios in all).",
             "A section without scenarios carries the reason no tool call can observe it "
             "(docs/coverage-notes.yaml), or is counted through the sections below it.", ""]
    seed = None
    for section in sections:
        if section.seed != seed:
            seed = section.seed
            lines += ["", f"## {seed}", "", "| section | scenarios | ids |", "|---|---:|---|"]
        indent = "&nbsp;&nbsp;" * max(0, section.depth - 2)
        if section.scenarios:
            ids = ", ".join(f"`{i}`" for i in section.scenarios[:6])
            ids += f" … (+{len(section.scenarios) - 6})" if len(section.scenarios) > 6 else ""
        elif section.note:
            ids = f"not observable: {section.note}"
        else:
            ids = "see the sections below" if section.depth < 5 else "**not covered**"
        lines.append(f"| {indent}{section.label} | {len(section.scenarios)} | {ids} |")
    return "\n".join(lines) + "\n"

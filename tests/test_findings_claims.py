"""Each claim of the findings pages names the scenario, and so the snapshot, that shows it.

A page says where its observations are with a comment, e.g. for gemini-cli::

    <!-- claims: snapshots=gemini-cli-0.61.0 abbreviations=GC/:gemini-cli-captured/,SP/:gemini-safe-patch/ -->

A citation is a scenario id in backticks (``gemini-cli-captured/read_file/crlf``), or one shortened
by an abbreviation (``GC/read_file/crlf``) or by the page's ``base=`` prefixes (the claude-code report's
``edit/unread-rejected``). Every citation must name a scenario of the catalog that has a snapshot in
one of the page's folders; on a page listed in COMPLETE every claim (a table row below a header,
a list item) cites one, or sits under a heading that does.

Every page of COMPLETE says ``paragraphs=claims``, which holds its prose to the same rule: every paragraph,
and every numbered item, is a claim, except a paragraph right after ``<!-- not observations -->``
(what was run, how to read the page) and a lead-in ending in ``:`` (the list or table below it
holds the claims). There a test of this project (``tests/<file>.py::<test>``, which must exist) also
counts as a citation: it shows the behaviour of our own code, which has no snapshot.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from harness.record import snapshot as snap
from harness.scenario import catalog

ROOT = Path(__file__).resolve().parents[1]
PAGES = ("docs/claude-code-findings.md", "docs/claude-code-report.md", "docs/acp-findings.md",
         "docs/gemini-cli-findings.md", "docs/real-world.md", "docs/mcp-filesystem-divergences.md")
#: Pages whose every claim cites its scenario. (The generated docs/claude-code-report.md cites
#: its scenarios where it lists them; every citation there is checked.)
COMPLETE = ("docs/claude-code-findings.md", "docs/acp-findings.md", "docs/gemini-cli-findings.md",
            "docs/real-world.md", "docs/mcp-filesystem-divergences.md")

NOT_OBSERVATIONS = "<!-- not observations -->"
#: A line that says its scenario was skipped or ended in an error verdict names no snapshot: neither is recorded.
_UNRECORDED = re.compile(r"\bskip(?:s|ped)?\b|error verdict|\| error \|")
#: A claim that says its own observation was never recorded cites scenarios whose snapshots do not show it.
_DISOWNED = re.compile(r"\bnot (?:committed|recorded) as snapshots?\b|\bno snapshots?\b[^.]*\)", re.I)
_MARKER = re.compile(r"<!-- claims: (?P<settings>.*?) -->")
_TOKEN = re.compile(r"`([^`\s*]+/[^`\s*]+)`")


def settings(text: str) -> dict[str, list[str]] | None:
    """Returns the page's ``claims:`` settings: snapshots, abbreviations (``short:long``), base."""
    found = _MARKER.search(text)
    if found is None:
        return None
    out: dict[str, list[str]] = {"snapshots": [], "abbreviations": [], "base": []}
    for item in found["settings"].split():
        key, _, value = item.partition("=")
        out.setdefault(key, []).extend(value.split(","))
    return out


_NUMBERED = re.compile(r"^\d+\. ")
_TEST = re.compile(r"`(tests/[\w/]+\.py)::(\w+)`")


def claims(text: str, paragraphs: bool = False) -> list[tuple[int, str, str]]:
    """Returns (line number, text, the heading above it) of every claim: a table body row, or a list
    item with its continuation lines; with ``paragraphs``, also every prose paragraph and numbered
    item. A figures block (harness/drivers/figures.py), a code block, and a table or paragraph right
    after ``<!-- not observations -->`` (what was run, not what it did) hold none."""
    out: list[tuple[int, str, str]] = []
    in_table = skip_table = in_figures = in_code = False
    heading, previous = "", ""
    item: list[Any] | None = None
    paragraph: list[Any] | None = None

    def close_paragraph() -> None:
        nonlocal paragraph
        if paragraph is not None and not paragraph[1].rstrip().endswith(":") and not paragraph[3]:
            out.append((paragraph[0], paragraph[1], paragraph[2]))
        paragraph = None

    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith("```"):
            close_paragraph()
            in_code = not in_code
            continue
        if in_code:
            continue
        if item is not None and line.startswith("  ") and line.strip():
            item[1] += " " + line.strip()
            continue
        item = None
        if paragraphs and paragraph is not None and line.strip() and not line.startswith(("#", "|", "- ", "<!--")) \
                and not _NUMBERED.match(line):
            paragraph[1] += " " + line.strip()
            continue
        close_paragraph()
        if line.startswith("<!-- figures: "):
            in_figures = True
        elif line.startswith("<!-- /figures -->"):
            in_figures = False
        if line.startswith("#"):
            heading = line
        if paragraphs and not in_figures and line.strip() and not line.startswith(("#", "|", "- ", "<!--")):
            if _NUMBERED.match(line):
                item = [number, line, heading]
                out.append(item)  # type: ignore[arg-type]
            else:
                paragraph = [number, line, heading, previous.strip() == NOT_OBSERVATIONS]
            previous = line
            continue
        if line.startswith("|"):
            if not in_table and not line.startswith("|-"):
                skip_table = in_figures or previous.strip() == NOT_OBSERVATIONS
            if re.match(r"^\|[-:| ]+\|$", line):
                in_table = True
            elif in_table and not skip_table:
                out.append((number, line, heading))
        else:
            in_table = False
            if line.startswith("- "):
                item = [number, line, heading]
                out.append(item)  # type: ignore[arg-type]
        previous = line
    close_paragraph()
    return [tuple(entry) for entry in out]  # type: ignore[misc]


def problems(root: Path, pages=PAGES, complete=COMPLETE) -> list[str]:
    """Returns every citation that names no scenario or no snapshot, and every claim citing none."""
    cat = catalog.load([root / "scenarios"])
    ids = {scenario.id for scenario in cat.scenarios}
    profiles = {scenario.profile for scenario in cat.scenarios}
    out = []
    for page in pages:
        text = (root / page).read_text("utf-8")
        given = settings(text)
        if given is None:
            out.append(f"{page}: no <!-- claims: snapshots=... --> comment")
            continue
        held = {i for folder in given["snapshots"] for i in snap.folder_ids(root / "snapshots" / folder)}
        abbreviations = dict(pair.split(":", 1) for pair in given["abbreviations"] if ":" in pair)

        def cited(token: str, where: str) -> bool:
            for short, long in abbreviations.items():  # noqa: B023 (called in the same iteration)
                if token.startswith(short):
                    token = long + token[len(short):]
            candidates = [token] + [base + token for base in given["base"]]  # noqa: B023 (called in the same iteration)
            scenario = next((c for c in candidates if c in ids), None)
            if scenario is None:
                if token.split("/", 1)[0] in profiles:  # written as an id: it must be one
                    out.append(f"{where}: `{token}` is no scenario of the catalog")
                return False
            if scenario not in held and not _UNRECORDED.search(where_line[0]):  # noqa: B023 (called in the same iteration)
                out.append(f"{where}: `{scenario}` has no snapshot in " + ", ".join(f"snapshots/{f}" for f in given["snapshots"]))  # noqa: B023 (called in the same iteration)
                return False
            return True

        lines = text.splitlines()
        where_line = [""]
        for number, line in enumerate(lines, start=1):
            where_line[0] = line
            for token in _TOKEN.findall(line):
                cited(token, f"{page}:{number}")
        if page not in complete:
            continue
        headings_citing = set()
        for line in lines:
            if line.startswith("#") and any(_resolves(t, ids, abbreviations, given["base"]) for t in _TOKEN.findall(line)):
                headings_citing.add(line)
        paragraphs = "claims" in given.get("paragraphs", [])
        if not paragraphs:
            out.append(f"{page}: its prose is not held to citations (no paragraphs=claims)")
        for number, line, heading in claims(text, paragraphs):
            if heading in headings_citing:
                continue
            tests = _TEST.findall(line) if paragraphs else []
            for file, name in tests:
                if not re.search(rf"^def {name}\(", _text(root / file), re.M):
                    out.append(f"{page}:{number}: `{file}::{name}` is no test of this project")
            if not tests and not any(_resolves(t, ids, abbreviations, given["base"]) for t in _TOKEN.findall(line)):
                out.append(f"{page}:{number}: a claim citing no scenario: {line[:100]}")
            elif _DISOWNED.search(line):
                out.append(f"{page}:{number}: a claim whose observation is not recorded: {line[:100]}")
    return out


def _text(path: Path) -> str:
    return path.read_text("utf-8") if path.is_file() else ""


def _resolves(token: str, ids: set[str], abbreviations: dict[str, str], bases: list[str]) -> bool:
    for short, long in abbreviations.items():
        if token.startswith(short):
            token = long + token[len(short):]
    return any(candidate in ids for candidate in [token] + [base + token for base in bases])


def test_every_claim_names_a_scenario_with_a_snapshot() -> None:
    found = problems(ROOT)
    assert not found, f"{len(found)} claim(s) without their observation:\n" + "\n".join(found)


def test_a_missing_scenario_a_missing_snapshot_and_an_uncited_claim_are_found(tmp_path: Path) -> None:
    import shutil
    (tmp_path / "scenarios").symlink_to(ROOT / "scenarios")
    shutil.copytree(ROOT / "snapshots" / "gemini-cli-0.61.0", tmp_path / "snapshots" / "gemini-cli-0.61.0")
    (tmp_path / "docs").mkdir()
    page = (ROOT / "docs" / "gemini-cli-findings.md").read_text("utf-8")
    (tmp_path / "docs" / "gemini-cli-findings.md").write_text(page, "utf-8")
    pages = ("docs/gemini-cli-findings.md",)
    assert problems(tmp_path, pages, pages) == []
    broken = page.replace("`GC/replace/dollar-sequences-literal`", "`GC/replace/dollar-sequences-literally`")
    broken = broken.replace("| `GC/replace/fuzzy-typo` |", "| the capture |")
    (tmp_path / "docs" / "gemini-cli-findings.md").write_text(broken, "utf-8")
    (tmp_path / "snapshots" / "gemini-cli-0.61.0" / "gemini-cli-captured" / "replace" / "identical-strings.yaml").unlink()
    found = problems(tmp_path, pages, pages)
    line = next(n for n, text in enumerate(broken.splitlines(), 1) if "dollar-sequences-literally" in text)
    assert f"docs/gemini-cli-findings.md:{line}: `gemini-cli-captured/replace/dollar-sequences-literally` is no scenario of the catalog" in found
    assert any("`gemini-cli-captured/replace/identical-strings` has no snapshot in snapshots/gemini-cli-0.61.0" in p for p in found)
    assert any("a claim citing no scenario: | — | a fuzzy match" in p for p in found), found


def test_paragraphs_are_claims_where_the_page_says_so(tmp_path: Path) -> None:
    # A copy of the ACP findings: current at first; then a paragraph citing nothing, one citing scenarios
    # for a run it says was not committed, and one citing a test that does not exist.
    import shutil
    (tmp_path / "scenarios").symlink_to(ROOT / "scenarios")
    (tmp_path / "tests").symlink_to(ROOT / "tests")
    for folder in ("acp-claude-code-0.16.2-cli-2.1.330", "acp-claude-code-0.16.2-cli-2.1.330-events-seed003"):
        shutil.copytree(ROOT / "snapshots" / folder, tmp_path / "snapshots" / folder)
    (tmp_path / "docs").mkdir()
    page = (ROOT / "docs" / "acp-findings.md").read_text("utf-8")
    pages = ("docs/acp-findings.md",)
    (tmp_path / pages[0]).write_text(page, "utf-8")
    assert problems(tmp_path, pages, pages) == []
    anchor = "## Which tools go through `fs/*`\n"
    assert anchor in page
    broken = page.replace(anchor, (
        "The fake API needed no change: the agent's CLI sends one `count_tokens`.\n\n"
        "`cli=bundled` runs too: `claude-code/read/arrow-not-tab` gave the same outputs (a run of it,\n"
        "not committed as snapshots).\n\n"
        "Our reference agent sends no `write` kind (`tests/targets/test_acp_target.py::test_no_such_test`).\n\n"
        "Lead-ins are no claims of their own:\n\n") + anchor, 1)
    (tmp_path / pages[0]).write_text(broken, "utf-8")
    line = broken.splitlines().index("## Which tools go through `fs/*`") + 1
    assert problems(tmp_path, pages, pages) == [
        f"docs/acp-findings.md:{line - 9}: a claim citing no scenario: The fake API needed no change: the agent's "
        "CLI sends one `count_tokens`.",
        f"docs/acp-findings.md:{line - 7}: a claim whose observation is not recorded: " + (
            "`cli=bundled` runs too: `claude-code/read/arrow-not-tab` gave the same outputs (a run of it, "
            "not committed as snapshots).")[:100],
        f"docs/acp-findings.md:{line - 4}: `tests/targets/test_acp_target.py::test_no_such_test` is no test of "
        "this project"]
    # A findings page cannot leave its prose out: without paragraphs=claims it is a problem of its own.
    (tmp_path / pages[0]).write_text(page.replace(" paragraphs=claims", ""), "utf-8")
    assert problems(tmp_path, pages, pages) == ["docs/acp-findings.md: its prose is not held to citations (no paragraphs=claims)"]


def test_a_removed_citation_in_the_real_world_prose_is_found(tmp_path: Path) -> None:
    # A copy of docs/real-world.md: current at first; then its mcp-text-editor paragraph loses the
    # scenario that shows the hash, and a "not observations" marker is dropped from a lead-in.
    import shutil
    (tmp_path / "scenarios").symlink_to(ROOT / "scenarios")
    (tmp_path / "tests").symlink_to(ROOT / "tests")
    page = (ROOT / "docs" / "real-world.md").read_text("utf-8")
    for folder in settings(page)["snapshots"]:  # type: ignore[index]
        shutil.copytree(ROOT / "snapshots" / folder, tmp_path / "snapshots" / folder)
    (tmp_path / "docs").mkdir()
    pages = ("docs/real-world.md",)
    (tmp_path / pages[0]).write_text(page, "utf-8")
    assert problems(tmp_path, pages, pages) == []
    cited = " (`gemini-safe-patch/read_file/sha256-of-known-content`)"
    lead_in = "<!-- not observations -->\nReading the figures:"
    assert cited in page and lead_in in page
    broken = page.replace(cited, "", 1).replace(lead_in, "Reading the figures:", 1)
    (tmp_path / pages[0]).write_text(broken, "utf-8")
    lines = broken.splitlines()
    hash_paragraph = next(n for n, text in enumerate(lines, 1) if text.startswith("`mcp-text-editor` from PyPI"))
    reading = next(n for n, text in enumerate(lines, 1) if text.startswith("Reading the figures:"))
    found = problems(tmp_path, pages, pages)
    assert [p.split(": a claim citing no scenario: ")[0] for p in found] == [
        f"docs/real-world.md:{reading}", f"docs/real-world.md:{hash_paragraph}"], found
    assert "a claim citing no scenario: Reading the figures:" in found[0]

"""Writes docs/agents.md: how the coding agents differ on the same edge cases, from their snapshots.

Usage (``make agents-doc``; every ``make capture-<agent>`` runs it)::

    python -m harness.drivers.agents_doc [--snapshots DIR] [--write FILE | --check FILE]
                                         [--drift OLD NEW]

One row per behaviour (read-before-write, staleness, ambiguous edits, quotes, whitespace, line
endings, encodings, symbolic links, large files, relative paths, creation of parents, ...), one
column per snapshot folder that holds a ``<agent>-captured/behaviour/`` catalog (an agent and its
version). Each scenario ``<agent>-captured/behaviour/<row>`` plays the same situation through that
agent's own tools; each cell is the observed answer, read from the snapshot (the tool result and
the workspace after the call), linked to that snapshot. Nothing in the page is typed by hand.

``--write FILE`` also writes one findings page per column into ``agents/`` beside FILE
(docs/agents/<agent>-<version>.md): every behaviour, its answer, its scenario and snapshot, and the
tool result the agent gave. ``--check FILE`` exits 1 when any of those pages is not what would be
written (the test suite runs it).
``--drift OLD NEW`` prints the rows whose cells differ between two columns (e.g. two releases of
one agent), and exits 1 when any does.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

#: What each cell says for a call, from its snapshot step and the workspace after it.
Step = dict[str, Any]


@dataclass(frozen=True)
class Behaviour:
    """One row: the scenario slug, its label, and how its observation reads as a short answer."""

    slug: str
    label: str
    question: str
    answer: Callable[[Step, dict[str, Any]], str]


def _file(workspace: dict[str, Any], name: str) -> dict[str, Any] | None:
    entry = (workspace or {}).get(name)
    return entry if isinstance(entry, dict) else None


def _text(workspace: dict[str, Any], name: str) -> str | None:
    entry = _file(workspace, name)
    return entry.get("text") if entry is not None else None


def _message(step: Step, limit: int = 90) -> str:
    """Returns the first line of a step's error message (or output), cut to ``limit`` characters."""
    text = (step.get("error") or {}).get("message") if step.get("error") else step.get("output")
    text = str(text if text is not None else "").strip()
    first = text.splitlines()[0] if text else ""
    return first if len(first) <= limit else first[:limit - 1] + "…"


def _refused(step: Step) -> str | None:
    return f"refused: “{_message(step)}”" if step.get("error") else None


def _applied_or(step: Step, workspace: dict[str, Any], detail: Callable[[], str]) -> str:
    return _refused(step) or detail()


def _changed(before: str, name: str) -> Callable[[Step, dict[str, Any]], str]:
    """Applied when ``name`` no longer holds ``before``; else unchanged."""
    def answer(step: Step, workspace: dict[str, Any]) -> str:
        refused = _refused(step)
        if refused:
            return refused
        return "applied" if _text(workspace, name) != before else f"not applied: “{_message(step)}”"
    return answer


def _ambiguous(step: Step, workspace: dict[str, Any]) -> str:
    text = _text(workspace, "a.txt") or ""
    return _refused(step) or {0: "nothing replaced", 1: "first occurrence replaced", 2: "both occurrences replaced"}.get(
        text.count("x = 2"), f"{text.count('x = 2')} replaced")


def _replace_all(step: Step, workspace: dict[str, Any]) -> str:
    return _refused(step) or f"{(_text(workspace, 'a.txt') or '').count('x = 2')} of 2 replaced"


def _quotes(step: Step, workspace: dict[str, Any]) -> str:
    text = _text(workspace, "q.txt") or ""
    if step.get("error"):
        return _refused(step) or ""
    if "\u201chi\u201d" in text:
        return "matched; file's curly quotes kept"
    if '"hi"' in text:
        return "matched; straight quotes written"
    return "no change"


def _whitespace(step: Step, workspace: dict[str, Any]) -> str:
    text = _text(workspace, "t.py") or ""
    if step.get("error"):
        return _refused(step) or ""
    if "\t\treturn 2" in text:
        return "matched; file's tabs kept"
    if "        return 2" in text:
        return "matched; spaces written"
    return "no change"


def _crlf(step: Step, workspace: dict[str, Any]) -> str:
    text = _text(workspace, "dos.txt") or ""
    if step.get("error"):
        return _refused(step) or ""
    if "1st" not in text:
        return "no change"
    lf = text.count("\n") - text.count("\r\n")
    return "matched; CRLF kept" if lf == 0 else ("matched; LF written" if text.count("\r\n") == 0 else "matched; CRLF and LF mixed")


def _final_newline(step: Step, workspace: dict[str, Any]) -> str:
    text = _text(workspace, "n.txt") or ""
    if step.get("error"):
        return _refused(step) or ""
    if "final line" not in text:
        return "no change"
    return "applied; a final newline added" if text.endswith("\n") else "applied; still no final newline"


_LATIN1_EDITED = hashlib.sha256("caf\u00e9 = 1\nx = 3\n".encode("latin-1")).hexdigest()


def _latin1_edit(step: Step, workspace: dict[str, Any]) -> str:
    entry = _file(workspace, "legacy.txt") or {}
    if step.get("error"):
        return _refused(step) or ""
    if entry.get("sha256") == _LATIN1_EDITED:
        return "applied; Latin-1 bytes kept"
    text = entry.get("text")
    if text is not None and "x = 3" in text:
        return "applied; rewritten as UTF-8" + (" with U+FFFD" if "\ufffd" in text else "")
    # Not UTF-8 (the snapshot keeps only its hash): which single byte took the place of é (0xE9)?
    for byte in range(256):
        if entry.get("sha256") == hashlib.sha256(b"caf" + bytes([byte]) + b" = 1\nx = 3\n").hexdigest():
            return f"applied; é (0xE9) written as byte 0x{byte:02X}"
    return "changed otherwise (see the snapshot)" if entry.get("sha256") else "no change"


def _bom(step: Step, workspace: dict[str, Any]) -> str:
    text = _text(workspace, "bom.txt") or ""
    if step.get("error"):
        return _refused(step) or ""
    if "WORLD" not in text:
        return "no change"
    return "applied; BOM kept" if text.startswith("\ufeff") else "applied; BOM dropped"


def _symlink(step: Step, workspace: dict[str, Any]) -> str:
    link = _file(workspace, "link.txt") or {}
    real = _text(workspace, "real.txt") or ""
    if step.get("error"):
        return _refused(step) or ""
    if link.get("type") == "symlink" and "changed" in real:
        return "applied to the target; link kept"
    if link.get("type") == "file":
        return "link replaced by a file" + ("" if "changed" in real else "; target unchanged")
    return "no change"


def _large(step: Step, workspace: dict[str, Any]) -> str:
    if step.get("error"):
        return _refused(step) or ""
    output = str(step.get("output") or "")
    shown = len(re.findall(r"line \d+", output))
    return f"{shown:,} of 30,000 lines returned" if shown else f"{len(output):,} characters returned"


def _read_latin1(step: Step, workspace: dict[str, Any]) -> str:
    if step.get("error"):
        return _refused(step) or ""
    output = str(step.get("output") or "")
    if "\ufffd" in output:
        return "U+FFFD in place of é"
    if "caf\u00e9" in output:
        return "decoded: café"
    return f"returned “{_message(step)}”"


def _created(name: str) -> Callable[[Step, dict[str, Any]], str]:
    def answer(step: Step, workspace: dict[str, Any]) -> str:
        if step.get("error"):
            return _refused(step) or ""
        return "created" if _file(workspace, name) is not None else f"not created: “{_message(step)}”"
    return answer


def _refusal_or(what: str) -> Callable[[Step, dict[str, Any]], str]:
    def answer(step: Step, workspace: dict[str, Any]) -> str:
        return _refused(step) or f"{what}: “{_message(step)}”"
    return answer


BEHAVIOURS: tuple[Behaviour, ...] = (
    Behaviour("edit-unread", "Read before edit", "An edit of a file never read in the session", _changed("alpha\nbeta\n", "a.txt")),
    Behaviour("write-unread-existing", "Read before overwrite", "A whole-file write over an existing file never read",
              _changed("old\n", "a.txt")),
    Behaviour("edit-stale", "Staleness", "An edit after the file changed on disk since it was read",
              _changed("alpha\nbeta\ngamma\n", "a.txt")),
    Behaviour("edit-ambiguous", "Ambiguous edit", "The old text occurs twice", _ambiguous),
    Behaviour("edit-replace-all", "Replace all", "Replace-all on two occurrences", _replace_all),
    Behaviour("edit-no-match", "No match", "The old text is not in the file", _refusal_or("answered")),
    Behaviour("edit-curly-quotes", "Quotes", "Straight quotes in the old text, curly quotes in the file", _quotes),
    Behaviour("edit-whitespace-mismatch", "Whitespace", "Spaces in the old text, tabs in the file", _whitespace),
    Behaviour("edit-crlf", "Line endings", "An LF old text on a CRLF file", _crlf),
    Behaviour("edit-no-final-newline", "Final newline", "An edit of a file without a final newline", _final_newline),
    Behaviour("edit-latin1", "Encoding (edit)", "An edit of a Latin-1 file away from its non-ASCII byte", _latin1_edit),
    Behaviour("read-latin1", "Encoding (read)", "A read of a Latin-1 file", _read_latin1),
    Behaviour("edit-utf8-bom", "Byte order mark", "An edit of a UTF-8 file with a BOM", _bom),
    Behaviour("edit-symlink", "Symbolic links", "An edit through a symbolic link", _symlink),
    Behaviour("read-large", "Large files", "A read of a 30,000-line file", _large),
    Behaviour("read-missing", "Missing file (read)", "A read of a file that does not exist", _refusal_or("answered")),
    Behaviour("edit-missing-file", "Missing file (edit)", "An edit of a file that does not exist", _created("missing.txt")),
    Behaviour("relative-path", "Relative paths", "A path relative to the working directory (Codex: an absolute one)",
              _changed("alpha\n", "a.txt")),
    Behaviour("write-creates-parents", "Creation of parents", "A new file whose parent folders do not exist",
              _created("sub/dir/new.txt")),
)


@dataclass(frozen=True)
class Column:
    """One agent and version: its snapshot folder and the captured profile in it."""

    folder: str
    profile: str

    @property
    def label(self) -> str:
        return self.folder


def columns(snapshots: Path) -> list[Column]:
    """Returns every snapshot folder holding a ``*-captured/behaviour/`` catalog, by name."""
    found = []
    for folder in sorted(p for p in snapshots.iterdir() if p.is_dir() and not p.is_symlink()):
        for profile in sorted(p for p in folder.iterdir() if p.is_dir() and p.name.endswith("-captured")):
            if (profile / "behaviour").is_dir():
                found.append(Column(folder.name, profile.name))
    return found


def _last_call_and_workspace(document: dict[str, Any]) -> tuple[Step, dict[str, Any]]:
    steps = [step for step in document.get("steps") or [] if isinstance(step, dict) and "tool" in step]
    if not steps:
        return {}, {}
    workspace: dict[str, Any] = {}
    for step in steps:
        if isinstance(step.get("workspace"), dict):
            workspace = step["workspace"]
    return steps[-1], workspace


def cell(snapshots: Path, column: Column, behaviour: Behaviour) -> tuple[str, str | None]:
    """Returns a cell's answer and the snapshot it comes from (relative to ``snapshots``), or ("—", None)."""
    relative = f"{column.folder}/{column.profile}/behaviour/{behaviour.slug}.yaml"
    path = snapshots / relative
    if not path.is_file():
        return "—", None
    document = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    step, workspace = _last_call_and_workspace(document)
    if not step:
        return "no call recorded", relative
    return behaviour.answer(step, workspace), relative


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ").replace("[", "\\[").replace("]", "\\]")


def render(snapshots: Path, link_prefix: str = "../snapshots/") -> str:
    """Returns the page."""
    cols = columns(snapshots)
    lines = [
        "# How the coding agents differ on the same edge cases",
        "",
        "Generated by `python -m harness.drivers.agents_doc --write docs/agents.md` (`make agents-doc`) from the",
        "snapshots; do not edit. Each column is one agent and version, driven offline by the harness against a fake",
        "model endpoint (`harness run --target <agent>`); each row is one situation, played through that agent's own",
        "file tools by the scenario `<agent>-captured/behaviour/<row>`. A cell is what the agent did (the tool result",
        "and the files afterwards), linked to its snapshot; each column's findings page (docs/agents/) adds the texts. Codex has no read tool (it reads through its shell), so",
        "the rows about reading are empty for it, and its edits are patches (`apply_patch`).",
        "",
        "| behaviour | situation | " + " | ".join(f"`{c.label}`" for c in cols) + " |",
        "|---|---|" + "---|" * len(cols),
    ]
    for behaviour in BEHAVIOURS:
        cells = []
        for column in cols:
            answer, relative = cell(snapshots, column, behaviour)
            cells.append(f"[{_md(answer)}]({link_prefix}{relative})" if relative else answer)
        lines.append(f"| {behaviour.label} | {_md(behaviour.question)} | " + " | ".join(cells) + " |")
    lines += ["", f"{len(BEHAVIOURS)} behaviours, {len(cols)} agents. Drift between two releases of one agent:",
              "`python -m harness.drivers.agents_doc --drift <old folder> <new folder>`.", ""]
    return "\n".join(lines)


def _said(snapshots: Path, relative: str) -> str:
    """Returns what the agent told the model in a snapshot's last call (error message or output), cut."""
    document = yaml.safe_load((snapshots / relative).read_text(encoding="utf-8")) or {}
    step, _ = _last_call_and_workspace(document)
    said = (step.get("error") or {}).get("message") if step.get("error") else step.get("output")
    text = str(said if said is not None else "")
    return text if len(text) <= 600 else text[:600] + f"\n… ({len(text) - 600:,} more characters)"


def findings_name(column: Column) -> str:
    """Returns the file name of a column's findings page."""
    return f"{column.folder}.md"


def render_findings(snapshots: Path, column: Column, link_prefix: str = "../../snapshots/") -> str:
    """Returns one agent's findings page: each behaviour, its answer, its scenario and snapshot, what was said."""
    lines = [f"# Findings: `{column.folder}`", "",
             "Generated by `python -m harness.drivers.agents_doc` (`make agents-doc`) from the snapshots; do not edit.",
             f"Each finding names the scenario (`scenarios/{column.profile}/behaviour/`) and the snapshot it comes from;",
             "the comparison with the other agents is [docs/agents.md](../agents.md).", ""]
    for behaviour in BEHAVIOURS:
        answer, relative = cell(snapshots, column, behaviour)
        lines.append(f"## {behaviour.label}")
        lines.append("")
        if relative is None:
            lines += [f"{behaviour.question}: not captured for this agent.", ""]
            continue
        lines += [f"{behaviour.question}: **{_md(answer)}** (scenario `{column.profile}/behaviour/{behaviour.slug}`, "
                  f"snapshot [{relative}]({link_prefix}{relative})). The tool result:", "", "```text"]
        lines += [_said(snapshots, relative).replace("```", "` ` `"), "```", ""]
    return "\n".join(lines)


def pages(snapshots: Path, page: Path) -> dict[Path, str]:
    """Returns every generated page: the comparison at ``page`` and one findings page per column beside it."""
    out = {page: render(snapshots)}
    for column in columns(snapshots):
        out[page.parent / "agents" / findings_name(column)] = render_findings(snapshots, column)
    return out


def drift(snapshots: Path, old: str, new: str) -> list[str]:
    """Returns one line per behaviour whose cell differs between the columns ``old`` and ``new``."""
    by_folder = {c.folder: c for c in columns(snapshots)}
    for name in (old, new):
        if name not in by_folder:
            raise ValueError(f"no behaviour snapshots in {snapshots / name}")
    changed = []
    for behaviour in BEHAVIOURS:
        before, _ = cell(snapshots, by_folder[old], behaviour)
        after, _ = cell(snapshots, by_folder[new], behaviour)
        if before != after:
            changed.append(f"{behaviour.label}: {before} -> {after}")
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.drivers.agents_doc", description=__doc__.splitlines()[0])
    parser.add_argument("--snapshots", type=Path, default=Path("snapshots"))
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--write", type=Path, metavar="FILE")
    group.add_argument("--check", type=Path, metavar="FILE")
    group.add_argument("--drift", nargs=2, metavar=("OLD", "NEW"))
    args = parser.parse_args(argv)
    if not args.snapshots.is_dir():
        print(f"error: {args.snapshots} is not a folder", file=sys.stderr)
        return 2
    if args.drift:
        try:
            lines = drift(args.snapshots, *args.drift)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print("\n".join(lines) if lines else "no cell changed")
        return 1 if lines else 0
    if args.write:
        for path, text in pages(args.snapshots, args.write).items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        return 0
    if args.check:
        stale = [str(path) for path, text in pages(args.snapshots, args.check).items()
                 if not path.is_file() or path.read_text(encoding="utf-8") != text]
        if stale:
            print(f"out of date: {', '.join(stale)}: run `make agents-doc`", file=sys.stderr)
            return 1
        return 0
    sys.stdout.write(render(args.snapshots))
    return 0


if __name__ == "__main__":
    sys.exit(main())

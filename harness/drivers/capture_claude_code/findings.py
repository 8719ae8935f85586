"""The findings report of a claude-code capture: seed 001's open questions answered, its contradictions listed.

Usage::

    python -m harness.drivers.capture_claude_code.findings REPORT.json [REPORT.json ...] [--markdown FILE] [--snapshots DIR]

The reports are ``harness run --json`` files of the claude-code target (``make capture-claude-code``
writes them to ``.harness/<target slug>.json``); the first is the main run (working directory = the
workspace), the others are shown beside it. Every quotation is the observation itself, masked as
snapshots are (harness/record/snapshot/), so the report is the same on every capture that saw the same
behaviour; each points at its snapshot file.

What is written by hand here is only the *reading*: which scenarios answer which of the ten open
questions, a one-line answer for each, and which contradictions belong to which theme. Each answer
carries the words its evidence must show; if a later capture no longer shows them, the answer is
flagged instead of silently going stale. Contradictions themselves are not curated: every ``fail``
of a seed scenario is listed with what was expected and what was observed.

Where this module's concern ends: verdicts are the runner's, masks are harness/record/snapshot/'s.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.record import snapshot as snap
from harness.targets.claude_code import SNAPSHOT_MASKS

CAPTURED_TAG = "captured"
OQ = "claude-code/open-questions/"
CAP = "claude-code-captured/"
VERDICTS = ("pass", "fail", "recorded", "skip", "error")
QUOTE_LIMIT = 600


@dataclass(frozen=True)
class Question:
    """One of seed 001's ten open questions, the scenarios that answer it, and the answer they gave."""

    number: int
    text: str
    scenarios: tuple[str, ...]
    answer: str
    evidence: tuple[str, ...]  # substrings the quoted observations must contain for the answer to stand


QUESTIONS: tuple[Question, ...] = (
    Question(1, "Exact error messages", (
        OQ + "q01-message-read-not-found", OQ + "q01-message-edit-no-match", OQ + "q01-message-edit-multiple-matches",
        OQ + "q01-message-write-modified", OQ + "edit-old-string-equals-new-string", OQ + "q01-message-relative-path",
        CAP + "write/unread-outside-cwd-rejected", CAP + "edit/unread-outside-cwd-rejected"),
        "Captured word for word below; only \"File has not been read yet. Read it first before writing to it.\" is "
        "the seed's (and Edit says \"writing\" too); errors come wrapped in <tool_use_error>…</tool_use_error> except "
        "a few bare ones (file does not exist, EISDIR, size limit, images, symlinks); relative paths are not an error.",
        ("File does not exist. Note: your current working directory is", "String to replace not found in file.",
         "Found 2 matches of the string to replace", "File has been modified since read",
         "No changes to make: old_string and new_string are exactly the same.",
         "File has not been read yet. Read it first before writing to it.")),
    Question(2, "Line number formatting width", (OQ + "q02-line-number-width-past-999999",
                                                 "claude-code/read/line-number-width-six-digits"),
             "No fixed width and no padding: the number, a TAB, the line (`999999\\tx`, `1000000\\tx`).",
             ("999999\\tx\\n1000000\\tx",)),
    Question(3, "Binary file handling", (OQ + "q03-binary-file-read", CAP + "read/nul-bytes-in-text-file-noted",
                                         CAP + "read/png-as-image-block"),
             "Refused by type (`This tool cannot read binary files. The file appears to be a binary .bin file. …`); a "
             "text file with NUL bytes is shown with a note; images come back as base64 image blocks.",
             ("This tool cannot read binary files.", "[This file has NUL bytes", '"type": "image"')),
    Question(4, "Directory creation", (OQ + "q04-write-creates-parent-directories",),
             "Write creates the missing parent directories (`File created successfully at: …/new/deeper/file.txt`).",
             ("new/deeper/file.txt", "file `new/deeper/file.txt`")),
    Question(5, "Symlink handling", (OQ + "q05-read-follows-symlink", OQ + "q05-symlink-read-set-path",
                                     CAP + "write/symlink-refused"),
             "Read follows the link; the read set holds the path as given (editing the target's own path afterwards "
             "runs as an unread edit, without the file-state suffix); Write refuses to write through a link.",
             ("content behind the link", "real/target.txt has been updated successfully.`",
              "it is a symbolic link")),
    Question(6, "Encoding", (OQ + "q06-read-latin-1", OQ + "q06-read-utf-16", OQ + "q06-edit-latin-1-file"),
             "UTF-8; UTF-16 with a byte-order mark is decoded (and written back as UTF-16); other bytes show as "
             "U+FFFD with a not-valid-UTF-8 note, and Edit and Write refuse such a file, writing nothing.",
             ("caf\ufffd", "hello utf-16", "File is not valid UTF-8")),
    Question(7, "Line ending normalization", (OQ + "q07-read-crlf", OQ + "q07-write-crlf-content",
                                              OQ + "q07-write-lf-over-crlf-file", OQ + "q07-edit-lf-old-string-on-crlf-file"),
             "Read shows CRLF as LF; Write writes the content's endings exactly (CRLF kept, LF over a CRLF file "
             "stays LF); Edit matches an LF old_string on CRLF lines and keeps the file's CRLF.",
             ("1\\tfirst\\n2\\tsecond", "one\\r\\ntwo\\r\\n", "new one\\nnew two\\n", "1st\\r\\n2nd\\r\\nthird\\r\\n")),
    Question(8, "Empty old_string", (OQ + "q08-edit-empty-old-string-existing-file",
                                     OQ + "q08-edit-empty-old-string-missing-file",
                                     CAP + "edit/empty-old-string-fills-empty-file"),
             "Creates a missing file with new_string, fills an empty file, and refuses a file with content: "
             "`Cannot create new file - file already exists.`",
             ("Cannot create new file - file already exists.", "created-by-edit.txt has been updated successfully.",
              "empty.txt has been updated successfully.")),
    Question(9, "Tilde expansion", (OQ + "q09-tilde-read",),
             "`~` is expanded to the CLI's HOME; outside the working directory, -p mode answers with a permission "
             "request (recorded as error code `permission-request`), not with \"not absolute\".",
             ("Claude requested permissions to read from ${cli-home}/file-tool-conformance-tilde-probe-missing.txt",)),
    Question(10, "Trailing newline", (OQ + "q10-write-no-trailing-newline",),
             "Write writes the content exactly; no newline is added.",
             ('"last line without newline"',)),
)

#: Contradiction themes: (title, what the real CLI does, scenario ids). A failing seed scenario in no
#: theme is listed under "other" so that nothing is lost when the CLI changes.
THEMES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("Line-number format", "`N\\tline`: a TAB, no padding, no arrow; the empty line after a final newline is numbered.",
     ("read/arrow-not-tab", "read/format-three-line-example", "read/line-number-width-six",
      "read/line-number-width-six-digits", "read/tab-indented-content-after-arrow", "read/default-offset-first-line",
      "read/limit-from-start", "read/offset-is-one-based", "read/offset-reads-to-end", "read/offset-past-default-window",
      "session/read-changes-nothing", "read/notebook-cells-with-outputs", "paths/read-absolute-accepted",
      "session/partial-read-counts-as-read", "session/reads-fetch-current-disk-content")),
    ("Limits", "No 2,000-line or 2,000-character cut at these sizes; big files are cut at a 25,000-token cap, "
     "announced by a system note after the result (claude-code-captured/read/token-cap-partial-view-note), or "
     "refused over 256 KB.", ("read/default-limit-2000-lines", "read/long-line-truncated-at-2000",
                     "read/truncation-counts-characters", "read/line-of-2000-kept-whole")),
    ("Relative paths", "Accepted by all three tools, resolved against the working directory.",
     ("paths/read-relative-bare-rejected", "paths/read-relative-dot-slash-rejected", "paths/write-relative-bare-rejected",
      "paths/write-relative-dot-slash-rejected", "paths/edit-relative-bare-rejected", "paths/edit-relative-dot-slash-rejected",
      "open-questions/q01-message-relative-path")),
    ("Read-before-write", "Not enforced where the write is already allowed (acceptEdits, file inside the working "
     "directory); enforced outside it, with \"writing\" for Edit too.",
     ("write/existing-unread-rejected", "edit/unread-rejected", "session/read-set-is-per-file",
      "open-questions/write-created-file-then-edit")),
    ("Modification checks", "Content, not mtime: an mtime change alone is accepted; Edit applies over another "
     "process's change when old_string still matches once (with a note); otherwise \"File has been modified since "
     "read, …\".", ("write/touched-since-read-rejected", "edit/touched-since-read-rejected",
                    "edit/modified-since-read-rejected", "edit/appended-since-read-rejected",
                    "write/modified-since-read-rejected", "session/modification-after-write-detected",
                    "session/metadata-change-is-not-modification", "session/reread-after-modification-allows-edit")),
    ("Quote handling", "Straight and curly quotes match each other both ways; on a curly file a straight new_string "
     "is written curly, on a straight file a curly new_string is written as sent "
     "(claude-code-captured/edit/curly-quotes-on-straight-file).",
     ("edit/straight-quotes-do-not-match-curly", "edit/curly-quotes-do-not-match-straight")),
    ("Error texts", "The seed's texts differ from the CLI's (see question 1).",
     ("read/file-not-found", "edit/missing-file-rejected", "edit/zero-matches-rejected", "read/empty-file-warning")),
)


# -- loading ------------------------------------------------------------------------------------

def load(path: Path) -> dict[str, Any]:
    """Returns a ``harness run --json`` report."""
    return json.loads(Path(path).read_text("utf-8"))


def slug_of(report: dict[str, Any]) -> str:
    """Returns the snapshot folder name of the run (e.g. ``claude-code-2.1.330-acceptEdits-outside``)."""
    from harness.run import assemble
    target: Any = assemble.target(report["target"]["spec"])
    target.version = report["target"].get("version") or ""  # the slug names the version the run reported
    return str(target.slug)


def is_captured(result: dict[str, Any]) -> bool:
    """Returns True for a scenario taken from a capture of the real CLI (not from the seed)."""
    return result["id"].startswith(CAP) or str(result.get("source", "")).startswith("captured:")


# -- quoting ------------------------------------------------------------------------------------

def _masked(value: Any) -> str:
    if isinstance(value, str):
        return snap.mask_text(value, SNAPSHOT_MASKS)
    return snap.mask_text(json.dumps(value, ensure_ascii=False, sort_keys=True), SNAPSHOT_MASKS)


def _short(text: str, limit: int = QUOTE_LIMIT) -> str:
    return text if len(text) <= limit else text[:limit] + f"… ({len(text)} characters)"


def _code(text: str) -> str:
    """Returns ``text`` as inline Markdown code, its control characters escaped the JSON way."""
    shown = json.dumps(text, ensure_ascii=False)[1:-1].replace("\\\"", "\"")
    fence = "``" if "`" in shown else "`"
    pad = " " if shown.startswith("`") or shown.endswith("`") else ""
    return f"{fence}{pad}{shown}{pad}{fence}"


def _args(args: dict[str, Any]) -> str:
    parts = []
    for key, value in args.items():
        shown = _short(_masked(value), 60) if isinstance(value, str) else value
        parts.append(f"{key}={json.dumps(shown, ensure_ascii=False)}")
    return ", ".join(parts)


def call_lines(result: dict[str, Any]) -> list[str]:
    """Returns one line per call of a result: the call, and its output or error (masked, quoted)."""
    lines = []
    for step in result.get("steps", ()):
        if "tool" not in step:
            lines.append(f"(action: {step.get('action')} {step.get('path', '')})")
            continue
        if step.get("error") is not None:
            error = step["error"]
            code = f" [code {error.get('code')}]" if isinstance(error, dict) and error.get("code") else ""
            message = error.get("message") if isinstance(error, dict) else error
            observed = f"error{code}: {_code(_short(_masked(message)))}"
        else:
            observed = f"output: {_code(_short(_masked(step.get('output'))))}"
        lines.append(f"{step['tool']}({_args(step.get('args', {}))}) → {observed}")
    return lines


def file_lines(result: dict[str, Any]) -> list[str]:
    """Returns the files of the final workspace: text when it is small UTF-8, else size and SHA-256."""
    lines = []
    for rel, entry in sorted((result.get("workspace") or {}).items()):
        if entry.get("type") != "file":
            continue
        shown = _code(_masked(entry["text"])) if "text" in entry else f"{entry.get('size')} bytes, sha256 {entry.get('sha256', '')[:16]}…"
        lines.append(f"file `{snap.mask_text(rel, SNAPSHOT_MASKS)}` afterwards: {shown}")
    return lines


# -- the report ---------------------------------------------------------------------------------

def counts(results: Iterable[dict[str, Any]]) -> dict[str, int]:
    """Returns the number of results of each verdict (every verdict present) and the total."""
    tally = Counter(result["verdict"] for result in results)
    out = {verdict: tally.get(verdict, 0) for verdict in VERDICTS}
    out["total"] = sum(tally.values())
    return out


def _table(rows: list[tuple[str, dict[str, int]]]) -> list[str]:
    lines = ["| run | scenarios | " + " | ".join(VERDICTS) + " | total |", "|---|---|" + "---:|" * (len(VERDICTS) + 1)]
    for label, tally in rows:
        kind, _, run = label.partition("|")
        lines.append(f"| {run} | {kind} | " + " | ".join(str(tally[v]) for v in VERDICTS) + f" | {tally['total']} |")
    return lines


def _failures(result: dict[str, Any]) -> list[str]:
    lines = []
    for number, step in enumerate(result.get("steps", ()), start=1):
        for failure in step.get("failures") or ():
            where = f"step {number} ({step.get('tool') or step.get('action')}) {failure.get('path', '')}".rstrip()
            lines.append(f"  - {where}: expected {_code(_short(_masked(failure.get('expected')), 300))}; "
                         f"observed {_code(_short(_masked(failure.get('observed')), 300))}")
    for failure in (result.get("then") or {}).get("failures") or ():
        lines.append(f"  - {failure.get('path', 'then')}: expected {_code(_short(_masked(failure.get('expected')), 300))}; "
                     f"observed {_code(_short(_masked(failure.get('observed')), 300))}")
    if not lines and result.get("reason"):
        lines.append(f"  - {_code(_short(_masked(result['reason']), 300))}")
    return lines


def markdown(reports: Sequence[dict[str, Any]], snapshots: Path = Path("snapshots")) -> str:
    """Returns the findings report of the runs in ``reports`` (the first is the main run)."""
    main = reports[0]
    slug = slug_of(main)  # also imports the claude-code target, which registers the CLI's snapshot masks
    by_id = {result["id"]: result for result in main["results"]}
    runs = [(slug_of(report), {r["id"]: r for r in report["results"]}) for report in reports]

    def observed(scenario_id: str) -> tuple[str, dict[str, Any] | None]:
        """Returns the first run (main first) where the scenario ran, and its result there."""
        for run, results in runs:
            result = results.get(scenario_id)
            if result is not None and result["verdict"] != "skip":
                return run, result
        return slug, by_id.get(scenario_id)

    version = main["target"].get("version") or "?"
    seed = [r for r in main["results"] if not is_captured(r)]
    captured = [r for r in main["results"] if is_captured(r)]
    # Where the cited scenarios' snapshots are: tests/test_findings_claims.py checks every citation.
    folders = ",".join(dict.fromkeys(slug_of(report) for report in reports))
    out = [f"# Claude Code {version} against seed 001: findings",
           f"<!-- claims: snapshots={folders} base=claude-code/ -->", "",
           "Generated by `make capture-claude-code` (harness/drivers/capture_claude_code/findings.py) from the capture runs of the claude-code",
           f"target; the observations are the snapshots under `{snapshots.as_posix()}/<run>/`. Main run: `{slug}` "
           "(permission mode acceptEdits, working directory = the workspace). Scenarios from the seed keep the seed's "
           "expectations: a `fail` is a place where the real CLI contradicts seed 001. Masked in every quotation: the "
           "workspace (`${workspace}`), the CLI's scratch HOME (`${cli-home}`) and working directory (`${cli-cwd}`).",
           "", "## Agreement with the seed", ""]
    rows = []
    for report in reports:
        run = slug_of(report)
        rows.append((f"seed 001|`{run}`", counts(r for r in report["results"] if not is_captured(r))))
        rows.append((f"captured|`{run}`", counts(r for r in report["results"] if is_captured(r))))
    out += _table(rows)
    tally = counts(seed)
    out += ["", f"In the main run real Claude Code **agrees with the seed in {tally['pass']} scenarios and disagrees in "
            f"{tally['fail']}**; {tally['recorded']} open questions were recorded, {tally['skip']} skipped, "
            f"{tally['error']} ended in error. Captured scenarios pin what the CLI did, so they pass on the run they "
            "were taken from; run under other conditions they are skipped.", ""]
    skips = sorted({(r["reason"], r["id"], r["verdict"]) for r in main["results"] if r["verdict"] in ("skip", "error")
                    and not r["reason"].startswith("captured with")})
    if skips:
        out += ["Skipped or in error in the main run:", ""]
        # The target's spec names the CLI by its absolute path: the checkout's folder is masked.
        here = str(Path.cwd().resolve())
        out += [f"- `{scenario_id}` ({'skipped' if verdict == 'skip' else 'error verdict'}): "
                f"{reason.replace(here + '/', '${checkout}/')}" for reason, scenario_id, verdict in skips]
        out.append("")

    out += ["## The ten open questions of seed 001", ""]
    for question in QUESTIONS:
        quotes: list[str] = []
        for scenario_id in question.scenarios:
            run, result = observed(scenario_id)
            if result is None:
                quotes.append(f"- `{scenario_id}`: not in this run")
                continue
            where = f"{snapshots.as_posix()}/{run}/{scenario_id}.yaml"
            label = f"{result['verdict']}" + ("" if run == slug else f" in `{run}`")
            quotes.append(f"- `{scenario_id}` ({label}; [{Path(where).name}]({'../' + where})):")
            quotes += [f"  - {line}" for line in call_lines(result) + (file_lines(result) if question.number in (4, 7, 10) else [])]
        seen = "\n".join(quotes)
        missing = [e for e in question.evidence if e not in seen]
        flag = (" **(the observations below no longer show " + ", ".join(_code(m) for m in missing) +
                ": re-read them)**") if missing else ""
        out += [f"### {question.number}. {question.text}", "", f"**Answer:** {question.answer}{flag}", "", *quotes, ""]

    out += ["## Where the real CLI contradicts seed 001", "",
            "Every seed scenario that failed in the main run, by theme, then scenario by scenario with what the seed "
            "expected and what the CLI did.", ""]
    failing = [r for r in seed if r["verdict"] == "fail"]
    placed: set[str] = set()
    for title, summary, ids in THEMES:
        members = [r["id"] for r in failing if r["id"].split("/", 1)[1] in ids]
        placed.update(members)
        if members:
            out += [f"- **{title}** — {summary} " + ", ".join(f"`{m.split('/', 1)[1]}`" for m in members)]
    others = [r["id"] for r in failing if r["id"] not in placed]
    if others:
        out += ["- **Other** — " + ", ".join(f"`{m.split('/', 1)[1]}`" for m in others)]
    out.append("")
    for result in failing:
        out += [f"### `{result['id']}`", "", f"{result['title']} — source: {result.get('source', '')}", ""]
        out += _failures(result)
        out.append("")

    out += ["## What the seed never mentions", "",
            "Pinned by the scenarios under `scenarios/claude-code-captured/` (tag `captured`; source "
            "`captured: claude-code <version> (<mode>, cwd=<...>)`), each with the observation it was taken from:", ""]
    for result in captured:
        run, there = observed(result["id"])
        label = (there or result)["verdict"] + ("" if run == slug else f" in `{run}`")
        out.append(f"- `{result['id'].removeprefix(CAP)}` ({label}): {result['title']}")
    out.append("")
    return "\n".join(out)


def write(path: Path, reports: Sequence[dict[str, Any]], snapshots: Path = Path("snapshots")) -> None:
    """Writes the findings report to ``path``."""
    from harness.util.fileio import write_replacing
    write_replacing(path, markdown(reports, snapshots))


def main(argv: Sequence[str] | None = None) -> int:
    """Writes (or prints) the findings report of the given JSON reports."""
    parser = argparse.ArgumentParser(prog="python -m harness.drivers.capture_claude_code.findings", description=__doc__.split("\n")[0])
    parser.add_argument("reports", nargs="+", type=Path, help="harness run --json files of claude-code runs, main run first")
    parser.add_argument("--markdown", type=Path, default=None, help="write the report here (default: print it)")
    parser.add_argument("--snapshots", type=Path, default=Path("snapshots"), help="the snapshot root the report cites")
    args = parser.parse_args(argv)
    reports = [load(path) for path in args.reports]
    if args.markdown:
        write(args.markdown, reports, args.snapshots)
    else:
        sys.stdout.write(markdown(reports, args.snapshots))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

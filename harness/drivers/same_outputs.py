"""Whether two checkouts give the same verdicts, reports and snapshots on the whole catalog.

``python -m harness.drivers.same_outputs OUT [--repo DIR]`` runs ``harness run`` from the checkout
DIR (default: this one, with its own ``.venv``) in several set-ups, each in a new process:

serial        the reference, ``--jobs 1``
jobs-2        the reference, ``--jobs 2``
targets       the reference, ``cmd:`` on the reference's adapter and ``mcp:`` on its server,
              ``--jobs 2`` (several targets in one invocation)
mcp           ``mcp:python -m reference_impl.mcp_server``, ``--jobs 1``

and writes into OUT/<set-up>/ the terminal output (stdout, stderr, exit status), the JSON, JUnit,
Markdown and HTML reports, and the snapshots written by ``--snapshot-update``, with only what differs
between any two runs of the same code masked: timings, the start time and the workspaces'
temporary names. ``--compare A B`` then says which files differ between two such folders (exit 1
if any). Taken before and after a change meant to keep the results as they were, the two folders
must be the same byte for byte.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

SETUPS: dict[str, list[str]] = {
    "serial": ["--jobs", "1"],
    "jobs-2": ["--jobs", "2"],
    "targets": ["--jobs", "2", "--target", "reference", "--target", "cmd:{python} -m reference_impl.serve",
                "--target", "mcp:{python} -m reference_impl.mcp_server"],
    "mcp": ["--jobs", "1", "--target", "mcp:{python} -m reference_impl.mcp_server"],
}

#: What differs between two runs of the same code, and what it is replaced by.
_VOLATILE = [
    (re.compile(r"/[^\s'\"<>]*?harness-[A-Za-z0-9_]+/(ws(-[0-9]+)?)?"), "<base>/"),  # the workspaces' folder
    (re.compile(r'"(seconds|started)": *[^,}\n]+'), r'"\1": <t>'),  # JSON timings
    (re.compile(r'\b(time|timestamp|seconds|started)="[^"]*"'), r'\1="<t>"'),  # JUnit timings
    (re.compile(r"\b[0-9]+(\.[0-9]+)? ?(s|ms|us)\b"), "<t>"),  # "in 3.35s", "0.41 ms"
    (re.compile(r"\b20[0-9]{2}-[0-9]{2}-[0-9]{2}[T ][0-9:.]+(Z|[+-][0-9:]+| UTC)?"), "<date>"),
    (re.compile(r"(│|\||<td[^>]*>) *[0-9]+\.[0-9]+ *(│|\||</td>)"), r"\1 <t> \2"),  # a table's seconds
    (re.compile(r"─{3,}|━{3,}|-{3,}"), "---"),  # a rule as wide as the widest timing
    (re.compile(r" +$", re.M), ""),  # padding as wide as the widest timing
    (re.compile(r" {2,}(?=[┃│])"), " "),  # a table's column as wide as its widest cell (a target's path)
]


def masked(text: str, repo: str = "", out: str = "") -> str:
    if repo:
        text = text.replace(repo, "<repo>")
    if out:
        text = text.replace(out, "<out>")
    for pattern, replacement in _VOLATILE:
        text = pattern.sub(replacement, text)
    return text


def capture(repo: Path, out: Path, setups: list[str]) -> None:
    python = str(repo / ".venv" / "bin" / "python")
    env = {k: v for k, v in os.environ.items() if k != "HARNESS_SNAPSHOTS"}
    env["COLUMNS"] = "200"
    for name in setups:
        folder = out / name
        shutil.rmtree(folder, ignore_errors=True)
        (folder / "snapshots").mkdir(parents=True)
        argv = [python, "-m", "harness", "run", "--color", "never",
                *[arg.format(python=python) for arg in SETUPS[name]],
                "--json", str(folder / "report.json"), "--junit", str(folder / "report.xml"),
                "--markdown", str(folder / "report.md"), "--html", str(folder / "report.html")]
        compared = subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True)
        (folder / "terminal.txt").write_text(
            f"exit {compared.returncode}\n--- stdout\n{compared.stdout}\n--- stderr\n{compared.stderr}", "utf-8")
        updated = subprocess.run([*argv[:4], *argv[4:4 + 2 + len(SETUPS[name])], "-q", "--snapshot-update",
                                  "--snapshots", str(folder / "snapshots")],
                                 cwd=repo, env=env, capture_output=True, text=True)
        (folder / "update.txt").write_text(f"exit {updated.returncode}\n{updated.stdout}\n{updated.stderr}", "utf-8")
        for path in folder.rglob("*"):
            if path.is_file():
                path.write_text(masked(path.read_text("utf-8", "replace"), str(repo), str(folder)), "utf-8")
        print(f"{name}: exit {compared.returncode}, {sum(1 for _ in (folder / 'snapshots').rglob('*.yaml'))} snapshots")


def compare(a: Path, b: Path) -> list[str]:
    """Returns the files (relative) that are not the same in both folders."""
    names = {p.relative_to(a) for p in a.rglob("*") if p.is_file()} | {p.relative_to(b) for p in b.rglob("*") if p.is_file()}
    return sorted(str(n) for n in names
                  if not ((a / n).is_file() and (b / n).is_file() and filecmp.cmp(a / n, b / n, shallow=False)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.drivers.same_outputs", description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, nargs="?", help="the folder to write the outputs into")
    parser.add_argument("--repo", type=Path, default=Path.cwd(), help="the checkout to run (its .venv)")
    parser.add_argument("--setup", action="append", choices=list(SETUPS), help="only this set-up (repeatable)")
    parser.add_argument("--compare", type=Path, nargs=2, metavar=("A", "B"), help="compare two folders of outputs")
    args = parser.parse_args(argv)
    if args.compare:
        differ = compare(*args.compare)
        total = sum(1 for p in args.compare[0].rglob("*") if p.is_file())
        print(f"{total} files compared, {len(differ)} differ" + "".join(f"\n  {d}" for d in differ))
        return 1 if differ else 0
    if args.out is None:
        parser.error("give OUT or --compare A B")
    capture(args.repo.resolve(), args.out.resolve(), args.setup or list(SETUPS))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Example: the reference over the cmd: protocol with realistic bugs planted, chosen on the command line.

Usage: ``python tests/adapters/planted_cmd.py [--version V] BUG [BUG ...]``, each BUG one of:

- ``tab-numbers``: Read numbers its lines with a tab instead of the arrow (``     1\\tline``);
- ``no-trailing-newline``: Write drops a final newline of the content it writes;
- ``flaky-numbers``: Read numbers with the arrow and with a tab by turns (one Read call in two);
- ``replace-first``: Edit ignores ``replace_all``: a string found several times is refused as not unique.

Everything else is the reference (``python -m reference_impl.serve``), so each bug shows as the
failures it causes and nothing more: a broken candidate for the Action's end-to-end test and for
the failure groups of the reports. It calls itself ``planted``, of version V (default: the
reference's version).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout's reference_impl

from reference_impl import claude_code, serve  # noqa: E402

BUGS = ("tab-numbers", "no-trailing-newline", "replace-first", "flaky-numbers")


def plant(bugs: list[str]) -> None:
    """Replaces the reference's code with the chosen bugs."""
    if "tab-numbers" in bugs:
        claude_code.ARROW = "\t"
    if "flaky-numbers" in bugs:
        read, calls = claude_code.Session.read, [0]

        def by_turns(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            calls[0] += 1
            claude_code.ARROW = "\t" if calls[0] % 2 == 0 else "\u2192"
            return read(self, *args, **kwargs)

        claude_code.Session.read = by_turns  # type: ignore[method-assign]
    if "no-trailing-newline" in bugs:
        write = claude_code.Session.write

        def dropping_write(self, file_path, content, *args, **kwargs):  # type: ignore[no-untyped-def]
            if isinstance(content, str) and content.endswith("\n"):
                content = content[:-1]
            return write(self, file_path, content, *args, **kwargs)

        claude_code.Session.write = dropping_write  # type: ignore[method-assign]
    if "replace-first" in bugs:
        edit = claude_code.Session.edit

        def first_only(self, file_path, old_string, new_string, replace_all=False):  # type: ignore[no-untyped-def]
            if replace_all is True:
                with open(file_path, encoding="utf-8") as handle:
                    if handle.read().count(old_string) > 1:
                        return edit(self, file_path, old_string, new_string, False)  # rejected: not unique
            return edit(self, file_path, old_string, new_string, replace_all)

        claude_code.Session.edit = first_only  # type: ignore[method-assign]


if __name__ == "__main__":
    chosen = sys.argv[1:]
    serve.NAME = "planted"
    if chosen[:1] == ["--version"] and len(chosen) > 1:
        serve.__version__, chosen = chosen[1], chosen[2:]
    unknown = sorted(set(chosen) - set(BUGS))
    if unknown:
        sys.exit(f"planted_cmd.py: unknown bug(s) {', '.join(unknown)}; choose from {', '.join(BUGS)}")
    plant(chosen)
    serve.main()

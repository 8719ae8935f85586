"""Properties of the claude-code reference (seed 001), checked with hypothesis.

Example counts: Read's numbered lines give the file back, 200 examples; offset and limit pick
that window of lines, 200; Edit with replace_all changes only the occurrences, 200, and leaves
none behind, 200; an Edit without replace_all replaces exactly one match or leaves the bytes
alone, 150.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reference_impl import claude_code as cc

# Each example's tree in pytest's temporary folder (tests/reference/conftest.py).
pytestmark = pytest.mark.usefixtures("examples_in_tmp")

# Line content: no line breaks; tabs, arrows, digits and spaces stress the prefix. A final "\r"
# would pair with the next "\n" into a CRLF break, so "\r" is left out of line content; NUL makes
# the file binary and a leading U+FEFF is a byte-order mark, so they are left out too.
LINE = st.text(st.characters(blacklist_characters="\n\r\x00\ufeff", blacklist_categories=("Cs",)), max_size=40)
LINES = st.lists(LINE, min_size=1, max_size=30)
PREFIX = re.compile(r"^ *(\d+)\u2192")

# Small alphabets make old_string occur often, next to itself and inside new_string's neighbours.
ALPHABET = "ab\n\t "
TEXT = st.text(alphabet=ALPHABET, max_size=60)
NEEDLE = st.text(alphabet=ALPHABET, min_size=1, max_size=4)

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])


def with_file(data: bytes, action):
    """Runs ``action(session, path)`` on a fresh workspace holding ``data``; returns its result and the bytes after."""
    root = tempfile.mkdtemp(prefix="cc-prop-")
    try:
        path = str(Path(root) / "f.txt")
        Path(path).write_bytes(data)
        result = action(cc.Session(root, {}), path)
        return result, Path(path).read_bytes()
    finally:
        shutil.rmtree(root)


def strip_prefixes(shown: str) -> tuple[list[int], list[str]]:
    """Returns the line numbers and the contents of Read's numbered output."""
    numbers, contents = [], []
    for line in shown.split("\n"):
        match = PREFIX.match(line)
        assert match, line
        numbers.append(int(match.group(1)))
        contents.append(line[match.end():])
    return numbers, contents


@settings(max_examples=200, **SETTINGS)
@given(lines=LINES, final_eol=st.booleans())
def test_read_without_prefixes_gives_the_lines_back(lines, final_eol):
    text = "\n".join(lines) + ("\n" if final_eol else "")
    if not final_eol and lines[-1] == "":
        lines = lines[:-1]  # "a\n" + "" is "a\n": one line with its newline, not two
    if text == "":
        lines, text = ["x"], "x"  # an empty file gives the warning, not lines
    result, _ = with_file(text.encode("utf-8"), lambda s, p: s.call("Read", {"file_path": p}))
    numbers, contents = strip_prefixes(result["output"])
    assert numbers == list(range(1, len(lines) + 1))
    assert contents == [line[: cc.MAX_LINE_LENGTH] for line in lines]


@settings(max_examples=200, **SETTINGS)
@given(lines=LINES, offset=st.integers(1, 35), limit=st.integers(1, 35))
def test_offset_and_limit_pick_that_window(lines, offset, limit):
    text = "\n".join(lines) + "\n"
    args = {"offset": offset, "limit": limit}
    result, _ = with_file(text.encode("utf-8"), lambda s, p: s.call("Read", {"file_path": p, **args}))
    window = lines[offset - 1 : offset - 1 + limit]
    if not window:
        assert "shorter than the provided offset" in result["output"]
        return
    numbers, contents = strip_prefixes(result["output"])
    assert numbers == list(range(offset, offset + len(window)))
    assert contents == window


def replace_all(text: str, old: str, new: str):
    """Reads a file holding ``text``, edits it with replace_all; returns the result and the text after."""
    def edit(session, path):
        session.call("Read", {"file_path": path})
        return session.call("Edit", {"file_path": path, "old_string": old, "new_string": new, "replace_all": True})

    result, after = with_file(text.encode("utf-8"), edit)
    return result, after.decode("utf-8")


@settings(max_examples=200, **SETTINGS)
@given(text=TEXT, old=NEEDLE, new=st.text(alphabet=ALPHABET, max_size=4))
def test_replace_all_changes_only_the_occurrences(text, old, new):
    result, after = replace_all(text, old, new)
    if old not in text or old == new:
        assert "error" in result and after == text
    else:
        # The text between occurrences is untouched: rebuilt here from occurrences found by hand
        # (leftmost, non-overlapping), not by the str methods the reference itself uses.
        expected, start = [], 0
        for at in _occurrences(text, old):
            expected += [text[start:at], new]
            start = at + len(old)
        assert "output" in result and after == "".join(expected) + text[start:]


def _occurrences(text: str, old: str) -> list[int]:
    """Returns where ``old`` occurs in ``text``, scanning left to right, occurrences not overlapping."""
    found, index = [], 0
    while index <= len(text) - len(old):
        if text[index:index + len(old)] == old:
            found.append(index)
            index += len(old)
        else:
            index += 1
    return found


# old_string and new_string from disjoint alphabets, new_string never empty: a replacement can
# then neither contain old_string nor join two pieces of text into a new occurrence.
OLD_CHARS, NEW_CHARS = "ab\n", "XY\t "


@settings(max_examples=200, **SETTINGS)
@given(
    text=st.text(alphabet=OLD_CHARS + NEW_CHARS, max_size=60),
    old=st.text(alphabet=OLD_CHARS, min_size=1, max_size=4),
    new=st.text(alphabet=NEW_CHARS, min_size=1, max_size=4),
)
def test_replace_all_leaves_no_occurrence(text, old, new):
    result, after = replace_all(text, old, new)
    if old in text:
        assert "output" in result
    assert old not in after


@settings(max_examples=150, **SETTINGS)
@given(text=TEXT, old=NEEDLE, new=st.text(alphabet=ALPHABET, max_size=4))
def test_a_failed_edit_leaves_the_bytes_alone(text, old, new):
    def edit(session, path):
        session.call("Read", {"file_path": path})
        return session.call("Edit", {"file_path": path, "old_string": old, "new_string": new})

    result, after = with_file(text.encode("utf-8"), edit)
    count = text.count(old)
    if count == 1 and old != new:
        assert after.decode("utf-8") == text.replace(old, new, 1)
    else:
        assert "error" in result and after == text.encode("utf-8")

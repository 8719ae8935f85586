"""Properties of the gemini-safe-patch reference (seed 004), checked with hypothesis.

Example counts: the two patch round-trips run 150 examples each, the wrong-hash property 100,
the version state machine 60 runs of up to 25 steps.
"""

from __future__ import annotations

import difflib
import hashlib
import re
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from reference_impl import gemini_safe_patch as gsp

# Each example's tree in pytest's temporary folder (tests/reference/conftest.py).
pytestmark = pytest.mark.usefixtures("examples_in_tmp")

# Lines drawn from a small alphabet so that A and B share lines and diffs have real context;
# "\r" and a leading "-", "+", " " or "@" stress the diff parser.
LINE_TEXT = st.text(alphabet="ab -+@\r\t", max_size=4)
FILE_LINES = st.lists(LINE_TEXT, max_size=12)


def file_text(lines: list[str], final_eol: bool) -> str:
    """Joins lines with LF, with or without an EOL after the last one."""
    text = "\n".join(lines)
    return text + "\n" if lines and final_eol else text


TEXTS = st.builds(file_text, FILE_LINES, st.booleans())


@st.composite
def edits(draw: st.DrawFn, unique: bool = False) -> tuple[str, str]:
    """An original A and an edited B that keeps some of A's lines, so hunks carry real context.

    With ``unique`` A's lines are all different: a hunk's context then fits in exactly one place,
    which is what makes "the header was shifted, the result is still B" a sound expectation (with
    repeated lines, a shifted hunk may rightly land on another copy of its context).
    """
    a_lines = draw(st.lists(LINE_TEXT, max_size=12, unique=unique))
    keep = st.sampled_from(a_lines) if a_lines else LINE_TEXT
    b_lines = draw(st.lists(st.one_of(keep, LINE_TEXT), max_size=12))
    return file_text(a_lines, draw(st.booleans())), file_text(b_lines, draw(st.booleans()))


def make_diff(a: str, b: str, context: int) -> str:
    """A unified diff from ``a`` to ``b`` as difflib writes it, plus the no-EOL markers it omits."""
    out = []
    for line in difflib.unified_diff(
        gsp.split_lines(a), gsp.split_lines(b), "a/f.txt", "b/f.txt", n=context
    ):
        out.append(line if line.endswith("\n") else line + "\n" + gsp.NO_NEWLINE_MARKER)
    return "".join(out)


def shift_headers(diff: str, offset: int) -> str:
    """Moves every hunk header's start lines by ``offset`` (not below 0), leaving the counts."""

    def move(match: re.Match) -> str:
        old, old_len, new, new_len = match.groups()
        old_len = f",{old_len}" if old_len is not None else ""
        new_len = f",{new_len}" if new_len is not None else ""
        return (
            f"@@ -{max(int(old) + offset, 0)}{old_len} +{max(int(new) + offset, 0)}{new_len} @@"
        )

    return re.sub(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", move, diff, flags=re.M)


def sha(text: str) -> str:
    """Hex SHA-256 of the UTF-8 bytes of ``text``."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def patch_in_fresh_workspace(a: str, diff: str, base: str) -> tuple[dict, bytes]:
    """Writes ``a``, runs one safe_patch in a new session; returns the output and the bytes after."""
    root = Path(tempfile.mkdtemp(prefix="gsp-prop-"))
    try:
        (root / "f.txt").write_bytes(a.encode("utf-8"))
        result = gsp.Session(str(root)).call(
            "safe_patch",
            {"file_path": str(root / "f.txt"), "unified_diff": diff, "base_content_sha256": base},
        )
        return result["output"], (root / "f.txt").read_bytes()
    finally:
        shutil.rmtree(root)


@settings(max_examples=150, deadline=None)
@given(pair=st.one_of(edits(), st.tuples(TEXTS, TEXTS)), context=st.integers(0, 4))
def test_a_difflib_diff_turns_a_into_b(pair: tuple[str, str], context: int) -> None:
    """§7.4 Success Case: any diff difflib writes from A to B, applied to A, gives B."""
    a, b = pair
    diff = make_diff(a, b, context)
    if not diff:
        return  # A == B: difflib writes no hunk at all
    output, after = patch_in_fresh_workspace(a, diff, sha(a))
    assert output["success"] is True, (output["message"], diff)
    assert after == b.encode("utf-8")
    assert output["latest_file_state"]["content"] == b


@settings(max_examples=150, deadline=None)
@given(pair=edits(unique=True), context=st.integers(1, 4), offset=st.integers(-30, 30))
def test_shifted_hunk_headers_are_corrected(pair: tuple[str, str], context: int, offset: int) -> None:
    """§7.4 Corrected Patch: the same diff with every header moved by an offset still gives B."""
    a, b = pair
    diff = make_diff(a, b, context)
    if not diff:
        return
    output, after = patch_in_fresh_workspace(a, shift_headers(diff, offset), sha(a))
    assert output["success"] is True, (output["message"], diff, offset)
    assert after == b.encode("utf-8")


@settings(max_examples=100, deadline=None)
@given(a=TEXTS, b=TEXTS, wrong=st.text(alphabet="0123456789abcdef", min_size=0, max_size=64))
def test_a_wrong_hash_never_changes_the_file(a: str, b: str, wrong: str) -> None:
    """§5.4 step 1: whatever the diff, a base hash that is not the live file's leaves it as it was."""
    if wrong == sha(a):
        return
    output, after = patch_in_fresh_workspace(a, make_diff(a, b, 3) or "@@ -1 +1 @@\n-x\n+y\n", wrong)
    assert output["success"] is False
    assert output["message"] == gsp.STATE_MISMATCH
    assert after == a.encode("utf-8")
    assert output["latest_file_state"]["content"] == a


class VersionMachine(RuleBasedStateMachine):
    """§4.1: every call that returns file state takes a version, and versions strictly increase."""

    def __init__(self) -> None:
        super().__init__()
        self.root = Path(tempfile.mkdtemp(prefix="gsp-versions-"))
        (self.root / "a.txt").write_text("alpha\n")
        (self.root / "b.txt").write_text("beta\n")
        self.session = gsp.Session(str(self.root))
        self.seen: list[int] = []

    def teardown(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def record(self, versions: list[int]) -> None:
        """Checks the new versions continue the sequence seen so far, one step at a time."""
        for version in versions:
            expected = (self.seen[-1] if self.seen else 0) + 1
            assert version == expected, (self.seen, versions)
            self.seen.append(version)

    @rule(name=st.sampled_from(["a.txt", "b.txt"]))
    def read_file(self, name: str) -> None:
        out = self.session.call("read_file", {"file_path": str(self.root / name)})["output"]
        self.record([out["version"]])

    @rule(names=st.lists(st.sampled_from(["a.txt", "b.txt"]), min_size=1, max_size=3))
    def read_many_files(self, names: list[str]) -> None:
        out = self.session.call("read_many_files", {"paths": [str(self.root / n) for n in names]})
        self.record([item["version"] for item in out["output"]])

    @rule(name=st.sampled_from(["a.txt", "b.txt"]), text=st.text(alphabet="xyz\n", max_size=8))
    def write_file(self, name: str, text: str) -> None:
        out = self.session.call("write_file", {"file_path": str(self.root / name), "content": text})
        self.record([out["output"]["latest_file_state"]["version"]])

    @rule(name=st.sampled_from(["a.txt", "b.txt"]), good_hash=st.booleans(), text=st.text(alphabet="xyz", max_size=3))
    def safe_patch(self, name: str, good_hash: bool, text: str) -> None:
        path = self.root / name
        current = path.read_text()
        diff = make_diff(current, current + text + "\n", 3)
        base = sha(current) if good_hash else sha(current + "stale")
        out = self.session.call(
            "safe_patch", {"file_path": str(path), "unified_diff": diff, "base_content_sha256": base}
        )["output"]
        self.record([out["latest_file_state"]["version"]])

    @rule()
    def read_missing_file(self) -> None:
        result = self.session.call("read_file", {"file_path": str(self.root / "missing.txt")})
        assert "error" in result  # an error carries no state, so it takes no version

    @precondition(lambda self: bool(self.seen))
    @invariant()
    def versions_strictly_increase(self) -> None:
        assert all(x < y for x, y in zip(self.seen, self.seen[1:]))


VersionMachine.TestCase.settings = settings(
    max_examples=60, stateful_step_count=25, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
TestVersionsStrictlyIncrease = VersionMachine.TestCase

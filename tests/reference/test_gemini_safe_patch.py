"""Unit tests of the gemini-safe-patch reference (seed 004), one behaviour each.

The catalog checks what a tool call shows; these tests also reach what no tool call can, such as
the Internal Error exit of §5.4 step 3, forced here the way the seed's test plan forces it.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from reference_impl import UnknownTool
from reference_impl import gemini_safe_patch as gsp

TWENTY = "".join(f"line {n}\n" for n in range(1, 21))


def sha(text: str) -> str:
    """Hex SHA-256 of the UTF-8 bytes of ``text``."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A workspace with a twenty-line file ``a.txt``."""
    (tmp_path / "a.txt").write_text(TWENTY)
    return tmp_path


@pytest.fixture
def session(ws: Path) -> gsp.Session:
    """A new session on the workspace."""
    return gsp.Session(str(ws))


def patch(session: gsp.Session, path: Path, diff: str, base: str) -> dict:
    """Calls safe_patch and returns its output."""
    result = session.call(
        "safe_patch", {"file_path": str(path), "unified_diff": diff, "base_content_sha256": base}
    )
    return result["output"]


CHANGE_LINE_10 = """--- a/a.txt
+++ b/a.txt
@@ -9,3 +9,3 @@
 line 9
-line 10
+LINE TEN
 line 11
"""


# §4.1 / §5.1 versioning


def test_session_state_service_starts_at_one_and_increments() -> None:
    service = gsp.SessionStateService()
    assert [service.next_version() for _ in range(3)] == [1, 2, 3]


def test_a_new_service_starts_again_at_one() -> None:
    gsp.SessionStateService().next_version()
    assert gsp.SessionStateService().next_version() == 1


def test_two_sessions_do_not_share_a_counter(ws: Path) -> None:
    first, second = gsp.Session(str(ws)), gsp.Session(str(ws))
    first.call("read_file", {"file_path": str(ws / "a.txt")})
    assert second.call("read_file", {"file_path": str(ws / "a.txt")})["output"]["version"] == 1


def test_versions_increase_across_every_tool(session: gsp.Session, ws: Path) -> None:
    path = str(ws / "a.txt")
    versions = [session.call("read_file", {"file_path": path})["output"]["version"]]
    versions += [o["version"] for o in session.call("read_many_files", {"paths": [path, path]})["output"]]
    versions.append(session.call("write_file", {"file_path": path, "content": TWENTY})["output"]["latest_file_state"]["version"])
    versions.append(patch(session, ws / "a.txt", CHANGE_LINE_10, sha(TWENTY))["latest_file_state"]["version"])
    versions.append(patch(session, ws / "a.txt", CHANGE_LINE_10, sha(TWENTY))["latest_file_state"]["version"])
    assert versions == [1, 2, 3, 4, 5, 6]


# §4.1 / §5.2 read_file


def test_read_file_returns_the_versioned_object(session: gsp.Session, ws: Path) -> None:
    out = session.call("read_file", {"file_path": str(ws / "a.txt")})["output"]
    assert out == {"file_path": str(ws / "a.txt"), "version": 1, "sha256": sha(TWENTY), "content": TWENTY}


def test_read_file_hashes_the_bytes_on_disk(session: gsp.Session, ws: Path) -> None:
    (ws / "crlf.txt").write_bytes("é\r\nx".encode())
    out = session.call("read_file", {"file_path": str(ws / "crlf.txt")})["output"]
    assert out["sha256"] == hashlib.sha256("é\r\nx".encode()).hexdigest()
    assert out["content"] == "é\r\nx"


def test_read_file_resolves_a_relative_path_against_the_workspace(session: gsp.Session, ws: Path) -> None:
    out = session.call("read_file", {"file_path": "a.txt"})["output"]
    assert out["file_path"] == str(ws / "a.txt")


def test_read_of_a_missing_file_is_an_error_and_takes_no_version(session: gsp.Session, ws: Path) -> None:
    assert session.call("read_file", {"file_path": str(ws / "nope.txt")})["error"]["code"] == "ENOENT"
    assert session.call("read_file", {"file_path": str(ws / "a.txt")})["output"]["version"] == 1


def test_read_of_a_directory_is_an_error(session: gsp.Session, ws: Path) -> None:
    assert session.call("read_file", {"file_path": str(ws)})["error"]["code"] == "EISDIR"


def test_read_of_a_file_that_is_not_utf8_is_an_error(session: gsp.Session, ws: Path) -> None:
    (ws / "bin").write_bytes(b"\xff\xfe\x00")
    assert session.call("read_file", {"file_path": str(ws / "bin")})["error"]["code"] == "EILSEQ"


def test_a_missing_argument_is_einval(session: gsp.Session) -> None:
    assert session.call("read_file", {})["error"]["code"] == "EINVAL"
    assert session.call("read_many_files", {"paths": "a.txt"})["error"]["code"] == "EINVAL"
    assert session.call("safe_patch", {"file_path": "a.txt"})["error"]["code"] == "EINVAL"


def test_an_unknown_tool_raises(session: gsp.Session) -> None:
    with pytest.raises(UnknownTool):
        session.call("replace", {})


# §4.1 / §5.3 read_many_files


def test_read_many_files_gives_one_version_per_file_in_order(session: gsp.Session, ws: Path) -> None:
    (ws / "b.txt").write_text("123")
    out = session.call("read_many_files", {"paths": [str(ws / "b.txt"), "a.txt"]})["output"]
    assert [(o["file_path"], o["version"], o["sha256"]) for o in out] == [
        (str(ws / "b.txt"), 1, sha("123")),
        (str(ws / "a.txt"), 2, sha(TWENTY)),
    ]


def test_read_many_files_with_a_missing_path_fails_whole_and_takes_no_version(session: gsp.Session, ws: Path) -> None:
    result = session.call("read_many_files", {"paths": ["a.txt", "nope.txt"]})
    assert result["error"]["code"] == "ENOENT"
    assert session.call("read_file", {"file_path": "a.txt"})["output"]["version"] == 1


# write_file


def test_write_file_writes_and_returns_the_written_state(session: gsp.Session, ws: Path) -> None:
    out = session.call("write_file", {"file_path": "sub/new.txt", "content": "hi\n"})["output"]
    assert (ws / "sub" / "new.txt").read_text() == "hi\n"
    assert out == {
        "success": True,
        "message": gsp.FILE_WRITTEN,
        "latest_file_state": {"file_path": str(ws / "sub" / "new.txt"), "version": 1, "sha256": sha("hi\n"), "content": "hi\n"},
    }


# §4.2 / §5.4 safe_patch, the exit points in order


def test_correct_patch_is_applied(session: gsp.Session, ws: Path) -> None:
    out = patch(session, ws / "a.txt", CHANGE_LINE_10, sha(TWENTY))
    expected = TWENTY.replace("line 10\n", "LINE TEN\n")
    assert out == {
        "success": True,
        "message": "Patch applied successfully.",
        "latest_file_state": {"file_path": str(ws / "a.txt"), "version": 1, "sha256": sha(expected), "content": expected},
    }
    assert (ws / "a.txt").read_text() == expected


def test_hash_mismatch_returns_the_live_state_and_leaves_the_file(session: gsp.Session, ws: Path) -> None:
    out = patch(session, ws / "a.txt", CHANGE_LINE_10, sha("something else"))
    assert out["success"] is False
    assert out["message"] == "State Mismatch: File has changed on disk since it was last read."
    assert out["latest_file_state"] == {"file_path": str(ws / "a.txt"), "version": 1, "sha256": sha(TWENTY), "content": TWENTY}
    assert (ws / "a.txt").read_text() == TWENTY


def test_the_hash_comparison_ignores_letter_case(session: gsp.Session, ws: Path) -> None:
    assert patch(session, ws / "a.txt", CHANGE_LINE_10, sha(TWENTY).upper())["success"] is True


@pytest.mark.parametrize("header", ["@@ -1,3 +1,3 @@", "@@ -15,3 +15,3 @@", "@@ -400,3 +400,3 @@", "@@ -0,3 +0,3 @@"])
def test_wrong_line_numbers_are_corrected(session: gsp.Session, ws: Path, header: str) -> None:
    diff = CHANGE_LINE_10.replace("@@ -9,3 +9,3 @@", header)
    assert patch(session, ws / "a.txt", diff, sha(TWENTY))["success"] is True
    assert (ws / "a.txt").read_text() == TWENTY.replace("line 10\n", "LINE TEN\n")


def test_a_diff_without_file_headers_is_accepted(session: gsp.Session, ws: Path) -> None:
    diff = CHANGE_LINE_10.split("\n", 2)[2]
    assert diff.startswith("@@")
    assert patch(session, ws / "a.txt", diff, sha(TWENTY))["success"] is True


def test_a_diff_without_a_final_newline_is_read_as_if_it_had_one(session: gsp.Session, ws: Path) -> None:
    assert patch(session, ws / "a.txt", CHANGE_LINE_10.rstrip("\n"), sha(TWENTY))["success"] is True
    assert (ws / "a.txt").read_text() == TWENTY.replace("line 10\n", "LINE TEN\n")


def test_the_header_picks_among_repeated_context(tmp_path: Path) -> None:
    text = "x\ny\nz\n" * 3
    (tmp_path / "r.txt").write_text(text)
    diff = "--- a/r.txt\n+++ b/r.txt\n@@ -4,3 +4,3 @@\n x\n-y\n+Y\n z\n"
    out = patch(gsp.Session(str(tmp_path)), tmp_path / "r.txt", diff, sha(text))
    assert out["latest_file_state"]["content"] == "x\ny\nz\nx\nY\nz\nx\ny\nz\n"


def test_a_later_hunk_follows_the_correction_of_the_one_before(tmp_path: Path) -> None:
    # Both hunks say line 1; the second must land after the first, on the second copy.
    text = "k\nv\n" * 2
    (tmp_path / "r.txt").write_text(text)
    diff = "@@ -1,2 +1,2 @@\n k\n-v\n+A\n@@ -1,2 +1,2 @@\n k\n-v\n+B\n"
    out = patch(gsp.Session(str(tmp_path)), tmp_path / "r.txt", diff, sha(text))
    assert out["latest_file_state"]["content"] == "k\nA\nk\nB\n"


def test_multi_hunk_patch_applies_every_hunk(session: gsp.Session, ws: Path) -> None:
    diff = "@@ -2,1 +2,1 @@\n-line 2\n+TWO\n@@ -19,2 +19,3 @@\n line 19\n-line 20\n+TWENTY\n+line 21\n"
    out = patch(session, ws / "a.txt", diff, sha(TWENTY))
    assert out["success"] is True
    assert (ws / "a.txt").read_text() == TWENTY.replace("line 2\n", "TWO\n").replace("line 20\n", "TWENTY\nline 21\n")


@pytest.mark.parametrize(
    "diff",
    [
        "@@ -9,3 +9,3 @@\n line 9\n-line 99\n+X\n line 11\n",  # removal line not in the file
        "@@ -9,3 +9,3 @@\n nine\n-line 10\n+X\n line 11\n",  # context line not in the file
        "@@ -2 +2 @@\n-line 2\n+TWO\n@@ -9,2 +9,2 @@\n-line 10\n-line 12\n+X\n",  # one good hunk, one bad
        "@@ -5,2 +5,2 @@\n-line 5\n-line 6\n+X\n+Y\n@@ -3,2 +3,2 @@\n-line 3\n-line 4\n+Z\n+W\n",  # hunks out of order
        "@@ -9,3 +9,3 @@\n line 9\n-line 10\n",  # header counts disagree with the body
        "",  # no hunk at all
        "not a diff\n",
        "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-line 1\n+X\n--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-b\n+c\n",  # two files
    ],
)
def test_an_unusable_diff_is_invalid_and_changes_nothing(session: gsp.Session, ws: Path, diff: str) -> None:
    out = patch(session, ws / "a.txt", diff, sha(TWENTY))
    assert out["success"] is False
    assert out["message"] == (
        "Invalid Diff: The provided diff content does not match the file's content. "
        "The context or lines to be removed may be incorrect."
    )
    assert out["latest_file_state"]["content"] == TWENTY
    assert out["latest_file_state"]["version"] == 1
    assert (ws / "a.txt").read_text() == TWENTY


def test_internal_error_when_the_strict_apply_fails(session: gsp.Session, ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # §7.4 "Failure Case (Internal Patch Error)": the seed spies on applyPatch and makes it fail.
    seen = []
    monkeypatch.setattr(gsp, "apply_patch", lambda original, corrected: seen.append(corrected))
    out = patch(session, ws / "a.txt", CHANGE_LINE_10.replace("-9,3 +9,3", "-1,3 +1,3"), sha(TWENTY))
    assert out["success"] is False
    assert out["message"] == "Internal Error: The corrected patch failed to apply. Please review the diff for subtle errors."
    assert out["latest_file_state"]["content"] == TWENTY
    assert (ws / "a.txt").read_text() == TWENTY
    assert "@@ -9,3 +9,3 @@" in seen[0]  # the strict stage received the corrected diff


def test_strict_apply_refuses_a_hunk_away_from_its_header() -> None:
    assert gsp.apply_patch(TWENTY, CHANGE_LINE_10.replace("-9,3 +9,3", "-1,3 +1,3")) is None
    assert gsp.apply_patch(TWENTY, CHANGE_LINE_10) == TWENTY.replace("line 10\n", "LINE TEN\n")


# §7.4 File Creation Case


@pytest.mark.parametrize(
    "diff",
    ["--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n", "@@ -1,0 +1,2 @@\n+one\n+two\n"],
)
def test_a_missing_file_is_created_from_the_empty_hash(tmp_path: Path, diff: str) -> None:
    out = patch(gsp.Session(str(tmp_path)), tmp_path / "dir" / "new.txt", diff, gsp.EMPTY_SHA256)
    assert out["success"] is True
    assert (tmp_path / "dir" / "new.txt").read_text() == "one\ntwo\n"
    assert out["latest_file_state"]["sha256"] == sha("one\ntwo\n")


def test_a_missing_file_with_another_hash_is_a_mismatch_and_stays_missing(tmp_path: Path) -> None:
    out = patch(gsp.Session(str(tmp_path)), tmp_path / "new.txt", "@@ -0,0 +1 @@\n+x\n", sha("x\n"))
    assert out["message"] == gsp.STATE_MISMATCH
    assert out["latest_file_state"]["content"] == ""
    assert not (tmp_path / "new.txt").exists()


# "\ No newline at end of file"


def test_no_newline_marker_keeps_the_last_line_without_eol(tmp_path: Path) -> None:
    (tmp_path / "n.txt").write_text("a\nb")
    diff = "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"
    out = patch(gsp.Session(str(tmp_path)), tmp_path / "n.txt", diff, sha("a\nb"))
    assert out["success"] is True
    assert (tmp_path / "n.txt").read_bytes() == b"a\nc"


def test_dropping_the_marker_on_the_new_side_adds_the_final_newline(tmp_path: Path) -> None:
    (tmp_path / "n.txt").write_text("a\nb")
    diff = "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"
    patch(gsp.Session(str(tmp_path)), tmp_path / "n.txt", diff, sha("a\nb"))
    assert (tmp_path / "n.txt").read_bytes() == b"a\nb\n"


def test_a_removal_without_the_marker_does_not_match_a_last_line_without_eol(tmp_path: Path) -> None:
    (tmp_path / "n.txt").write_text("a\nb")
    out = patch(gsp.Session(str(tmp_path)), tmp_path / "n.txt", "@@ -1,2 +1,2 @@\n a\n-b\n+c\n", sha("a\nb"))
    assert out["message"] == gsp.INVALID_DIFF


def test_crlf_lines_match_a_crlf_diff_and_stay_crlf(tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_bytes(b"a\r\nb\r\nc\r\n")
    diff = "@@ -1,3 +1,3 @@\n a\r\n-b\r\n+B\r\n c\r\n"
    out = patch(gsp.Session(str(tmp_path)), tmp_path / "w.txt", diff, sha("a\r\nb\r\nc\r\n"))
    assert out["success"] is True
    assert (tmp_path / "w.txt").read_bytes() == b"a\r\nB\r\nc\r\n"


def test_no_state_file_is_left_in_the_workspace(session: gsp.Session, ws: Path) -> None:
    # §3 Non-goals: no persistent state in the user's project.
    session.call("read_file", {"file_path": "a.txt"})
    patch(session, ws / "a.txt", CHANGE_LINE_10, sha(TWENTY))
    assert sorted(p.name for p in ws.iterdir()) == ["a.txt"]


def test_content_that_is_not_unicode_is_a_bad_argument_not_a_crash(session: gsp.Session, ws: Path) -> None:
    result = session.call("write_file", {"file_path": str(ws / "new.txt"), "content": "x\ud800"})
    assert result["error"]["code"] == "EINVAL" and not (ws / "new.txt").exists()


def test_a_dangling_link_counts_as_a_missing_file_and_the_patch_creates_its_target(
        session: gsp.Session, ws: Path) -> None:
    (ws / "link.txt").symlink_to(ws / "target.txt")
    diff = "--- /dev/null\n+++ b/link.txt\n@@ -0,0 +1 @@\n+hello\n"
    result = session.call("safe_patch", {"file_path": str(ws / "link.txt"), "unified_diff": diff,
                                         "base_content_sha256": sha("")})
    assert result["output"]["success"] is True
    assert (ws / "target.txt").read_text() == "hello\n"

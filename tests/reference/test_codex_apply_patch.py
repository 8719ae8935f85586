"""The codex-apply-patch reference: its parser, its context search and the applier's edges that the
catalog does not reach (error line numbers, I/O wording, paths out of the working folder)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reference_impl import UnknownTool
from reference_impl import codex_apply_patch as ap


def patch(*body: str) -> str:
    return "\n".join(["*** Begin Patch", *body, "*** End Patch"])


@pytest.fixture
def session(tmp_path: Path) -> ap.Session:
    return ap.Session(str(tmp_path), {})


def test_other_tools_are_unknown_and_input_is_required(session):
    with pytest.raises(UnknownTool):
        session.call("shell", {})
    assert "input" in session.call("apply_patch", {})["error"]["message"]
    assert "input" in session.call("apply_patch", {"input": 3})["error"]["message"]


def test_parse_gives_the_hunks_of_the_instructions_example():
    hunks = ap.parse_patch(patch("*** Add File: hello.txt", "+Hello world", "*** Update File: src/app.py",
                                 "*** Move to: src/main.py", "@@ def greet():", '-print("Hi")',
                                 '+print("Hello, world!")', "*** Delete File: obsolete.txt"))
    assert [(h.kind, h.path) for h in hunks] == [("add", "hello.txt"), ("update", "src/app.py"), ("delete", "obsolete.txt")]
    assert hunks[0].contents == "Hello world\n"
    assert hunks[1].move_path == "src/main.py"
    assert hunks[1].chunks == [ap.Chunk("def greet():", ['print("Hi")'], ['print("Hello, world!")'])]


def test_chunk_with_blank_line_and_end_of_file():
    (hunk,) = ap.parse_patch(patch("*** Update File: f", "@@ ctx", "", " context", "-remove", "+add", " context2"))
    assert hunk.chunks == [ap.Chunk("ctx", ["", "context", "remove", "context2"], ["", "context", "add", "context2"])]
    (hunk,) = ap.parse_patch(patch("*** Update File: f", "@@", "+line", "*** End of File"))
    assert hunk.chunks == [ap.Chunk(None, [], ["line"], True)]


@pytest.mark.parametrize("text, message", [
    ("bad", "Invalid patch: The first line of the patch must be '*** Begin Patch'"),
    ("*** Begin Patch\nbad", "Invalid patch: The last line of the patch must be '*** End Patch'"),
    ("", "Invalid patch: The first line of the patch must be '*** Begin Patch'"),
    ("*** Begin Patch", "Invalid patch: The last line of the patch must be '*** End Patch'"),
    (patch("*** Update File: a", "@@", "-x", "@@"), "Invalid patch hunk on line 6: Update hunk does not contain any lines"),
    (patch("*** Add File: a", "+x", "*** Update File: b", "@@", "-y", "+z", "*** Bogus"),
     "Invalid patch hunk on line 8: '*** Bogus' is not a valid hunk header."),
    ("<<EOF\n*** Begin Patch\n*** Update File: f\nEOF\n", "Invalid patch: The last line of the patch must be '*** End Patch'"),
])
def test_parse_errors_and_their_line_numbers(text, message):
    with pytest.raises(ap.PatchError) as caught:
        ap.parse_patch(text)
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize("opening", ["<<EOF", "<<'EOF'", '<<"EOF"'])
def test_heredoc_openings(opening):
    hunks = ap.parse_patch(f"{opening}\n{patch('*** Delete File: a')}\nEOF\n")
    assert [(h.kind, h.path) for h in hunks] == [("delete", "a")]


def test_seek_sequence_edges():
    lines = ["foo", "bar", "baz"]
    assert ap.seek_sequence(lines, [], 2, False) == 2
    assert ap.seek_sequence(["one"], ["too", "many"], 0, False) is None
    assert ap.seek_sequence(lines, ["bar", "baz"], 0, False) == 1
    assert ap.seek_sequence(lines, ["foo"], 1, False) is None  # only at or after start
    assert ap.seek_sequence(["x", "x"], ["x"], 0, True) == 1
    assert ap.seek_sequence(["a\u00a0b \u2014 \u2018c\u2019"], ["a b - 'c'"], 0, False) == 0


def test_io_errors_are_worded_like_rust(session, tmp_path):
    (tmp_path / "dir").mkdir()
    message = session.call("apply_patch", {"input": patch("*** Delete File: dir")})["error"]["message"]
    assert message.startswith("Failed to delete file dir: ")
    assert message.endswith(")") and "(os error " in message
    message = session.call("apply_patch", {"input": patch("*** Update File: nope", "@@", "-a", "+b")})["error"]["message"]
    assert message == "Failed to read file to update nope: No such file or directory (os error 2)"


def test_crlf_lines_keep_their_cr_unless_a_hunk_replaces_them(session, tmp_path):
    (tmp_path / "dos.txt").write_bytes(b"a\r\nb\r\n")
    assert session.call("apply_patch", {"input": patch("*** Update File: dos.txt", "@@", "-a", "+A")})["output"]
    assert (tmp_path / "dos.txt").read_bytes() == b"A\nb\r\n"


@pytest.mark.parametrize("path", ["../escape.txt", "sub/../../escape.txt", "/etc/escape.txt"])
def test_paths_out_of_the_working_folder_are_refused_before_anything_is_written(tmp_path, path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    session = ap.Session(str(workspace), {})
    result = session.call("apply_patch", {"input": patch("*** Add File: first.txt", "+x", f"*** Add File: {path}", "+y")})
    assert result["error"]["message"] == f"Refusing to touch {path}: it is outside the working folder"
    assert sorted(os.listdir(tmp_path)) == ["ws"]
    assert os.listdir(workspace) == []


def test_a_move_destination_out_of_the_working_folder_is_refused(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("a\n")
    session = ap.Session(str(workspace), {})
    result = session.call("apply_patch", {"input": patch("*** Update File: a.txt", "*** Move to: ../b.txt", "@@", "-a", "+b")})
    assert "outside the working folder" in result["error"]["message"]
    assert (workspace / "a.txt").read_text() == "a\n"
    assert not (tmp_path / "b.txt").exists()


def test_pure_addition_with_context_still_goes_to_the_end(session, tmp_path):
    (tmp_path / "f.py").write_text("def a():\n    pass\n\ndef b():\n    pass\n")
    assert session.call("apply_patch", {"input": patch("*** Update File: f.py", "@@ def a():", "+    # added")})["output"]
    assert (tmp_path / "f.py").read_text() == "def a():\n    pass\n\ndef b():\n    pass\n    # added\n"

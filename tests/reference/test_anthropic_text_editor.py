"""The anthropic-text-editor reference on a real temporary directory: what its catalog cannot reach
(argument errors, the listing's form, undo of a create, paths out of the workspace)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reference_impl import UnknownTool
from reference_impl import anthropic_text_editor as te

TOOL = "str_replace_based_edit_tool"


def call(session: te.Session, **args) -> dict:
    return session.call(TOOL, args)


@pytest.fixture
def session(tmp_path: Path) -> te.Session:
    return te.Session(str(tmp_path), {})


@pytest.fixture
def old_session(tmp_path: Path) -> te.Session:
    return te.Session(str(tmp_path), {"tool_version": "text_editor_20250124"})


def test_another_tool_name_is_unknown(session):
    with pytest.raises(UnknownTool):
        session.call("str_replace_editor", {"command": "view", "path": "."})


@pytest.mark.parametrize("args, message", [
    ({"path": "a.txt"}, "Parameter `command` is required"),
    ({"command": "delete", "path": "a.txt"}, "Unknown command: delete"),
    ({"command": "view"}, "Parameter `path` is required for command: view"),
    ({"command": "str_replace", "path": "a.txt"}, "Parameter `old_str` is required for command: str_replace"),
    ({"command": "create", "path": "a.txt"}, "Parameter `file_text` is required for command: create"),
    ({"command": "insert", "path": "a.txt", "insert_text": "x"}, "Parameter `insert_line` is required"),
    ({"command": "insert", "path": "a.txt", "insert_line": 0}, "Parameter `insert_text` is required"),
    ({"command": "insert", "path": "a.txt", "insert_line": "1", "insert_text": "x"}, "`insert_line` must be an integer"),
    ({"command": "create", "path": "a.txt", "file_text": 3}, "`file_text` must be a string"),
    ({"command": "view", "path": "a.txt", "view_range": [1]}, "`view_range` must be an array of two integers"),
])
def test_bad_arguments_are_error_results_and_change_nothing(session, tmp_path, args, message):
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    result = call(session, **args)
    assert message in result["error"]["message"]
    assert result["error"]["code"] is None
    assert (tmp_path / "a.txt").read_text() == "one\ntwo\n"


def test_view_numbers_lines_as_the_page_example_does(session, tmp_path):
    (tmp_path / "a.py").write_text("def f():\n    return 1\n")
    assert call(session, command="view", path="a.py") == {"output": "1: def f():\n2:     return 1"}


def test_view_range_past_the_end_or_reversed_is_an_error(session, tmp_path):
    (tmp_path / "a.txt").write_text("a\nb\nc\n")
    assert "Invalid view_range [2, 9]" in call(session, command="view", path="a.txt", view_range=[2, 9])["error"]["message"]
    assert "Invalid view_range [3, 1]" in call(session, command="view", path="a.txt", view_range=[3, 1])["error"]["message"]
    assert call(session, command="view", path="a.txt", view_range=[0, 1])["error"]


def test_max_characters_cuts_before_numbering(tmp_path):
    (tmp_path / "a.txt").write_text("abcdef\nghij\n")
    session = te.Session(str(tmp_path), {"max_characters": 9})
    assert call(session, command="view", path="a.txt") == {"output": "1: abcdef\n2: gh"}


def test_directory_listing_two_levels_without_hidden_entries(session, tmp_path):
    (tmp_path / "one" / "two" / "three").mkdir(parents=True)
    (tmp_path / "one" / "two" / "three" / "deep.txt").write_text("d")
    (tmp_path / "top.txt").write_text("t")
    (tmp_path / ".hidden").write_text("h")
    listing = call(session, command="view", path=".")["output"].splitlines()
    assert listing == ["one/", "one/two/", "top.txt"]


def test_crlf_and_undecodable_bytes_survive_a_replacement(session, tmp_path):
    (tmp_path / "a.txt").write_bytes(b"keep\xff\r\nold\r\n")
    assert call(session, command="str_replace", path="a.txt", old_str="old", new_str="new")["output"]
    assert (tmp_path / "a.txt").read_bytes() == b"keep\xff\r\nnew\r\n"


def test_insert_adds_a_line_break_where_the_text_or_the_file_lacks_one(session, tmp_path):
    (tmp_path / "a.txt").write_text("first\nlast")
    call(session, command="insert", path="a.txt", insert_line=2, insert_text="tail")
    call(session, command="insert", path="a.txt", insert_line=1, insert_text="mid")
    assert (tmp_path / "a.txt").read_text() == "first\nmid\nlast\ntail\n"


def test_insert_line_past_the_end_is_an_error(session, tmp_path):
    (tmp_path / "a.txt").write_text("a\n")
    result = call(session, command="insert", path="a.txt", insert_line=5, insert_text="x\n")
    assert "Invalid insert_line 5: the file has 1 lines." in result["error"]["message"]
    assert call(session, command="insert", path="a.txt", insert_line=-1, insert_text="x\n")["error"]
    assert (tmp_path / "a.txt").read_text() == "a\n"


def test_empty_old_str_is_refused(session, tmp_path):
    (tmp_path / "a.txt").write_text("abc\n")
    assert call(session, command="str_replace", path="a.txt", old_str="", new_str="X")["error"]["message"] == te.EMPTY_OLD_STR


def test_undo_of_a_create_removes_the_file_and_of_an_overwrite_restores_it(old_session, tmp_path):
    call(old_session, command="create", path="new.txt", file_text="x\n")
    assert call(old_session, command="undo_edit", path="new.txt")["output"]
    assert not (tmp_path / "new.txt").exists()
    (tmp_path / "old.txt").write_text("before\n")
    call(old_session, command="create", path="old.txt", file_text="after\n")
    call(old_session, command="undo_edit", path="old.txt")
    assert (tmp_path / "old.txt").read_text() == "before\n"
    assert "No edit history" in call(old_session, command="undo_edit", path="old.txt")["error"]["message"]


def test_undo_is_refused_in_the_claude_4_version(session, tmp_path):
    (tmp_path / "a.txt").write_text("a\n")
    assert call(session, command="undo_edit", path="a.txt") == {"error": {"code": None, "message": te.UNDO_UNSUPPORTED}}


@pytest.mark.parametrize("path", ["../x.txt", "sub/../../x.txt", "/etc/passwd", "~/x.txt"])
def test_paths_outside_the_workspace_are_refused(tmp_path, path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    session = te.Session(str(workspace), {})
    result = call(session, command="create", path=path, file_text="x\n")
    assert result["error"]["message"].startswith("Error: Path is outside the working directory")
    assert sorted(os.listdir(tmp_path)) == ["ws"]


def test_a_link_leading_out_of_the_workspace_is_refused(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (tmp_path / "secret.txt").write_text("secret\n")
    (workspace / "link.txt").symlink_to(tmp_path / "secret.txt")
    session = te.Session(str(workspace), {})
    assert call(session, command="view", path="link.txt")["error"]
    assert call(session, command="str_replace", path="link.txt", old_str="secret", new_str="x")["error"]
    assert (tmp_path / "secret.txt").read_text() == "secret\n"


def test_a_directory_is_not_a_file_for_the_editing_commands(session, tmp_path):
    (tmp_path / "d").mkdir()
    assert "Not a file" in call(session, command="create", path="d", file_text="x")["error"]["message"]
    assert "Not a file" in call(session, command="str_replace", path="d", old_str="a", new_str="b")["error"]["message"]

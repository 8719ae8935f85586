"""The claude-code reference (seed 001) on a real temporary directory, one behaviour per test."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reference_impl import UnknownTool
from reference_impl import claude_code as cc


@pytest.fixture
def session(tmp_path: Path) -> cc.Session:
    """A fresh session rooted at the test's temporary directory."""
    return cc.Session(str(tmp_path), {})


def put(path: Path, data: str | bytes) -> str:
    """Writes ``data`` (text as UTF-8) to ``path`` and returns the path as a string."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return str(path)


def bump_mtime(path: str) -> None:
    """Moves the file's mtime a second forward, as another process writing it would."""
    now = os.stat(path).st_mtime_ns + 1_000_000_000
    os.utime(path, ns=(now, now))


def output(result: dict) -> str:
    """Returns the output of a call that must have succeeded."""
    assert "error" not in result, result
    return result["output"]


def message(result: dict) -> str:
    """Returns the message of a call that must have failed (code None)."""
    assert "output" not in result, result
    assert result["error"]["code"] is None
    return result["error"]["message"]


# --- module surface -----------------------------------------------------------------------------


def test_tools_are_read_write_edit_in_seed_order():
    assert cc.TOOLS == ("Read", "Write", "Edit")


def test_unknown_tool_raises(session):
    with pytest.raises(UnknownTool):
        session.call("MultiEdit", {})


def test_module_does_not_import_harness():
    code = "import sys, reference_impl.claude_code; print([m for m in sys.modules if m.split('.')[0] == 'harness'])"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "[]"


@pytest.mark.parametrize(
    "tool, args, fragment",
    [
        ("Read", {}, "InputValidationError: Read failed due to the following issue:\nThe required parameter `file_path` is missing"),
        ("Read", {"file_path": "/x", "offset": "3"}, "`offset` must be a number"),
        ("Read", {"file_path": "/x", "limit": True}, "`limit` must be a number"),
        ("Write", {"file_path": "/x"}, "The required parameter `content` is missing"),
        ("Edit", {"file_path": "/x", "old_string": "a", "new_string": "b", "replace_all": "yes"}, "`replace_all` must be a boolean"),
        ("Edit", {"file_path": "/x", "old_string": "a", "new_string": "b", "regex": True}, "An unexpected parameter `regex` was provided"),
    ],
)
def test_arguments_are_checked_against_the_schema(session, tool, args, fragment):
    assert fragment in message(session.call(tool, args))


# --- Read: output format ------------------------------------------------------------------------


def test_read_shows_the_seed_example_exactly(session, tmp_path):
    path = put(tmp_path / "a.txt", "first line\nsecond line\nthird line\n")
    assert output(session.call("Read", {"file_path": path})) == "     1→first line\n     2→second line\n     3→third line"


def test_read_keeps_a_last_line_without_newline(session, tmp_path):
    path = put(tmp_path / "a.txt", "one\ntwo")
    assert output(session.call("Read", {"file_path": path})) == "     1→one\n     2→two"


def test_read_keeps_blank_lines_and_content_tabs(session, tmp_path):
    path = put(tmp_path / "a.py", "def f():\n\n\treturn 1\n")
    assert output(session.call("Read", {"file_path": path})) == "     1→def f():\n     2→\n     3→\treturn 1"


def test_line_number_column_grows_past_six_digits(session, tmp_path):
    path = put(tmp_path / "big.txt", "".join(f"{n}\n" for n in range(1, 1_000_002)))
    shown = output(session.call("Read", {"file_path": path, "offset": 999_999, "limit": 3}))
    assert shown == "999999→999999\n1000000→1000000\n1000001→1000001"


# --- Read: offset and limit ---------------------------------------------------------------------


def test_offset_is_one_based_and_numbers_follow_the_file(session, tmp_path):
    path = put(tmp_path / "f.txt", "".join(f"line {n}\n" for n in range(1, 6)))
    assert output(session.call("Read", {"file_path": path, "offset": 3, "limit": 2})) == "     3→line 3\n     4→line 4"


def test_default_limit_is_2000_lines(session, tmp_path):
    path = put(tmp_path / "f.txt", "".join(f"line {n}\n" for n in range(1, 2501)))
    lines = output(session.call("Read", {"file_path": path})).split("\n")
    assert len(lines) == 2000
    assert lines[0] == "     1→line 1" and lines[-1] == "  2000→line 2000"


def test_offset_below_one_reads_from_the_first_line(session, tmp_path):
    path = put(tmp_path / "f.txt", "a\nb\n")
    assert output(session.call("Read", {"file_path": path, "offset": 0})) == "     1→a\n     2→b"


def test_offset_past_the_end_warns(session, tmp_path):
    path = put(tmp_path / "f.txt", "a\nb\n")
    shown = output(session.call("Read", {"file_path": path, "offset": 5}))
    assert "shorter than the provided offset (5)" in shown and "2 lines" in shown


def test_limit_below_one_is_rejected(session, tmp_path):
    path = put(tmp_path / "f.txt", "a\n")
    assert "limit" in message(session.call("Read", {"file_path": path, "limit": 0}))
    assert path not in session.read_files


def test_lines_are_cut_at_2000_characters(session, tmp_path):
    path = put(tmp_path / "f.txt", "é" * 2500 + "\nshort\n")
    assert output(session.call("Read", {"file_path": path})) == "     1→" + "é" * 2000 + "\n     2→short"


# --- Read: special files and errors -------------------------------------------------------------


def test_empty_file_gives_the_warning_and_no_lines(session, tmp_path):
    path = put(tmp_path / "empty.txt", "")
    assert output(session.call("Read", {"file_path": path})) == cc.EMPTY_FILE_WARNING
    assert path in session.read_files


def test_image_is_returned_as_an_image_block(session, tmp_path):
    data = b"\x89PNG\r\n\x1a\n\x00\x00fake"
    path = put(tmp_path / "pic.PNG", data)
    block = output(session.call("Read", {"file_path": path}))[0]
    assert block["type"] == "image" and block["source"]["media_type"] == "image/png"
    assert base64.b64decode(block["source"]["data"]) == data


def test_pdf_is_returned_as_a_document_block(session, tmp_path):
    path = put(tmp_path / "doc.pdf", b"%PDF-1.4\n\x00...")
    block = output(session.call("Read", {"file_path": path}))[0]
    assert block["type"] == "document" and block["source"]["media_type"] == "application/pdf"


def test_notebook_shows_cells_and_outputs(session, tmp_path):
    notebook = {"cells": [
        {"cell_type": "markdown", "source": ["# Title"]},
        {"cell_type": "code", "id": "c1", "source": "print(1)", "outputs": [
            {"output_type": "stream", "text": ["1\n"]},
            {"output_type": "execute_result", "data": {"text/plain": "'done'"}},
            {"output_type": "error", "ename": "ValueError", "evalue": "bad"},
        ]},
    ]}
    path = put(tmp_path / "nb.ipynb", json.dumps(notebook))
    shown = output(session.call("Read", {"file_path": path}))
    assert '<cell id="0" type="markdown"># Title</cell>' in shown
    assert '<cell id="c1" type="code">print(1)</cell>' in shown
    assert "<output>1\n</output>" in shown and "<output>'done'</output>" in shown
    assert "<output>ValueError: bad</output>" in shown


def test_notebook_that_is_not_json_is_read_as_text(session, tmp_path):
    path = put(tmp_path / "nb.ipynb", "not json\n")
    assert output(session.call("Read", {"file_path": path})) == "     1→not json"


def test_binary_file_is_refused_and_not_recorded(session, tmp_path):
    path = put(tmp_path / "blob.bin", b"\x00\x01\x02")
    assert message(session.call("Read", {"file_path": path})).startswith(
        "This tool cannot read binary files. The file appears to be a binary .bin file. Use a skill")
    assert path not in session.read_files


def test_binary_file_without_extension_is_named_without_one(session, tmp_path):
    path = put(tmp_path / "blob", b"\x00\x01\x02")
    assert "appears to be a binary file." in message(session.call("Read", {"file_path": path}))


def test_missing_file_does_not_exist_naming_the_working_directory(session, tmp_path):
    path = str(tmp_path / "nope.txt")
    assert message(session.call("Read", {"file_path": path})) == (
        f"File does not exist. Note: your current working directory is {tmp_path}.")


def test_reading_a_directory_fails_with_the_os_error(session, tmp_path):
    assert message(session.call("Read", {"file_path": str(tmp_path)})).startswith("EISDIR")


def test_undecodable_bytes_show_as_replacement_characters(session, tmp_path):
    path = put(tmp_path / "latin.txt", "café\n".encode("latin-1"))
    assert output(session.call("Read", {"file_path": path})) == "     1→caf\ufffd"


@pytest.mark.parametrize("codec", ["utf-16", "utf-8-sig"])
def test_byte_order_marks_are_honoured(session, tmp_path, codec):
    path = put(tmp_path / "bom.txt", "hi\nthere\n".encode(codec))
    assert output(session.call("Read", {"file_path": path})) == "     1→hi\n     2→there"


def test_crlf_is_shown_as_a_line_break(session, tmp_path):
    path = put(tmp_path / "dos.txt", "a\r\nb\r\n")
    assert output(session.call("Read", {"file_path": path})) == "     1→a\n     2→b"


# --- Path Resolution ----------------------------------------------------------------------------


@pytest.mark.parametrize("relative", ["./src/index.ts", "src/index.ts", "~/project/src/index.ts", "C:/Users/dev/index.ts"])
@pytest.mark.parametrize("tool", cc.TOOLS)
def test_paths_that_are_not_absolute_here_are_rejected(session, tool, relative):
    args = {"Read": {}, "Write": {"content": "x"}, "Edit": {"old_string": "a", "new_string": "b"}}[tool]
    result = session.call(tool, {"file_path": relative, **args})
    assert message(result) == f"File path must be absolute, not relative: {relative}"


def test_paths_are_normalised_lexically_for_the_read_set(session, tmp_path):
    path = put(tmp_path / "a.txt", "x\n")
    output(session.call("Read", {"file_path": f"{tmp_path}/./sub/../a.txt"}))
    assert path in session.read_files
    output(session.call("Edit", {"file_path": path, "old_string": "x", "new_string": "y"}))


def test_symlink_is_followed_and_recorded_by_its_own_path(session, tmp_path):
    target = put(tmp_path / "real.txt", "behind\n")
    link = tmp_path / "link.txt"
    link.symlink_to("real.txt")
    assert output(session.call("Read", {"file_path": str(link)})) == "     1→behind"
    assert session.read_files == {str(link)}
    assert message(session.call("Edit", {"file_path": target, "old_string": "behind", "new_string": "x"})) == cc.NOT_READ_EDIT


# --- Write --------------------------------------------------------------------------------------


def test_write_creates_a_new_file_without_a_read(session, tmp_path):
    path = str(tmp_path / "new.txt")
    assert output(session.call("Write", {"file_path": path, "content": "hi"})) == f"File created successfully at: {path}" + cc.IN_CONTEXT
    assert Path(path).read_bytes() == b"hi"  # no newline added (open question 10)


def test_write_creates_missing_parents(session, tmp_path):
    path = tmp_path / "a" / "b" / "c.txt"
    output(session.call("Write", {"file_path": str(path), "content": "deep\n"}))
    assert path.read_text() == "deep\n"


def test_write_to_an_unread_existing_file_is_refused(session, tmp_path):
    path = put(tmp_path / "a.txt", "old\n")
    assert message(session.call("Write", {"file_path": path, "content": "new\n"})) == cc.NOT_READ_WRITE
    assert Path(path).read_text() == "old\n"


def test_write_after_read_overwrites_completely_and_keeps_the_mode(session, tmp_path):
    path = put(tmp_path / "a.sh", "a long original\n")
    os.chmod(path, 0o751)
    output(session.call("Read", {"file_path": path}))
    assert output(session.call("Write", {"file_path": path, "content": "short\r\n"})) == f"The file {path} has been updated successfully." + cc.IN_CONTEXT
    assert Path(path).read_bytes() == b"short\r\n"
    assert os.stat(path).st_mode & 0o777 == 0o751


def test_write_after_an_outside_change_is_refused(session, tmp_path):
    path = put(tmp_path / "a.txt", "one\n")
    output(session.call("Read", {"file_path": path}))
    bump_mtime(path)
    assert message(session.call("Write", {"file_path": path, "content": "two\n"})) == cc.MODIFIED_WRITE
    assert Path(path).read_text() == "one\n"


def test_write_records_the_new_mtime(session, tmp_path):
    path = put(tmp_path / "a.txt", "one\n")
    output(session.call("Read", {"file_path": path}))
    output(session.call("Write", {"file_path": path, "content": "two\n"}))
    assert session.file_mtimes[path] == os.stat(path).st_mtime_ns
    output(session.call("Write", {"file_path": path, "content": "three\n"}))
    assert Path(path).read_text() == "three\n"


def test_a_file_created_by_write_is_not_in_the_read_set(session, tmp_path):
    path = str(tmp_path / "made.txt")
    output(session.call("Write", {"file_path": path, "content": "made\n"}))
    assert path not in session.read_files and path in session.file_mtimes
    assert message(session.call("Write", {"file_path": path, "content": "again\n"})) == cc.NOT_READ_WRITE


def test_write_rejects_lone_surrogates(session, tmp_path):
    path = str(tmp_path / "bad.txt")
    assert "not valid Unicode" in message(session.call("Write", {"file_path": path, "content": "\ud800"}))
    assert not os.path.exists(path)


# --- Edit ---------------------------------------------------------------------------------------


def read_then_edit(session: cc.Session, path: str, old: str, new: str, **more) -> dict:
    """Reads ``path`` and then edits it; returns the Edit's normal form."""
    output(session.call("Read", {"file_path": path}))
    return session.call("Edit", {"file_path": path, "old_string": old, "new_string": new, **more})


def test_edit_replaces_the_unique_match(session, tmp_path):
    path = put(tmp_path / "a.txt", "alpha beta gamma\n")
    assert output(read_then_edit(session, path, "beta", "BETA")) == (
        f"The file {path} has been updated successfully. (file state is current in your context — no need to Read it back)")
    assert Path(path).read_text() == "alpha BETA gamma\n"


def test_edit_without_a_match_says_string_not_found(session, tmp_path):
    path = put(tmp_path / "a.txt", "alpha\n")
    assert message(read_then_edit(session, path, "omega", "x")) == "String to replace not found in file.\nString: omega"
    assert Path(path).read_text() == "alpha\n"


def test_edit_with_two_matches_says_how_many_were_found(session, tmp_path):
    path = put(tmp_path / "a.txt", "x x\n")
    text = message(read_then_edit(session, path, "x", "y"))
    assert text.startswith("Found 2 matches of the string to replace, but replace_all is false.")
    assert text.endswith("\nString: x")
    assert Path(path).read_text() == "x x\n"


def test_replace_all_replaces_every_match(session, tmp_path):
    path = put(tmp_path / "a.txt", "x x\nx\n")
    assert output(read_then_edit(session, path, "x", "y", replace_all=True)).startswith(
        f"The file {path} has been updated. All occurrences were successfully replaced.")
    assert Path(path).read_text() == "y y\ny\n"


def test_replace_all_without_a_match_fails(session, tmp_path):
    path = put(tmp_path / "a.txt", "x\n")
    assert message(read_then_edit(session, path, "z", "y", replace_all=True)).startswith("String to replace not found")


def test_occurrences_do_not_overlap(session, tmp_path):
    path = put(tmp_path / "a.txt", "aaa")
    output(read_then_edit(session, path, "aa", "b"))
    assert Path(path).read_text() == "ba"


@pytest.mark.parametrize(
    "content, old",
    [
        ("Hello\n", "hello"),  # case
        ("a  b\n", "a b"),  # whitespace
        ("\treturn\n", "    return"),  # tabs vs spaces
        ("say(\u201chi\u201d)\n", 'say("hi")'),  # curly quotes (#1986)
        ("caf\u00e9\n", "cafe\u0301"),  # composed vs decomposed
        ("abc\n", "a.c"),  # not a regex
    ],
)
def test_matching_is_exact(session, tmp_path, content, old):
    path = put(tmp_path / "a.txt", content)
    assert message(read_then_edit(session, path, old, "X")).startswith("String to replace not found")
    assert Path(path).read_text() == content


def test_edit_of_an_unread_file_is_refused(session, tmp_path):
    path = put(tmp_path / "a.txt", "x\n")
    assert message(session.call("Edit", {"file_path": path, "old_string": "x", "new_string": "y"})) == cc.NOT_READ_EDIT


def test_edit_after_an_outside_change_is_refused(session, tmp_path):
    path = put(tmp_path / "a.txt", "x\n")
    output(session.call("Read", {"file_path": path}))
    bump_mtime(path)
    assert message(session.call("Edit", {"file_path": path, "old_string": "x", "new_string": "y"})) == cc.MODIFIED_EDIT
    output(session.call("Read", {"file_path": path}))
    output(session.call("Edit", {"file_path": path, "old_string": "x", "new_string": "y"}))


def test_edit_records_the_new_mtime(session, tmp_path):
    path = put(tmp_path / "a.txt", "one two\n")
    output(read_then_edit(session, path, "one", "1"))
    output(session.call("Edit", {"file_path": path, "old_string": "two", "new_string": "2"}))
    assert Path(path).read_text() == "1 2\n"


def test_edit_of_a_file_deleted_after_its_read_is_file_not_found(session, tmp_path):
    path = put(tmp_path / "a.txt", "x\n")
    output(session.call("Read", {"file_path": path}))
    os.remove(path)
    assert message(session.call("Edit", {"file_path": path, "old_string": "x", "new_string": "y"})).startswith(
        "File does not exist.")


def test_identical_old_and_new_string_is_rejected(session, tmp_path):
    path = put(tmp_path / "a.txt", "same\n")
    assert message(read_then_edit(session, path, "same", "same")) == cc.NO_CHANGES


def test_empty_old_string_is_rejected(session, tmp_path):
    path = put(tmp_path / "a.txt", "x\n")
    assert message(read_then_edit(session, path, "", "y")) == cc.EMPTY_OLD_STRING
    assert Path(path).read_text() == "x\n"


def test_lf_old_string_does_not_match_crlf(session, tmp_path):
    path = put(tmp_path / "dos.txt", "a\r\nb\r\n")
    assert message(read_then_edit(session, path, "a\nb", "c")).startswith("String to replace not found")
    output(session.call("Edit", {"file_path": path, "old_string": "a\r\nb", "new_string": "c"}))
    assert Path(path).read_bytes() == b"c\r\n"


def test_edit_keeps_undecodable_bytes(session, tmp_path):
    path = put(tmp_path / "latin.txt", "café = 1\n".encode("latin-1"))
    output(read_then_edit(session, path, "= 1", "= 2"))
    assert Path(path).read_bytes() == "café = 2\n".encode("latin-1")


@pytest.mark.parametrize("bom,codec", [(b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be")])
def test_edit_of_a_utf16_file_keeps_its_encoding_and_byte_order(session, tmp_path, bom, codec):
    path = put(tmp_path / "wide.txt", bom + "hello world\n".encode(codec))
    output(read_then_edit(session, path, "world", "there"))
    assert Path(path).read_bytes() == bom + "hello there\n".encode(codec)


def test_a_file_holding_only_a_byte_order_mark_is_empty(session, tmp_path):
    path = put(tmp_path / "bom.txt", b"\xef\xbb\xbf")
    assert output(session.call("Read", {"file_path": path})) == cc.EMPTY_FILE_WARNING


# --- faults on a file system where modes bite ----------------------------------------------------


@pytest.fixture
def strict_fs():
    """A pyfakefs file system on which file modes apply even to root."""
    from pyfakefs.fake_filesystem_unittest import Patcher

    with Patcher(allow_root_user=False) as patcher:
        patcher.fs.create_dir("/ws")
        yield patcher.fs


def test_unreadable_file_gives_the_os_permission_error(strict_fs):
    strict_fs.create_file("/ws/secret.txt", contents="s", st_mode=0o100000)
    result = cc.Session("/ws", {}).call("Read", {"file_path": "/ws/secret.txt"})
    assert message(result) == "EACCES: Permission denied, open '/ws/secret.txt'"


def test_write_into_a_read_only_directory_gives_the_os_permission_error(strict_fs):
    strict_fs.create_dir("/ws/sealed", perm_bits=0o555)
    result = cc.Session("/ws", {}).call("Write", {"file_path": "/ws/sealed/new.txt", "content": "x"})
    assert message(result).startswith("EACCES: Permission denied")
    assert not os.path.exists("/ws/sealed/new.txt")

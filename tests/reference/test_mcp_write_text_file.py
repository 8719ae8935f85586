"""The mcp-write-text-file reference (seed 003): write_text_file, its error table and ACP events.

Fault cases (permission denied, read-only file system, disk full) run on pyfakefs with
``allow_root_user=False``; the read-only file system is an ``open`` that raises EROFS.
"""

from __future__ import annotations

import builtins
import errno
from pathlib import Path

import pytest
from pyfakefs.fake_filesystem_unittest import Patcher

from reference_impl import UnknownTool
from reference_impl import mcp_write_text_file as mcp

TOOL = "write_text_file"


def write(path: Path | str, content, session: mcp.Session | None = None) -> dict:
    """Runs one write_text_file call and returns its normal form."""
    session = session or mcp.Session("/", {})
    return session.call(TOOL, {"path": str(path) if isinstance(path, Path) else path, "content": content})


@pytest.fixture
def fake_fs():
    """A pyfakefs file system on which file modes apply to this (root) process."""
    with Patcher(allow_root_user=False) as patcher:
        yield patcher.fs


def test_unknown_tool_raises():
    with pytest.raises(UnknownTool):
        mcp.Session("/").call("read_text_file", {})


def test_unknown_option_is_refused():
    with pytest.raises(ValueError):
        mcp.Session("/", {"colour": "red"})


# TC1-TC3, TC8 and the output


def test_tc1_create_new_file(tmp_path):
    result = write(tmp_path / "new.txt", "Hello\n")
    assert result["output"] == {"success": True, "bytes_written": 6, "created": True}
    assert "error" not in result
    assert (tmp_path / "new.txt").read_bytes() == b"Hello\n"


def test_tc2_overwrite_existing_file(tmp_path):
    (tmp_path / "existing.txt").write_text("Old content\n")
    result = write(tmp_path / "existing.txt", "New content\n")
    assert result["output"] == {"success": True, "bytes_written": 12, "created": False}
    assert (tmp_path / "existing.txt").read_bytes() == b"New content\n"


def test_tc3_empty_file(tmp_path):
    assert write(tmp_path / "empty.txt", "")["output"] == {"success": True, "bytes_written": 0, "created": True}
    assert (tmp_path / "empty.txt").read_bytes() == b""


def test_tc8_one_mebibyte(tmp_path):
    content = ("0123456789abcdef" * 65536)
    result = write(tmp_path / "large.txt", content)
    assert result["output"] == {"success": True, "bytes_written": 1048576, "created": True}
    assert (tmp_path / "large.txt").stat().st_size == 1048576


@pytest.mark.parametrize("content, size", [("h\u00e9llo w\u00f6rld \u2713\n", 18), ("\U0001f600", 4),
                                           ("a\r\nb\r\n", 6), ("\ufeffx", 4)])
def test_bytes_written_is_the_utf8_length_and_content_is_kept_as_given(tmp_path, content, size):
    assert write(tmp_path / "u.txt", content)["output"]["bytes_written"] == size
    assert (tmp_path / "u.txt").read_bytes() == content.encode("utf-8")


def test_overwrite_truncates(tmp_path):
    (tmp_path / "long.txt").write_text("x" * 1000)
    write(tmp_path / "long.txt", "short\n")
    assert (tmp_path / "long.txt").read_bytes() == b"short\n"


def test_second_write_in_a_session_has_created_false(tmp_path):
    session = mcp.Session(str(tmp_path))
    assert write(tmp_path / "t.txt", "a", session)["output"]["created"] is True
    assert write(tmp_path / "t.txt", "b", session)["output"]["created"] is False


# The error table


@pytest.mark.parametrize("path", ["relative/path.txt", "", "./a.txt", "../x", "C:\\test\\a.txt"])
def test_relative_path_is_32600(path):
    assert write(path, "data")["error"] == {"code": -32600, "message": f"Path must be absolute: {path}"}


def test_tc6_parent_directory_not_found(tmp_path):
    result = write(tmp_path / "missing-dir/file.txt", "data")
    assert result["error"] == {"code": -32001, "message": f"Parent directory not found: {tmp_path}/missing-dir"}
    assert not (tmp_path / "missing-dir").exists()


def test_parent_not_found_names_the_immediate_parent(tmp_path):
    result = write(tmp_path / "a/b/c.txt", "data")
    assert result["error"]["message"] == f"Parent directory not found: {tmp_path}/a/b"


def test_tc7_path_is_directory(tmp_path):
    (tmp_path / "dir").mkdir()
    result = write(tmp_path / "dir", "data")
    assert result["error"] == {"code": -32003, "message": f"{tmp_path}/dir is a directory"}
    assert (tmp_path / "dir").is_dir()


def test_parent_is_a_file_falls_to_internal_error(tmp_path):
    (tmp_path / "file.txt").write_text("x")
    result = write(tmp_path / "file.txt/x.txt", "data")
    assert result["error"] == {"code": -32603, "message": "Not a directory (os error 20)"}


@pytest.mark.parametrize("args", [{"path": "/x"}, {"content": "x"}, {"path": 1, "content": "x"},
                                  {"path": "/x", "content": None}, {"path": "/x", "content": "a\ud800"}])
def test_malformed_params_are_32602(args):
    result = mcp.Session("/").call(TOOL, args)
    assert result["error"]["code"] == -32602


@pytest.mark.parametrize("path, parent", [("/a/b/c.txt", "/a/b"), ("/a.txt", "/"), ("/a/b/", "/a"),
                                          ("/a//b", "/a"), ("/", "")])
def test_parent_path_follows_rust_path_parent(path, parent):
    assert mcp.parent_path(path) == parent


def test_tc4_permission_denied(fake_fs):
    fake_fs.create_dir("/test/root", perm_bits=0o555)
    result = write("/test/root/secret.txt", "data")
    assert result["error"] == {"code": -32002, "message": "Permission denied: /test/root/secret.txt"}
    assert not Path("/test/root/secret.txt").exists()


def test_read_only_file_is_permission_denied(fake_fs):
    fake_fs.create_file("/test/locked.txt", contents="keep", st_mode=0o100444)
    result = write("/test/locked.txt", "data")
    assert result["error"] == {"code": -32002, "message": "Permission denied: /test/locked.txt"}
    assert Path("/test/locked.txt").read_text() == "keep"


def test_disk_full(fake_fs):
    fake_fs.create_dir("/test")
    fake_fs.set_disk_usage(1 << 40, "/test")
    fake_fs.set_disk_usage(fake_fs.get_disk_usage("/test").used, "/test")
    result = write("/test/full.txt", "h\u00e9llo")
    assert result["error"] == {"code": -32005, "message": "Disk full: cannot write 6 bytes to /test/full.txt"}


def test_read_only_file_system(fake_fs, monkeypatch):
    fake_fs.create_dir("/test/ro")

    def read_only_open(path, mode="r", *args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system", path)

    monkeypatch.setattr(builtins, "open", read_only_open)
    result = write("/test/ro/a.txt", "data")
    assert result["error"] == {"code": -32002, "message": "Read-only filesystem: /test/ro/a.txt"}


# ACP Event Mapping


def test_success_events(tmp_path):
    path = str(tmp_path / "file.txt")
    result = mcp.Session(str(tmp_path), {"session_id": "sess-9"}).call(TOOL, {"path": path, "content": "Hello, World!\n"})
    assert result["events"] == [
        {"method": "session/update", "params": {"sessionId": "sess-9", "update": {
            "type": "toolCall", "id": "call-1", "kind": "write", "status": "pending", "title": "write_text_file",
            "locations": [{"path": path}], "rawInput": {"path": path, "content": "Hello, World!\n"}}}},
        {"method": "session/update", "params": {"sessionId": "sess-9", "update": {
            "type": "toolCallUpdate", "id": "call-1",
            "fields": {"status": "completed", "rawOutput": {"success": True, "bytes_written": 14, "created": True}}}}},
    ]


def test_failure_events_end_with_status_failed(tmp_path):
    result = write(tmp_path / "missing/x.txt", "data")
    begin, end = result["events"]
    assert begin["params"]["update"]["status"] == "pending"
    assert end["params"]["update"]["fields"] == {"status": "failed", "rawOutput": {"error": result["error"]}}
    assert begin["params"]["update"]["id"] == end["params"]["update"]["id"]


def test_call_ids_count_up_per_session(tmp_path):
    session = mcp.Session(str(tmp_path))
    ids = [write(tmp_path / f"{n}.txt", "x", session)["events"][0]["params"]["update"]["id"] for n in range(3)]
    assert ids == ["call-1", "call-2", "call-3"]


def test_raw_input_truncation():
    assert mcp.truncate_utf8("a" * 10240, 10240) == "a" * 10240
    assert mcp.truncate_utf8("a" * 10241, 10240) == "a" * 10240
    # A character is never split: 3-byte characters cut at a whole character.
    assert mcp.truncate_utf8("\u2713" * 4000, 10240) == "\u2713" * 3413


def test_raw_input_in_the_event_is_truncated_but_the_file_is_whole(tmp_path):
    content = "x" * 20000
    result = write(tmp_path / "big.txt", content)
    assert result["events"][0]["params"]["update"]["rawInput"]["content"] == "x" * 10240
    assert (tmp_path / "big.txt").read_text() == content

"""The aptix-tul-004 reference (seed 002): workspace_create_file, section by section.

Fault cases (permissions, read-only file system, full disk) run on pyfakefs with
``allow_root_user=False``, since the tests run as root and modes would not bite otherwise.
"""

from __future__ import annotations

import errno
import hashlib
import os
from pathlib import Path

import pytest
from pyfakefs.fake_filesystem_unittest import Patcher

from reference_impl import UnknownTool
from reference_impl import aptix_tul_004 as aptix

TOOL = "workspace_create_file"
FIELDS = {"success", "message", "path", "sizeBytes", "hash", "created", "overwritten", "errorCode"}


def create(root: Path | str, options: dict | None = None, **args) -> dict:
    """Runs one workspace_create_file call in a fresh session and returns its normal form."""
    return aptix.Session(str(root), options or {}).call(TOOL, args)


def entries(root: Path) -> dict[str, bytes | str | None]:
    """Returns every entry under ``root``: file bytes, a link's target, or None for a directory."""
    out: dict[str, bytes | str | None] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            if os.path.islink(path):
                out[rel] = os.readlink(path)
            elif os.path.isdir(path):
                out[rel] = None
            elif os.path.isfile(path):
                out[rel] = Path(path).read_bytes()
            else:  # a FIFO or socket: opening it could block
                out[rel] = f"special {os.lstat(path).st_mode:o}"
    return out


@pytest.fixture
def fake_fs():
    """A pyfakefs file system on which file modes apply to this (root) process."""
    with Patcher(allow_root_user=False) as patcher:
        yield patcher.fs


def set_free(fs, path: str, free: int) -> None:
    """Leaves exactly ``free`` bytes free on the fake file system holding ``path``."""
    fs.set_disk_usage(1 << 40, path)  # makes pyfakefs count what is already used
    fs.set_disk_usage(fs.get_disk_usage(path).used + free, path)


# §4.1 / interface


def test_unknown_tool_raises(tmp_path):
    with pytest.raises(UnknownTool):
        aptix.Session(str(tmp_path)).call("workspace_delete_file", {})


@pytest.mark.parametrize("options", [{"colour": "red"}, {"max_size": -1}, {"max_size": "10"},
                                     {"max_size": True}, {"hash": "no-such-hash"}, {"hash": "shake_128"}])
def test_bad_options_are_refused(tmp_path, options):
    with pytest.raises(ValueError):
        aptix.Session(str(tmp_path), options)


# §4.3 response payload and §5.1 step 7


def test_create_returns_every_field(tmp_path):
    result = create(tmp_path, path="src/Services/AgentOrchestrator.cs",
                    content="using System;\n\npublic class AgentOrchestrator { }\n", overwrite=False)
    data = b"using System;\n\npublic class AgentOrchestrator { }\n"
    assert result["output"] == {
        "success": True, "message": "File created.", "path": "src/Services/AgentOrchestrator.cs",
        "sizeBytes": len(data), "hash": hashlib.sha256(data).hexdigest(),
        "created": True, "overwritten": False, "errorCode": None,
    }
    assert (tmp_path / "src/Services/AgentOrchestrator.cs").read_bytes() == data
    assert "error" not in result


def test_failure_is_a_payload_with_every_field_never_an_error(tmp_path):
    result = create(tmp_path, path="../x", content="x")
    assert "error" not in result
    assert set(result["output"]) == FIELDS
    assert result["output"]["success"] is False
    assert result["output"]["overwritten"] is False
    assert result["output"]["sizeBytes"] == 0 and result["output"]["hash"] is None


# §5.1 step 1: validate input


@pytest.mark.parametrize("path", ["", "   ", "\t\n", None, 7, ["a"]])
def test_empty_whitespace_or_non_string_path_is_invalid(tmp_path, path):
    result = create(tmp_path, path=path, content="x")
    assert result["output"]["errorCode"] == "InvalidPath"
    assert entries(tmp_path) == {}


def test_missing_path_is_invalid(tmp_path):
    result = aptix.Session(str(tmp_path)).call(TOOL, {"content": "x"})
    assert result["output"]["errorCode"] == "InvalidPath"


@pytest.mark.parametrize("args", [{"path": "a.txt"}, {"path": "a.txt", "content": None},
                                  {"path": "a.txt", "content": 42}])
def test_missing_null_or_non_string_content_is_unhandled(tmp_path, args):
    result = aptix.Session(str(tmp_path)).call(TOOL, args)
    assert result["output"]["errorCode"] == "UnhandledException"
    assert entries(tmp_path) == {}


def test_empty_content_is_allowed(tmp_path):
    result = create(tmp_path, path="e.txt", content="")
    assert result["output"]["success"] is True and result["output"]["sizeBytes"] == 0
    assert (tmp_path / "e.txt").read_bytes() == b""


def test_overwrite_defaults_to_false_and_null_means_default(tmp_path):
    (tmp_path / "a.txt").write_text("old")
    assert create(tmp_path, path="a.txt", content="new")["output"]["errorCode"] == "FileExists"
    assert create(tmp_path, path="a.txt", content="new", overwrite=None)["output"]["errorCode"] == "FileExists"
    assert (tmp_path / "a.txt").read_text() == "old"


def test_non_boolean_overwrite_is_refused(tmp_path):
    (tmp_path / "a.txt").write_text("old")
    result = create(tmp_path, path="a.txt", content="new", overwrite="yes")
    assert result["output"]["errorCode"] == "UnhandledException"
    assert (tmp_path / "a.txt").read_text() == "old"


# §5.1 step 2 and §5.2: normalise and confine the path


@pytest.mark.parametrize("raw, normal", [
    ("a.txt", "a.txt"), ("./a.txt", "a.txt"), ("a//b.txt", "a/b.txt"), ("a/../b.txt", "b.txt"),
    ("src\\lib\\x.txt", "src/lib/x.txt"), ("src\\lib/x.txt", "src/lib/x.txt"), ("a\\..\\b.txt", "b.txt"),
    ("a/./b/../c.txt", "a/c.txt"), (" a.txt ", " a.txt "), ("ab:c.txt", "ab:c.txt"),
])
def test_valid_paths_normalise(tmp_path, raw, normal):
    result = create(tmp_path, path=raw, content="d")
    assert result["output"]["success"] is True, result
    assert result["output"]["path"] == normal
    assert (tmp_path / normal).read_text() == "d"


@pytest.mark.parametrize("raw", [
    "/etc/x", "/usr/local/x", "C:\\x", "C:/x", "c:x", "d:\\work\\x.txt", "\\\\srv\\share\\x", "//srv/share/x",
    "../x", "..", "a/../../x", "a\\..\\..\\x", "a/b/../../../x", "./../x", ".", "a/..", "docs/", "a\x00b",
])
def test_invalid_paths_are_refused(tmp_path, raw):
    root = tmp_path / "a" / "ws"  # deep enough that "a/b/../../../x" would still land in tmp_path
    root.mkdir(parents=True)
    before = entries(tmp_path)
    result = create(root, path=raw, content="d")
    assert result["output"]["errorCode"] == "InvalidPath"
    assert result["output"]["success"] is False
    assert entries(tmp_path) == before


def test_absolute_path_into_the_workspace_is_refused(tmp_path):
    result = create(tmp_path, path=str(tmp_path / "a.txt"), content="d")
    assert result["output"]["errorCode"] == "InvalidPath"
    assert not (tmp_path / "a.txt").exists()


def test_symlinked_directory_outside_the_root_is_refused(tmp_path):
    root, outside = tmp_path / "ws", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "out").symlink_to(outside)
    (root / "up").symlink_to("..")
    for path in ("out/x.txt", "up/x.txt", "up/outside/x.txt"):
        result = create(root, path=path, content="d")
        assert result["output"]["errorCode"] == "InvalidPath", path
    assert list(outside.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["outside", "ws"]


def test_file_symlink_outside_the_root_is_refused_even_with_overwrite(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    (tmp_path / "target.txt").write_text("outside")
    (root / "link.txt").symlink_to("../target.txt")
    result = create(root, path="link.txt", content="d", overwrite=True)
    assert result["output"]["errorCode"] == "InvalidPath"
    assert (tmp_path / "target.txt").read_text() == "outside"


def test_symlink_inside_the_root_is_followed(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to("real")
    result = create(tmp_path, path="alias/new.txt", content="d")
    assert result["output"]["success"] is True
    assert result["output"]["path"] == "alias/new.txt"
    assert (tmp_path / "real/new.txt").read_text() == "d"
    assert (tmp_path / "alias").is_symlink()


def test_overwrite_through_an_inner_file_link_keeps_the_link(tmp_path):
    (tmp_path / "real.txt").write_text("old")
    (tmp_path / "link.txt").symlink_to("real.txt")
    result = create(tmp_path, path="link.txt", content="new", overwrite=True)
    assert result["output"]["overwritten"] is True
    assert (tmp_path / "link.txt").is_symlink()
    assert (tmp_path / "real.txt").read_text() == "new"


# §5.1 step 3 and §4.2 overwrite


def test_existing_file_without_overwrite_is_file_exists(tmp_path):
    (tmp_path / "a.txt").write_text("old")
    result = create(tmp_path, path="a.txt", content="new", overwrite=False)
    assert result["output"]["errorCode"] == "FileExists"
    assert result["output"]["path"] == "a.txt"
    assert (tmp_path / "a.txt").read_text() == "old"


def test_overwrite_replaces_and_reports_it(tmp_path):
    (tmp_path / "a.txt").write_text("a much longer old content\n")
    result = create(tmp_path, path="a.txt", content="new\n", overwrite=True)["output"]
    assert (result["success"], result["created"], result["overwritten"], result["sizeBytes"]) == (True, False, True, 4)
    assert result["message"] == "File overwritten."
    assert (tmp_path / "a.txt").read_bytes() == b"new\n"


def test_overwrite_on_a_missing_file_is_a_create(tmp_path):
    result = create(tmp_path, path="n.txt", content="x", overwrite=True)["output"]
    assert (result["created"], result["overwritten"]) == (True, False)


def test_overwrite_keeps_the_mode(tmp_path):
    path = tmp_path / "secret.env"
    path.write_text("A=1\n")
    path.chmod(0o600)
    create(tmp_path, path="secret.env", content="B=2\n", overwrite=True)
    assert path.stat().st_mode & 0o777 == 0o600


def test_directory_at_the_path(tmp_path):
    (tmp_path / "docs").mkdir()
    assert create(tmp_path, path="docs", content="x")["output"]["errorCode"] == "FileExists"
    assert create(tmp_path, path="docs", content="x", overwrite=True)["output"]["errorCode"] == "WriteFailed"
    assert (tmp_path / "docs").is_dir()


# §5.1 step 4: parents


def test_missing_parents_are_created(tmp_path):
    result = create(tmp_path, path="a/b/c/d.txt", content="x")
    assert result["output"]["success"] is True
    assert (tmp_path / "a/b/c/d.txt").read_text() == "x"


@pytest.mark.parametrize("path", ["a.txt/b.txt", "a.txt/sub/c.txt"])
def test_parent_that_is_a_file_is_directory_create_failed(tmp_path, path):
    (tmp_path / "a.txt").write_text("file")
    result = create(tmp_path, path=path, content="x")
    assert result["output"]["errorCode"] == "DirectoryCreateFailed"
    assert entries(tmp_path) == {"a.txt": b"file"}


def test_directories_made_by_a_failed_call_are_removed(tmp_path, monkeypatch):
    def fail_replace(src, dst):
        raise OSError(errno.EIO, "I/O error")

    monkeypatch.setattr(aptix.os, "replace", fail_replace)
    result = create(tmp_path, path="new/deep/x.txt", content="x")
    assert result["output"]["errorCode"] == "WriteFailed"
    assert entries(tmp_path) == {}


# §5.1 step 5 and §3.3: UTF-8 without BOM, \n line endings


@pytest.mark.parametrize("content, data", [
    ("a\r\nb\r\n", b"a\nb\n"), ("a\rb\r", b"a\nb\n"), ("one\r\ntwo\nthree\r", b"one\ntwo\nthree\n"),
    ("\r\r\n", b"\n\n"), ("h\u00e9llo \u2713\n", "h\u00e9llo \u2713\n".encode()),
    ("\ufeffhello\n", b"hello\n"), ("\ufeff\ufeffhi", b"hi"), ("a\ufeffb", "a\ufeffb".encode()),
])
def test_final_bytes(tmp_path, content, data):
    result = create(tmp_path, path="f.txt", content=content)["output"]
    assert (tmp_path / "f.txt").read_bytes() == data
    assert result["sizeBytes"] == len(data)
    assert result["hash"] == hashlib.sha256(data).hexdigest()


def test_lone_surrogate_is_unhandled(tmp_path):
    result = create(tmp_path, path="s.txt", content="a\ud800b")
    assert result["output"]["errorCode"] == "UnhandledException"
    assert entries(tmp_path) == {}


# §5.4 atomicity


def test_failed_replace_leaves_old_content_and_no_temp_file(tmp_path, monkeypatch):
    (tmp_path / "a.txt").write_text("old")

    def fail_replace(src, dst):
        raise OSError(errno.EIO, "I/O error")

    monkeypatch.setattr(aptix.os, "replace", fail_replace)
    result = create(tmp_path, path="a.txt", content="new", overwrite=True)
    assert result["output"]["errorCode"] == "WriteFailed"
    assert entries(tmp_path) == {"a.txt": b"old"}


def test_success_leaves_no_temp_file(tmp_path):
    create(tmp_path, path="d/a.txt", content="one")
    create(tmp_path, path="d/a.txt", content="two", overwrite=True)
    assert entries(tmp_path) == {"d": None, "d/a.txt": b"two"}


# §5.3 size limit


def test_too_large_writes_nothing(tmp_path):
    result = create(tmp_path, {"max_size": 4}, path="new/dir/big.txt", content="hello")
    assert result["output"]["errorCode"] == "TooLarge"
    assert entries(tmp_path) == {}


def test_size_limit_is_inclusive_and_counts_final_bytes(tmp_path):
    assert create(tmp_path, {"max_size": 5}, path="a.txt", content="hello")["output"]["success"] is True
    assert create(tmp_path, {"max_size": 4}, path="b.txt", content="\u00e9\u00e9\u00e9")["output"]["errorCode"] == "TooLarge"
    assert create(tmp_path, {"max_size": 3}, path="c.txt", content="a\r\nb")["output"]["success"] is True


def test_too_large_overwrite_keeps_old(tmp_path):
    (tmp_path / "a.txt").write_text("small")
    result = create(tmp_path, {"max_size": 8}, path="a.txt", content="much larger content", overwrite=True)
    assert result["output"]["errorCode"] == "TooLarge"
    assert (tmp_path / "a.txt").read_text() == "small"


def test_file_exists_is_checked_before_size(tmp_path):
    (tmp_path / "a.txt").write_text("x")
    assert create(tmp_path, {"max_size": 1}, path="a.txt", content="too large")["output"]["errorCode"] == "FileExists"


# §5.1 step 6: hash


@pytest.mark.parametrize("algorithm", ["sha256", "sha1", "md5", "sha512", "blake2b"])
def test_hash_algorithm_option(tmp_path, algorithm):
    result = create(tmp_path, {"hash": algorithm}, path="h.txt", content="hello\n")
    assert result["output"]["hash"] == hashlib.new(algorithm, b"hello\n").hexdigest()


def test_hash_failure_is_hash_failed_with_the_content_written(tmp_path, monkeypatch):
    def broken(self, data):
        raise RuntimeError("hash service down")

    monkeypatch.setattr(aptix.Session, "_hash", broken)
    result = create(tmp_path, path="h.txt", content="hello\n")["output"]
    assert (result["success"], result["errorCode"], result["hash"]) == (False, "HashFailed", None)
    assert (result["created"], result["overwritten"], result["sizeBytes"]) == (True, False, 6)
    assert (tmp_path / "h.txt").read_bytes() == b"hello\n"


def test_unexpected_error_is_unhandled_exception(tmp_path, monkeypatch):
    def boom(path):
        raise RuntimeError("unexpected")

    monkeypatch.setattr(aptix.os.path, "lexists", boom)
    result = create(tmp_path, path="a.txt", content="x")["output"]
    assert (result["success"], result["errorCode"]) == (False, "UnhandledException")


# §6.2 client event


def test_event_carries_every_field_and_the_option_ids(tmp_path):
    options = {"session_id": "s-42", "conversation_id": "c-7", "turn_id": "t-3"}
    result = create(tmp_path, options, path="docs\\a.md", content="# A\n")
    digest = hashlib.sha256(b"# A\n").hexdigest()
    assert result["events"] == [{
        "name": "Tool.CreateFile.Executed",
        "fields": {"SessionId": "s-42", "ConversationId": "c-7", "TurnId": "t-3", "Path": "docs/a.md",
                   "Overwrite": False, "Success": True, "ErrorCode": None, "SizeBytes": 4, "Hash": digest},
    }]


def test_event_on_failure_and_default_ids(tmp_path):
    (tmp_path / "a.txt").write_text("x")
    [event] = create(tmp_path, path="a.txt", content="y", overwrite=False)["events"]
    assert event["fields"] == {"SessionId": "session-1", "ConversationId": "conversation-1", "TurnId": "turn-1",
                               "Path": "a.txt", "Overwrite": False, "Success": False, "ErrorCode": "FileExists",
                               "SizeBytes": 0, "Hash": None}


# Faults on pyfakefs (modes bite, disk space is finite)


def test_unwritable_directory_is_write_failed(fake_fs):
    fake_fs.create_dir("/ws/sealed", perm_bits=0o555)
    result = create("/ws", path="sealed/x.txt", content="data")
    assert result["output"]["errorCode"] == "WriteFailed"
    assert "permission denied" in result["output"]["message"]
    assert os.listdir("/ws/sealed") == []


def test_unwritable_parent_is_directory_create_failed(fake_fs):
    fake_fs.create_dir("/ws/sealed", perm_bits=0o555)
    result = create("/ws", path="sealed/sub/x.txt", content="data")
    assert result["output"]["errorCode"] == "DirectoryCreateFailed"
    assert os.listdir("/ws/sealed") == []


def test_read_only_file_is_not_replaced(fake_fs):
    fake_fs.create_file("/ws/locked.txt", contents="old", st_mode=0o100444)
    result = create("/ws", path="locked.txt", content="new", overwrite=True)
    assert result["output"]["errorCode"] == "WriteFailed"
    assert Path("/ws/locked.txt").read_text() == "old"


def test_full_disk_is_write_failed_without_leftovers(fake_fs):
    fake_fs.create_dir("/ws/out")
    set_free(fake_fs, "/ws", 10)
    result = create("/ws", path="out/x.txt", content="more than ten bytes")
    assert result["output"]["errorCode"] == "WriteFailed"
    assert "no space" in result["output"]["message"]
    assert os.listdir("/ws/out") == []


def test_full_disk_overwrite_keeps_old_content(fake_fs):
    fake_fs.create_file("/ws/keep.txt", contents="the old content\n")
    set_free(fake_fs, "/ws", 10)
    result = create("/ws", path="keep.txt", content="a replacement that does not fit\n", overwrite=True)
    assert result["output"]["errorCode"] == "WriteFailed"
    assert os.listdir("/ws") == ["keep.txt"]
    assert Path("/ws/keep.txt").read_text() == "the old content\n"


def test_full_disk_removes_the_parents_it_made(fake_fs):
    fake_fs.create_dir("/ws")
    set_free(fake_fs, "/ws", 10)
    result = create("/ws", path="new/deep/x.txt", content="more than ten bytes")
    assert result["output"]["errorCode"] == "WriteFailed"
    assert os.listdir("/ws") == []


def test_read_only_file_system_is_write_failed(fake_fs, monkeypatch):
    fake_fs.create_dir("/ws/ro")
    real_open = os.open

    def read_only_open(path, flags, *args, **kwargs):
        if os.fspath(path).startswith("/ws/ro/") and flags & os.O_CREAT:
            raise OSError(errno.EROFS, "Read-only file system", path)
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(aptix.os, "open", read_only_open)
    result = create("/ws", path="ro/x.txt", content="data")
    assert result["output"]["errorCode"] == "WriteFailed"
    assert "read-only" in result["output"]["message"]
    assert os.listdir("/ws/ro") == []

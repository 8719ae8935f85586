"""How the harness reads a workspace back: the state recorded, the laid-out state, the canaries' descriptors."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from harness.containment import enclosure as enclosure_mod
from harness.containment.enclosure import Enclosure
from harness.run import judge as judge_mod
from harness.run import workspace as workspace_mod
from harness.run.file_ops import read_regular
from harness.run.judge import check_then
from harness.run.workspace import Workspace, entry_state
from harness.util import limits


def _fwalk_state(ws: Workspace, with_text: bool = True) -> dict:
    """The workspace state as os.fwalk visits it (follow_symlinks=False), each entry read afresh."""
    out: dict = {}
    budget = workspace_mod._Budget()
    root = str(ws.root)
    for dirpath, dirnames, filenames, dir_fd in os.fwalk(root, follow_symlinks=False):
        prefix = dirpath[len(root) + 1:]
        prefix = prefix + "/" if prefix else ""
        deepest = dirnames and prefix.count("/") >= limits.MAX_DEPTH - 1
        for name in sorted(dirnames + filenames):
            if budget.entries >= limits.MAX_ENTRIES:
                out["<capped>"] = {"type": "capped", "why": f"more than {limits.MAX_ENTRIES} entries; "
                                                            "the rest is not recorded"}
                dirnames.clear()
                break
            budget.entries += 1
            out[prefix + name] = entry_state(name, with_text=with_text, dir_fd=dir_fd, budget=budget,
                                             key_path=prefix + name)
        if deepest and dirnames:
            out.setdefault("<capped>", {"type": "capped", "why": f"folders nested more than {limits.MAX_DEPTH} "
                                                                 "deep; what is below is not recorded"})
            dirnames.clear()
    return dict(sorted(out.items()))


@pytest.fixture
def tree(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    ws = Workspace(parent=str(tmp_path))
    ws.populate({"dirs": ["d/e", "z"], "files": {"a.txt": "a\n", "d/b.txt": "bb\n", "d/e/c.bin": {"hex": "00ff"},
                                                  "z/last.txt": "z\n"},
                 "symlinks": {"d/to-e": "e"}}, {"workspace": str(ws.root)}, record_initial=False)
    os.symlink(outside, ws.root / "link-out")  # as a candidate may make it
    os.mkfifo(ws.root / "d" / "pipe")
    yield ws
    ws.remove()


@pytest.mark.parametrize("cap", [1, 2, 3, 5, 8, 20000])
@pytest.mark.parametrize("depth", [1, 2, 256])
def test_the_state_holds_what_fwalk_visits_in_its_order_under_the_entry_and_depth_caps(tree, monkeypatch, cap, depth):
    monkeypatch.setattr(limits, "MAX_ENTRIES", cap)
    monkeypatch.setattr(limits, "MAX_DEPTH", depth)
    assert tree.state() == _fwalk_state(tree)
    assert tree.state(with_text=False) == _fwalk_state(tree, with_text=False)


def test_the_state_never_enters_a_link_to_a_folder(tree):
    recorded = tree.state()
    assert recorded["link-out"] == {"type": "symlink", "target": str(Path(tree.root).parent.parent / "outside")}
    assert recorded["d/to-e"] == {"type": "symlink", "target": "e"}
    assert not any(name.startswith(("link-out/", "d/to-e/")) for name in recorded)
    assert recorded["d/pipe"]["type"] == "fifo"


def test_a_workspace_replaced_by_a_fifo_or_a_link_is_recorded_empty_without_blocking(tmp_path):
    ws = Workspace(parent=str(tmp_path))
    try:
        os.rmdir(ws.root)
        os.mkfifo(ws.root)
        found: list = []
        reader = threading.Thread(target=lambda: found.append(ws.state()), daemon=True)
        reader.start()
        reader.join(10)
        if reader.is_alive():  # opened for reading, it waits for a writer: give it one, then fail
            os.close(os.open(ws.root, os.O_WRONLY | os.O_NONBLOCK))
            reader.join(10)
            pytest.fail("the state opened the FIFO the workspace was replaced by")
        assert found == [{}]
        os.unlink(ws.root)
        os.symlink(tmp_path, ws.root)
        assert ws.state() == {}
    finally:
        if not stat.S_ISDIR(os.lstat(ws.root).st_mode):
            os.unlink(ws.root)
            os.mkdir(ws.root)
        ws.remove()


def test_the_laid_out_state_is_what_reading_the_files_back_gives(tmp_path):
    ws = Workspace(parent=str(tmp_path))
    try:
        ws.populate({"dirs": [{"path": "locked", "mode": "0700"}],
                     "files": {"a.txt": "one\n", "sub/deep/b.txt": {"content": "two\n", "mode": "0600"},
                               "./a.txt": "again\n", "big.txt": {"lines": 5000}, "empty": ""},
                     "symlinks": {"to-a": "a.txt"}}, {"workspace": str(ws.root)}, record_initial=True)
        ws._states.clear()
        assert ws.initial == ws.state(with_text=False)
        assert ws.initial["a.txt"]["size"] == len("again\n")
    finally:
        ws.remove()


def test_files_laid_out_for_a_later_reading_are_recorded_from_their_bytes_as_reading_them_gives(tmp_path, monkeypatch):
    given = {"files": {"a.txt": "one\n", "sub/b.bin": {"hex": "00ff80"}, "long.txt": {"lines": 2000},
                       "empty": "", "mode.txt": {"content": "m\n", "mode": "0600"}}}
    ws = Workspace(parent=str(tmp_path))
    try:
        ws.populate(given, {"workspace": str(ws.root)}, record_initial=False, read_later=True)
        read: list[str] = []
        real = workspace_mod._file_state
        monkeypatch.setattr(workspace_mod, "_file_state", lambda path, *rest: read.append(path) or real(path, *rest))
        recorded, without_text = ws.state(), ws.state(with_text=False)
        assert read == ["mode.txt", "mode.txt"]  # (its chmod after the write changed its signature: read back)
        assert recorded == _fwalk_state(ws) and without_text == _fwalk_state(ws, with_text=False)
        (ws.root / "a.txt").write_text("two\n")
        read.clear()
        assert ws.state()["a.txt"]["text"] == "two\n" and read == ["a.txt"]
    finally:
        ws.remove()


def test_a_layout_file_made_right_in_the_root_is_what_the_walk_makes(tmp_path, monkeypatch):
    ws = Workspace(parent=str(tmp_path))
    try:
        os.symlink("target.txt", ws.root / "link")  # as a link laid out before (never written over)
        walked: list[str] = []
        real = workspace_mod.resolve
        monkeypatch.setattr(workspace_mod, "resolve", lambda root, rel, **kw: walked.append(rel) or real(root, rel, **kw))
        ws.populate({"files": {"new.txt": "one\n", "./new.txt": "again\n", "sub/b.txt": "b\n", "link": "through\n"}},
                    {"workspace": str(ws.root)}, record_initial=True)
        assert walked == ["./new.txt", "sub/b.txt", "link"]  # an existing name, a folder on the way, a link
        assert (ws.root / "new.txt").read_text() == "again\n" and (ws.root / "target.txt").read_text() == "through\n"
        assert os.path.islink(ws.root / "link")
        assert oct(stat.S_IMODE(os.lstat(ws.root / "new.txt").st_mode)) == oct(0o666 & ~_umask())
        ws._states.clear()
        assert ws.initial == ws.state(with_text=False)
    finally:
        ws.remove()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_a_file_changed_after_it_was_laid_out_is_read_again(tmp_path):
    ws = Workspace(parent=str(tmp_path))
    try:
        ws.populate({"files": {"a.txt": "one\n", "b.txt": "keep\n"}}, {"workspace": str(ws.root)})
        (ws.root / "b.txt").write_text("kept and longer\n")
        failures = check_then(ws, {"others_unchanged": True}, {})
        assert [f.path for f in failures] == ["then.others_unchanged[b.txt]"]
    finally:
        ws.remove()


@pytest.mark.parametrize("cap", [1, 3, 7, 8, 20000])
def test_a_held_reading_is_what_reading_again_gives(tree, monkeypatch, cap):
    """A target that acts only in its calls (the reference): a reading is held until the workspace may
    change, and what it gives, with or without texts and under any entry cap, is what a walk gives."""
    monkeypatch.setattr(limits, "MAX_ENTRIES", cap)
    caps = (None, 1, 6, 7, 8)
    expected = {(entries, text): tree.state(with_text=text, entries=entries) for entries in caps for text in (True, False)}
    tree.hold_readings = True
    first = tree.state()
    assert first == _fwalk_state(tree)
    for entries in caps:
        assert tree.state(entries=entries) == expected[entries, True]
        assert tree.state(with_text=False, entries=entries) == expected[entries, False]
    first["a.txt"]["size"] = -1  # a caller's change to its copy is not in the next reading
    again = tree.state()
    assert again["a.txt"]["size"] == 2
    again["a.txt"]["size"] = -1
    assert tree.state()["a.txt"]["size"] == 2
    tree.stirred()
    assert tree.state(with_text=False) == expected[None, False]  # held without the texts,
    assert tree.state() == expected[None, True]  # which a reading with them does not take


def test_a_held_reading_is_dropped_when_the_workspace_may_change(tree):
    tree.hold_readings = True
    tree.state()
    (tree.root / "a.txt").write_text("changed by a call\n")
    assert tree.state()["a.txt"]["text"] == "a\n"  # held: between calls nothing changes it
    tree.stirred()  # a call begins
    assert tree.state()["a.txt"]["text"] == "changed by a call\n"
    tree.act("write", "a.txt", content="by an action\n")
    assert tree.state(with_text=False)["a.txt"]["size"] == len("by an action\n")
    tree.act("mkdir", "new")
    assert tree.state()["new"]["type"] == "dir"
    tree.populate({"files": {"laid.txt": "x"}}, {"workspace": str(tree.root)}, record_initial=False)
    assert "laid.txt" in tree.state()


_THEN_MET = {"a.txt": "a\n", "d/b.txt": {"content": "bb\n", "size": 3}, "d/e/c.bin": {"hex": "00ff"},
             "z/last.txt": {"sha256": "c865f6c5ab8d1b0bcd383a5e1e3879d22681c96bf462c269b7581d523fbe70ab", "type": "file"},
             "d/to-e": {"type": "symlink", "target": "e"}, "./a.txt": "a\n", "d/b.txt/": "bb\n"}
_THEN_MISSED = {"a.txt": "b\n", "d/b.txt": {"content": "bb\n", "size": 4}, "z/last.txt": {"type": "dir"},
                "d/e/c.bin": {"hex": "00fe"}, "d/to-e": {"mode": "0700"}, "a.txt ": {"matches": "x"},
                "d/pipe": "x", "link-out/secret.txt": "secret\n", "missing.txt": "", "z/last.txt/": {"sha256": "d" * 64}}


@pytest.mark.parametrize("met", [True, False])
def test_then_files_judged_from_the_reading_held_are_judged_as_by_looking_at_them(tree, monkeypatch, met):
    then = {"files": _THEN_MET if met else _THEN_MISSED}
    looked = check_then(tree, then, {"workspace": str(tree.root)})
    assert (looked == []) == met
    tree.hold_readings = True
    tree.state()
    read: list[str] = []
    monkeypatch.setattr(judge_mod, "read_regular", lambda dir_fd, name, limit: read.append(name) or read_regular(dir_fd, name, limit))
    assert check_then(tree, then, {"workspace": str(tree.root)}) == looked
    if met:  # told by the reading held: no file read again but those it names otherwise
        assert read == ["a.txt", "b.txt"]  # ("./a.txt", "d/b.txt/")
    else:
        assert len(looked) == len(_THEN_MISSED) and "last.txt" in read


def test_a_reading_without_held_readings_is_read_again(tree):
    tree.state()
    (tree.root / "a.txt").write_text("changed\n")
    assert tree.state()["a.txt"]["text"] == "changed\n"


@pytest.mark.parametrize("change", ["cap", "bytes"])
def test_a_reading_cut_short_is_not_held(tree, monkeypatch, change):
    """A capped reading, or one whose files the workspace's byte cap could have cut (reading again,
    records from the cache count no bytes, and a later file may be read further), is read again."""
    if change == "cap":
        monkeypatch.setattr(limits, "MAX_ENTRIES", 2)
    else:
        monkeypatch.setattr(limits, "MAX_WORKSPACE_READ", limits.MAX_FILE_READ + 3)
    tree.hold_readings = True
    before = tree.state()
    assert ("<capped>" in before) == (change == "cap")
    (tree.root / "a.txt").write_text("changed\n")
    assert tree.state()["a.txt"]["size"] == len("changed\n")


def _open_files() -> set[int]:
    """The descriptors of regular files this process holds."""
    found = set()
    for name in os.listdir("/proc/self/fd"):
        try:
            if stat.S_ISREG(os.fstat(int(name)).st_mode):
                found.add(int(name))
        except OSError:
            pass  # the listing's own descriptor, closed by now
    return found


def test_the_canaries_held_open_are_closed_with_their_enclosure(tmp_path):
    before = _open_files()
    enclosure = Enclosure(parent=str(tmp_path))
    assert len(_open_files() - before) == 2
    enclosure.remove()
    assert _open_files() - before == set()


def test_a_canary_replaced_by_a_file_of_the_same_bytes_is_an_escape(tmp_path):
    enclosure = Enclosure(parent=str(tmp_path))
    try:
        enclosure.place()
        canary = enclosure.base / "canary.txt"
        other = enclosure.base / "other"
        other.write_bytes(enclosure_mod.CANARY)
        os.rename(other, canary)
        assert enclosure.escapes() == [f"changed {canary} (rewritten: inode or ctime differs)"]
    finally:
        enclosure.remove()


# -- on pyfakefs (a fault scenario of an in-process target): read by path, nothing real there ----------------------


def _oswalk_state(ws: Workspace, with_text: bool = True) -> dict:
    """The workspace state as os.walk visits it on pyfakefs, each entry read afresh (what the reading
    by path is held to: the same entries, the same records, the same errors)."""
    out: dict = {}
    for dirpath, dirnames, filenames in os.walk(ws.root):
        if dirnames and os.path.relpath(dirpath, ws.root).count(os.sep) >= limits.MAX_DEPTH - 1:
            dirnames.clear()
        for name in sorted(dirnames + filenames):
            full = os.path.join(dirpath, name)
            out[os.path.relpath(full, ws.root).replace(os.sep, "/")] = entry_state(full, with_text=with_text)
    return dict(sorted(out.items()))


def _outcome(read):
    try:
        return read()
    except OSError as exc:
        return type(exc), exc.errno, str(exc)


def _fake_tree(root: Path, closed_mode: int) -> None:
    """Lays out, as a candidate could, what reading a workspace on pyfakefs meets: folders four deep,
    links to a folder and to nothing, files the harness may not read, a folder it may not list."""
    os.makedirs(root / "a" / "b" / "c" / "d")
    (root / "a" / "x.txt").write_text("x\n")
    (root / "a" / "b" / "y.bin").write_bytes(b"\xff\x00")
    (root / "a" / "b" / "c" / "d" / "deep.txt").write_text("deep\n")
    (root / "top.txt").write_text("top\n")
    (root / "secret.txt").write_text("secret\n")
    os.chmod(root / "secret.txt", 0)
    os.symlink("a", root / "to-a")
    os.symlink("missing", root / "dangling")
    os.symlink("a/b", root / "a" / "to-b")
    os.makedirs(root / "closed" / "sub")
    (root / "closed" / "inside.txt").write_text("inside\n")
    (root / "closed" / "sub" / "below.txt").write_text("below\n")
    os.symlink("closed", root / "to-closed")
    os.chmod(root / "closed", closed_mode)


@pytest.mark.parametrize("closed_mode", [0o000, 0o100, 0o300, 0o444, 0o500, 0o755])
@pytest.mark.parametrize("depth", [1, 2, 3, 256])
def test_the_state_on_pyfakefs_holds_what_os_walk_visits_under_the_depth_cap(monkeypatch, closed_mode, depth):
    from harness.targets import faults

    monkeypatch.setattr(limits, "MAX_DEPTH", depth)
    with faults.fake_filesystem():
        ws = Workspace(contained=False)
        _fake_tree(ws.root, closed_mode)
        for text in (True, False):
            assert _outcome(lambda text=text: ws.state(with_text=text)) == _outcome(lambda text=text: _oswalk_state(ws, text))


def test_an_unchanged_workspace_on_pyfakefs_is_not_read_again(monkeypatch):
    from harness.targets import faults

    with faults.fake_filesystem():
        ws = Workspace(contained=False)
        _fake_tree(ws.root, 0o755)
        first = ws.state(with_text=False)  # (read with the text, which this kind leaves out)
        first["a/x.txt"]["mode"] = "changed by a caller"  # (each reading its own)
        monkeypatch.setattr(Workspace, "_walk_plainly", lambda *args: pytest.fail("read again"))
        assert ws.state() == _oswalk_state(ws) and ws.state()["a/x.txt"]["mode"] == "0644"
        assert ws.state(with_text=False) == _oswalk_state(ws, with_text=False)


def _set_fake_uid(uid: int) -> None:
    from pyfakefs import helpers
    helpers.set_uid(uid)


def _rewrite_keeping_mtime(path: Path) -> None:
    before = os.lstat(path)
    path.write_text("X\n")  # the same size
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def _replace_link(path: Path) -> None:
    os.remove(path)
    os.symlink("elsewhere", path)


_CHANGES = [
    ("a file written", lambda root: (root / "new.txt").write_text("new\n")),
    ("a file rewritten, its mtime set back", lambda root: _rewrite_keeping_mtime(root / "a" / "x.txt")),
    ("a file given another mode", lambda root: os.chmod(root / "top.txt", 0o600)),
    ("a folder closed", lambda root: os.chmod(root / "a" / "b", 0o000)),
    ("a folder opened again", lambda root: os.chmod(root / "a" / "b", 0o755)),
    ("an entry renamed", lambda root: os.rename(root / "top.txt", root / "moved.txt")),
    ("a link replaced", lambda root: _replace_link(root / "to-a")),
    ("a folder removed", lambda root: os.rmdir(root / "a" / "b" / "c" / "d" / "e")),
    ("the harness another user", lambda root: _set_fake_uid(2)),
    ("the harness itself again", lambda root: _set_fake_uid(1)),
    ("the folder above closed", lambda root: os.chmod(root.parent, 0o000)),
    ("the folder above opened again", lambda root: os.chmod(root.parent, 0o700)),
]


def test_each_change_to_a_workspace_on_pyfakefs_is_in_the_next_reading(monkeypatch):
    # A reading kept while pyfakefs' records are unchanged: after each kind of change, the next
    # reading is what os.walk reads (and so is the one after it, kept).
    from harness.targets import faults

    with faults.fake_filesystem():
        ws = Workspace(contained=False)
        _fake_tree(ws.root, 0o755)
        os.mkdir(ws.root / "a" / "b" / "c" / "d" / "e")
        try:
            for change, make in [*_CHANGES, ("a shallower depth cap", None)]:
                if make is None:
                    monkeypatch.setattr(limits, "MAX_DEPTH", 2)
                else:
                    ws.state(), ws.state(with_text=False)  # (kept, with the records as they are now)
                    make(ws.root)
                for with_text in (True, False, True):
                    assert ws.state(with_text=with_text) == _oswalk_state(ws, with_text), change
        finally:
            _set_fake_uid(1)


def _readable_tree(root: Path) -> None:
    """What the harness may read whole on pyfakefs: folders four deep, links to a folder and to nothing,
    text, bytes that are no UTF-8, an empty file, one past the text kept, hard links."""
    os.makedirs(root / "a" / "b" / "c" / "d")
    (root / "a" / "x.txt").write_text("x\n")
    (root / "a" / "b" / "y.bin").write_bytes(b"\xff\x00")
    (root / "a" / "b" / "c" / "d" / "deep.txt").write_text("deep\n")
    (root / "empty").write_bytes(b"")
    (root / "long.txt").write_text("l" * (workspace_mod.TEXT_LIMIT + 1))
    (root / "kept.txt").write_text("k\n")
    os.chmod(root / "kept.txt", 0o400)
    os.link(root / "a" / "x.txt", root / "x-again.txt")
    os.symlink("a", root / "to-a")
    os.symlink("missing", root / "dangling")
    os.symlink("a/b", root / "a" / "to-b")


@pytest.mark.parametrize("file_read", [1, 3, 1 << 20])
@pytest.mark.parametrize("depth", [1, 2, 3, 4, 5, 256])
def test_a_workspace_on_pyfakefs_the_harness_may_read_whole_is_read_from_the_records_as_os_walk_reads_it(
        monkeypatch, depth, file_read):
    from harness.targets import faults

    monkeypatch.setattr(limits, "MAX_DEPTH", depth)
    monkeypatch.setattr(limits, "MAX_FILE_READ", file_read)
    with faults.fake_filesystem():
        ws = Workspace(contained=False)
        _readable_tree(ws.root)
        if depth >= 5:  # nothing as deep as the cap: the records tell it all, the fake os is not asked
            monkeypatch.setattr(Workspace, "_walk_plainly", lambda *args: pytest.fail("walked through the fake os"))
        for text in (True, False):
            assert ws.state(with_text=text) == _oswalk_state(ws, text)


@pytest.mark.parametrize("change", [change for change, _ in _CHANGES])
def test_each_change_to_a_workspace_read_from_pyfakefs_records_is_in_the_next_reading(change):
    from harness.targets import faults

    make = dict(_CHANGES)[change]
    with faults.fake_filesystem():
        ws = Workspace(contained=False)
        _readable_tree(ws.root)
        (ws.root / "top.txt").write_text("top\n")
        os.mkdir(ws.root / "a" / "b" / "c" / "d" / "e")
        try:
            ws.state(), ws.state(with_text=False)
            make(ws.root)
            for with_text in (True, False, True):
                assert ws.state(with_text=with_text) == _oswalk_state(ws, with_text), change
        finally:
            _set_fake_uid(1)


_LOOKED_UP = ["a/x.txt", "a", "a/b/y.bin", "to-a", "dangling", "missing", "missing/below", "a/x.txt/below",
              "to-a/x.txt", "a/to-b/y.bin", "secret.txt", "closed", "closed/inside.txt", "closed/sub/below.txt",
              "to-closed/inside.txt", "a//x.txt", "a/./x.txt", "a/../top.txt", "top.txt"]


@pytest.mark.parametrize("closed_mode", [0o000, 0o100, 0o300, 0o444, 0o500, 0o700, 0o755])
def test_a_kind_and_a_read_on_pyfakefs_are_what_the_fake_os_tells(monkeypatch, closed_mode):
    from harness.containment import fake_records
    from harness.targets import faults

    def told(ws: Workspace) -> list:
        found = []
        for rel in _LOOKED_UP:
            for limit in (0, 2, 1 << 20):
                read = _outcome(lambda rel=rel, limit=limit: ws.read(rel, limit))
                found.append(read if isinstance(read, tuple) else (read.kind, read.data, read.size, read.truncated,
                                                                  read.error))
            found.append(_outcome(lambda rel=rel: ws.kind(rel)))
        return found

    with faults.fake_filesystem():
        ws = Workspace(contained=False)
        _fake_tree(ws.root, closed_mode)
        from_records = told(ws)
        asked = []
        monkeypatch.setattr(fake_records, "entry", lambda fs, path: asked.append(path))  # every path asked of the fake os
        assert told(ws) == from_records
        assert asked

"""Properties of the aptix-tul-004 reference (seed 002), checked with hypothesis.

Example counts: confinement 400 examples, hash and bytes 250, normalised response paths 300.
Each example builds its own directory tree (function-scoped fixtures do not mix with ``@given``).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reference_impl import aptix_tul_004 as aptix

# Each example's tree in pytest's temporary folder (tests/reference/conftest.py).
pytestmark = pytest.mark.usefixtures("examples_in_tmp")

TOOL = "workspace_create_file"

# Path pieces that try every way out: parents, absolute and drive prefixes, UNC roots, both
# separators, and links that lead outside (up -> .., sib -> ../sibling, abs -> the base, absolutely).
SEGMENTS = st.sampled_from(["a", "b", "new", "..", ".", "", "up", "sib", "abs", "inner", "file.txt", "C:", "~"])
SEPARATORS = st.sampled_from(["/", "\\"])
PREFIXES = st.sampled_from(["", "", "", "/", "\\", "//srv/share/", "\\\\srv\\share\\", "C:", "C:\\", "c:/", "./", "../"])


@st.composite
def hostile_paths(draw: st.DrawFn) -> str:
    """A relative-looking path built from hostile pieces."""
    parts = draw(st.lists(SEGMENTS, min_size=1, max_size=6))
    separator = draw(SEPARATORS)
    return draw(PREFIXES) + separator.join(parts)


SAFE_NAMES = st.text(alphabet="abcxyz_-.0123456789", min_size=1, max_size=8).filter(lambda s: s not in (".", ".."))
SAFE_PATHS = st.lists(SAFE_NAMES, min_size=1, max_size=3).map("/".join)
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=200)
EOL_HEAVY = st.lists(st.sampled_from(["a", "\u00e9", "\u2713", "\r", "\n", "\r\n", "\ufeff", " "]), max_size=40).map("".join)


def layout() -> tuple[Path, Path]:
    """Makes base/{outside.txt, sibling/s.txt, ws/{a/, file.txt, inner->a, up->.., sib->../sibling, abs->base}}."""
    base = Path(tempfile.mkdtemp(prefix="aptix-prop-"))
    (base / "outside.txt").write_text("outside")
    (base / "sibling").mkdir()
    (base / "sibling" / "s.txt").write_text("sibling")
    root = base / "ws"
    (root / "a").mkdir(parents=True)
    (root / "file.txt").write_text("inside")
    (root / "inner").symlink_to("a")
    (root / "up").symlink_to("..")
    (root / "sib").symlink_to("../sibling")
    (root / "abs").symlink_to(base)
    return base, root


def outside_state(base: Path, root: Path) -> dict[str, object]:
    """Returns every entry under ``base`` but outside ``root``, without following links."""
    state: dict[str, object] = {}
    for dirpath, dirnames, filenames in os.walk(base):
        if Path(dirpath) == root:
            dirnames[:] = []
            continue
        dirnames[:] = [d for d in dirnames if Path(dirpath, d) != root]
        for name in dirnames + filenames:
            path = Path(dirpath, name)
            rel = str(path.relative_to(base))
            if path.is_symlink():
                state[rel] = ("link", os.readlink(path))
            elif path.is_dir():
                state[rel] = ("dir",)
            else:
                state[rel] = ("file", path.read_bytes())
    return state


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(path=hostile_paths(), overwrite=st.booleans())
def test_never_writes_outside_the_root(path, overwrite):
    base, root = layout()
    try:
        before = outside_state(base, root)
        result = aptix.Session(str(root)).call(TOOL, {"path": path, "content": "payload\n", "overwrite": overwrite})
        assert outside_state(base, root) == before, (path, result["output"])
        output = result["output"]
        if output["success"]:
            written = os.path.realpath(root / output["path"])
            assert written.startswith(str(root.resolve()) + os.sep), (path, written)
            assert Path(written).read_bytes() == b"payload\n"
        else:
            assert output["errorCode"] in {"InvalidPath", "FileExists", "DirectoryCreateFailed", "WriteFailed"}
    finally:
        shutil.rmtree(base)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(path=SAFE_PATHS, content=st.one_of(TEXT, EOL_HEAVY), overwrite=st.booleans(), exists=st.booleans())
def test_hash_and_size_describe_the_bytes_on_disk(path, content, overwrite, exists):
    base = Path(tempfile.mkdtemp(prefix="aptix-prop-"))
    try:
        if exists:
            (base / path).parent.mkdir(parents=True, exist_ok=True)
            (base / path).write_bytes(b"previous\r\n")
        output = aptix.Session(str(base)).call(TOOL, {"path": path, "content": content, "overwrite": overwrite})["output"]
        if exists and not overwrite:
            assert output["errorCode"] == "FileExists"
            assert (base / path).read_bytes() == b"previous\r\n"
            return
        data = (base / path).read_bytes()
        assert output["success"] is True
        assert output["hash"] == hashlib.sha256(data).hexdigest()
        assert output["sizeBytes"] == len(data)
        assert (output["created"], output["overwritten"]) == (not exists, exists)
        # UTF-8, no BOM, no CR: the final bytes are the content without leading U+FEFF and with
        # every line ending made \n.
        assert b"\r" not in data and not data.startswith(b"\xef\xbb\xbf")
        assert data.decode("utf-8") == content.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    finally:
        shutil.rmtree(base)


@settings(max_examples=300, deadline=None)
@given(path=hostile_paths())
def test_a_response_path_is_relative_with_forward_slashes(path):
    try:
        normal = aptix.normalize_path(path)
    except aptix.ToolFailure as failure:
        assert failure.code == "InvalidPath"
        return
    assert "\\" not in normal and not normal.startswith("/")
    assert ".." not in normal.split("/") and "." not in normal.split("/") and "" not in normal.split("/")
    assert not (len(normal) >= 2 and normal[1] == ":" and normal[0].isalpha())

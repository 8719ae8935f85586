"""The --run-as tests run from any clone location, also one inside a folder of mode 0700.

``nobody`` cannot traverse such a folder, so the code it must import is copied to a place it can
read; this test builds such a folder for real and imports from the copy as ``nobody``.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tests.adapters.run_as import code_for_others, reachable_by_others


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("python3", path="/usr/bin:/usr/local/bin") is None,
                    reason="needs root (to run as nobody) and a system python3")
def test_code_in_a_0700_folder_is_made_importable_for_another_user(tmp_path):
    private = tmp_path / "clone"
    (private / "pkg_for_nobody").mkdir(parents=True)
    (private / "pkg_for_nobody" / "__init__.py").write_text("ANSWER = 42\n")
    private.chmod(0o700)
    assert not reachable_by_others(private / "pkg_for_nobody")
    copy = code_for_others([private / "pkg_for_nobody"])
    try:
        assert reachable_by_others(copy / "pkg_for_nobody")
        python = shutil.which("python3", path="/usr/bin:/usr/local/bin")
        done = subprocess.run([python, "-c", "import pkg_for_nobody; print(pkg_for_nobody.ANSWER)"],
                              env={"PYTHONPATH": str(copy), "PATH": "/usr/bin:/bin"}, user="nobody",
                              capture_output=True, text=True, cwd="/")
        assert done.stdout.strip() == "42", done.stderr
    finally:
        shutil.rmtree(copy)

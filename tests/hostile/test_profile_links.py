"""A profile file or folder that a checkout brings as a symbolic link is not read through.

Profile files are found inside the scenario folders (the built-in catalog is the checkout's
``scenarios/``, another comes with ``--scenarios``): what lies there is anyone's pull request. A
``profile.yaml`` made a link to a YAML file elsewhere had it read, and its values quoted in the
problems printed (a CI log is public); a built-in profile folder made a link to a folder elsewhere
had its ``profile.yaml`` read as a built-in profile.
"""

from __future__ import annotations

import shutil
import subprocess
import sys

from harness.scenario import profiles
from tests.hostile.conftest import ROOT, write_scenarios

SECRET_PROFILE = "name: TOP-SECRET-4711\ntitle: a profile elsewhere\nfoo: [1]\n"

SCENARIO = """\
id: linked/a
profile: linked
title: t
source: test
steps:
  - tool: Read
    args: {file_path: "${workspace}/a.txt"}
"""


def test_a_profile_file_that_is_a_link_is_not_read_and_its_values_never_shown(tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "profile.yaml").write_text(SECRET_PROFILE, "utf-8")
    folder = tmp_path / "scenarios" / "linked"
    write_scenarios(folder / "sub", SCENARIO, "a.yaml")
    (folder / "profile.yaml").symlink_to(victim / "profile.yaml")
    done = subprocess.run([sys.executable, "-m", "harness", "lint", "--no-builtin", "--scenarios", str(tmp_path / "scenarios")],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    said = done.stdout + done.stderr
    assert done.returncode == 2 and "Traceback" not in said, said
    assert "TOP-SECRET" not in said and str(victim) not in said, said
    assert f"{folder / 'profile.yaml'}:1: [file] cannot read: a symbolic link, not followed" in said, said


def test_a_built_in_profile_folder_that_is_a_link_is_not_a_built_in_profile(tmp_path, monkeypatch):
    catalog = tmp_path / "scenarios"
    (catalog / "claude-code").mkdir(parents=True)
    shutil.copy(profiles.builtin_dir() / "claude-code" / "profile.yaml", catalog / "claude-code" / "profile.yaml")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "profile.yaml").write_text(
        (profiles.builtin_dir() / "claude-code" / "profile.yaml").read_text("utf-8").replace(
            "name: claude-code", "name: from-elsewhere", 1), "utf-8")
    (catalog / "linked").symlink_to(elsewhere, target_is_directory=True)
    monkeypatch.setattr(profiles, "builtin_dir", lambda: catalog)
    assert "from-elsewhere" in profiles.load_file(elsewhere / "profile.yaml").name  # a valid profile, were it read
    assert list(profiles.builtin()) == ["claude-code"]

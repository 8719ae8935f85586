"""Candidates that write outside their workspace in ways a content check alone misses.

A canary rewritten and restored (same bytes, same mtime) still has a new ctime; a file hard-linked
into the workspace and written through changes a file outside it; a file written to $HOME, a temp
root or two levels up under the name of a path the scenario gave, or under any name by the
candidate's own user (--run-as). All are ``escape`` failures. What is not detected without
``--sandbox`` is said once on stderr, and documented in docs/security.md.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from pathlib import Path

import pytest

from harness.containment import outside as watch
from harness.containment import sandbox
from tests.adapters.run_as import reachable_by_others, reference_for_nobody
from tests.hostile.conftest import CANDIDATES, harness_run, write_scenarios

READ = """
id: hostile/{name}
profile: claude-code
title: a candidate that writes outside
source: test
steps:
  - tool: Read
    args: {{file_path: "${{workspace}}/a.txt"}}
"""

NAMED = """
id: hostile/{name}
profile: claude-code
title: a candidate that writes outside, under its own name and under the name it was given
source: test
steps:
  - tool: Read
    args: {{file_path: "${{workspace}}/{file}"}}
"""


def test_a_canary_rewritten_and_restored_is_an_escape(tmp_path):
    write_scenarios(tmp_path / "scenarios", READ.format(name="canary"))
    spec = f"cmd:python {CANDIDATES / 'hostile_cmd.py'} --mode rewrite-canary"
    # --no-sandbox: the canary is read-only in the default sandbox; unsandboxed, the watch must see the rewrite.
    outcome = harness_run(tmp_path, tmp_path / "scenarios", "--target", spec, "--no-sandbox")
    result = outcome.result("hostile/canary")
    assert outcome.code == 1 and result["verdict"] == "fail"
    assert "escape" in result["reason"] and "canary.txt (rewritten" in result["reason"]
    assert "sandbox: off (--no-sandbox)" in outcome.stderr and outcome.stderr.count("sandbox: off") == 1


def test_a_write_through_a_hard_link_to_a_file_outside_is_an_escape(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("outside\n")
    mark = f"m{uuid.uuid4().hex[:10]}"
    # A name of its own: the candidate also writes it to /tmp and $HOME, where other tests look.
    write_scenarios(tmp_path / "scenarios", NAMED.format(name="hardlink", file=f"given-{mark}.txt"))
    spec = f"cmd:python {CANDIDATES / 'hostile_cmd.py'} --mode escape --arg {outside} --marker {mark}"
    (tmp_path / "ws").mkdir()  # the same file system as the file outside: a hard link can be made
    try:
        outcome = harness_run(tmp_path, tmp_path / "scenarios", "--target", spec, "--tmp", str(tmp_path / "ws"),
                              "--no-sandbox")  # unsandboxed: the link is made and written through; the watch sees it
    finally:
        _remove_escaped((os.path.expanduser("~"), "/var/tmp", "/tmp", "/dev/shm", str(tmp_path / "ws")),
                        [f"escaped-{mark}.txt", f"given-{mark}.txt"])
    result = outcome.result("hostile/hardlink")
    assert result["verdict"] == "fail" and "hard link to a file outside the workspace" in result["reason"]


def _remove_escaped(folders, names):
    for folder in folders:
        for name in names:
            try:
                os.unlink(os.path.join(folder, name))
            except OSError:
                pass


def _escapes(result: dict) -> set[str]:
    return {line.split(" (")[0] for line in result["reason"].split("wrote outside the workspace: ", 1)[1].split("; ")}


def test_writes_to_home_the_temp_roots_and_two_levels_up_under_a_name_the_scenario_gave_are_escapes(tmp_path):
    """Without --run-as, only names the scenario gave are attributed to the candidate: the files it
    writes under a name of its own in the same folders are not seen (docs/security.md, "Escapes")."""
    mark = f"m{uuid.uuid4().hex[:10]}"
    given = f"given-{mark}.txt"
    write_scenarios(tmp_path / "scenarios", NAMED.format(name="named", file=given))
    spaces = tmp_path / "ws"
    spaces.mkdir()
    spec = f"cmd:python {CANDIDATES / 'hostile_cmd.py'} --mode escape --marker {mark}"
    folders = [os.path.expanduser("~"), "/tmp", "/var/tmp", "/dev/shm", str(spaces)]
    try:
        outcome = harness_run(tmp_path, tmp_path / "scenarios", "--target", spec, "--tmp", str(spaces),
                              "--no-sandbox")  # unsandboxed: the writes land, and the watch is what sees them
    finally:
        _remove_escaped(folders, [given, f"escaped-{mark}.txt"])
    result = outcome.result("hostile/named")
    assert outcome.code == 1 and result["verdict"] == "fail", outcome.stdout
    expected = {f"created or changed {os.path.join(os.path.realpath(folder), given)}"
                for folder in folders if os.path.isdir(folder)}
    assert _escapes(result) == expected
    assert f"escaped-{mark}" not in result["reason"]


def test_under_run_as_whatever_the_candidates_user_creates_in_the_temp_roots_is_an_escape(tmp_path):
    if reference_for_nobody() is None:
        pytest.skip("--run-as needs root, the user nobody and a python3 every user can run")
    python = shutil.which("python3", path="/usr/bin:/usr/local/bin")
    if not reachable_by_others(CANDIDATES):
        pytest.skip(f"{CANDIDATES} is not reachable by other users (a clone in a 0700 folder)")
    mark = f"m{uuid.uuid4().hex[:10]}"
    given = f"given-{mark}.txt"
    write_scenarios(tmp_path / "scenarios", NAMED.format(name="run-as", file=given))
    spec = f"cmd:{python} {CANDIDATES / 'hostile_cmd.py'} --mode escape --marker {mark}"
    folders = ["/tmp", "/var/tmp", "/dev/shm"]
    try:
        outcome = harness_run(tmp_path, tmp_path / "scenarios", "--target", spec, "--run-as", "nobody",
                              "--tmp", "/dev/shm", "--no-sandbox")  # unsandboxed: what the user's writes are seen by
    finally:
        _remove_escaped(folders, [given, f"escaped-{mark}.txt"])
    result = outcome.result("hostile/run-as")
    assert outcome.code == 1 and result["verdict"] == "fail", outcome.stdout + outcome.stderr
    # nobody may not write the harness's $HOME: /tmp, /var/tmp and /dev/shm (also two levels up) it may.
    writable = [folder for folder in folders if os.path.isdir(folder)]
    expected = {f"created or changed {os.path.join(os.path.realpath(folder), name)}"
                for folder in writable for name in (given, f"escaped-{mark}.txt")}
    assert _escapes(result) == expected


def test_the_names_watched_are_those_of_paths_in_the_workspace_or_under_a_path_key():
    args = [{"file_path": "/w/a/b.txt", "content": "hello.txt", "old_string": "x", "path": "rel/c.md",
             "edits": [{"old_string": "/w/q.txt", "new_string": "/elsewhere/not.txt"}], "dir": "/w/sub/"},
            {"text": "line\n/w/no.txt"}]
    assert watch.given_names(args, "/w") == {"b.txt", "c.md", "q.txt", "sub"}


@pytest.mark.live
@pytest.mark.skipif(not sandbox.available()[0], reason=f"no sandbox here: {sandbox.available()[1]}")
def test_under_the_sandbox_nothing_lands_in_home_the_temp_roots_two_levels_up_or_through_a_hard_link(tmp_path, victim):
    """--sandbox prevents what the watch can only report: the same escaping candidate writes nothing
    on the host; the run sees no escape and passes."""
    mark = f"m{uuid.uuid4().hex[:10]}"
    given = f"given-{mark}.txt"
    write_scenarios(tmp_path / "scenarios", NAMED.format(name="sandboxed", file=given))
    spaces = tmp_path / "ws"
    spaces.mkdir()
    target = victim / "keep.txt"  # the candidate tries to hard-link it into its workspace and append
    spec = f"cmd:python {CANDIDATES / 'hostile_cmd.py'} --mode escape --marker {mark} --arg {target}"
    folders = [os.path.expanduser("~"), "/tmp", "/var/tmp", "/dev/shm", str(spaces)]
    names = [given, f"escaped-{mark}.txt"]
    try:
        outcome = harness_run(tmp_path, tmp_path / "scenarios", "--target", spec, "--tmp", str(spaces), "--sandbox")
        left = [os.path.join(folder, name) for folder in folders for name in names
                if os.path.lexists(os.path.join(folder, name))]
    finally:
        _remove_escaped(folders, names)
    assert left == []
    result = outcome.result("hostile/sandboxed")
    assert outcome.code == 0 and result["verdict"] == "pass", outcome.stdout + outcome.stderr
    assert "sandbox: off" not in outcome.stderr


@pytest.mark.live
@pytest.mark.skipif(not sandbox.available()[0], reason=f"no sandbox here: {sandbox.available()[1]}")
@pytest.mark.skipif(not os.path.isdir("/dev/shm"), reason="no /dev/shm here")
def test_under_the_sandbox_a_write_beside_a_workspace_on_dev_shm_fails(tmp_path):
    """Workspaces on /dev/shm (harness run's default): the sandbox's own /dev would put a private,
    writable /dev/shm around the workspace, where a write beside it succeeds and is never seen. The
    folder around the workspace is the host's, read-only: the write fails."""
    mark = f"m{uuid.uuid4().hex[:10]}"
    write_scenarios(tmp_path / "scenarios", READ.format(name="beside") + """\
    expect: {output: "beside: refused"}
""")
    spec = f"cmd:python {CANDIDATES / 'hostile_cmd.py'} --mode beside --marker {mark}"
    outcome = harness_run(tmp_path, tmp_path / "scenarios", "--target", spec, "--tmp", "/dev/shm", "--sandbox")
    result = outcome.result("hostile/beside")
    assert outcome.code == 0 and result["verdict"] == "pass", outcome.stdout + outcome.stderr


def test_the_harness_name_exception_covers_only_the_harnesss_own_folders(tmp_path):
    """Under --tmp DIR, an entry named harness-* that the candidate's user makes there was hidden by
    the name exception; only the harness's own folders (there when the session opened) are left out."""
    parent = tmp_path / "spaces"
    own = parent / "harness-tmp-own"
    own.mkdir(parents=True)
    seen = watch.Watch([str(parent)], uid=os.getuid())
    seen.begin(set())
    (own / "scratch.txt").write_text("the candidate's temporary file")  # its own folder: not an escape
    (parent / "harness-evil").mkdir()
    (parent / "plain.txt").write_text("x")
    assert seen.end() == [f"created or changed {parent / 'harness-evil'} (by the candidate's user, uid {os.getuid()})",
                          f"created or changed {parent / 'plain.txt'} (by the candidate's user, uid {os.getuid()})"]


def test_under_run_as_a_harness_named_folder_made_by_the_candidate_is_an_escape(tmp_path):
    if reference_for_nobody() is None:
        pytest.skip("--run-as needs root, the user nobody and a python3 every user can run")
    python = shutil.which("python3", path="/usr/bin:/usr/local/bin")
    if not reachable_by_others(CANDIDATES):
        pytest.skip(f"{CANDIDATES} is not reachable by other users (a clone in a 0700 folder)")
    mark = f"m{uuid.uuid4().hex[:10]}"
    write_scenarios(tmp_path / "scenarios", READ.format(name="harness-named"))
    spaces = Path(tempfile.mkdtemp(prefix="test-spaces-", dir="/tmp"))  # a folder nobody can reach
    os.chmod(spaces, 0o1777)  # and make entries in, as in /tmp
    spec = f"cmd:{python} {CANDIDATES / 'hostile_cmd.py'} --mode harness-named --marker {mark}"
    try:
        outcome = harness_run(tmp_path, tmp_path / "scenarios", "--target", spec, "--run-as", "nobody",
                              "--tmp", str(spaces), "--no-sandbox")  # unsandboxed: the folder is made, the watch sees it
    finally:
        shutil.rmtree(spaces, ignore_errors=True)
    result = outcome.result("hostile/harness-named")
    assert outcome.code == 1 and result["verdict"] == "fail", outcome.stdout + outcome.stderr
    assert f"created or changed {spaces.resolve() / f'harness-{mark}'}" in result["reason"]


def test_a_write_while_answering_bye_is_seen_and_fails_the_run(tmp_path):
    """The red team's candidate that writes while answering `bye`, after the last scenario's watch:
    unsandboxed (--no-sandbox: what the watch sees is all there is) the write under the name the
    scenario gave is reported as an escape after the last scenario, and the run fails."""
    mark = f"m{uuid.uuid4().hex[:10]}"
    given = f"given-{mark}.txt"
    write_scenarios(tmp_path / "scenarios", NAMED.format(name="bye", file=given))
    spaces = tmp_path / "spaces"
    spaces.mkdir()
    spec = f"cmd:python {CANDIDATES / 'hostile_cmd.py'} --mode bye-write --arg {spaces}"
    reports = {kind: tmp_path / f"report.{kind}" for kind in ("xml", "md", "html")}
    # --no-sandbox: the unsandboxed path, where the write lands and only the watch can see it.
    outcome = harness_run(tmp_path, tmp_path / "scenarios", "--target", spec, "--tmp", str(spaces), "--no-sandbox",
                          "--junit", str(reports["xml"]), "--markdown", str(reports["md"]), "--html", str(reports["html"]))
    assert (spaces / given).exists()  # it did write (the test's own check)
    assert outcome.result("hostile/bye")["verdict"] == "pass"  # the scenario itself saw nothing
    assert outcome.code == 1, outcome.stdout + outcome.stderr
    assert f"created or changed {os.path.realpath(spaces / given)}" in outcome.stdout
    assert "ESCAPED AFTER THE LAST SCENARIO" in outcome.stdout
    late = outcome.report.get("leftovers") or []
    assert [left["path"].split(" (")[0] for left in late] == [f"created or changed {os.path.realpath(spaces / given)}"], late
    assert [left["kind"] for left in late] == ["escape"]
    # Every report says it as a write after the last scenario, none as a workspace left behind.
    import xml.etree.ElementTree as ET
    suite = next(s for s in ET.parse(reports["xml"]).getroot() if s.get("name", "").endswith("harness"))
    [case] = suite.findall("testcase")
    assert case.get("name") == "nothing written after the last scenario"
    assert case.find("error").get("message").startswith("1 write(s) outside the workspace after the last scenario")
    for kind in ("md", "html"):
        text = reports[kind].read_text("utf-8")
        assert "after the last scenario" in text and "could not be removed" not in text, kind


@pytest.mark.skipif(not sandbox.available()[0], reason=f"no sandbox here: {sandbox.available()[1]}")
def test_by_default_a_write_while_answering_bye_does_not_land(tmp_path):
    """The same candidate in the default sandbox: the folder around the workspaces is not writable
    there, so the write during `bye` fails and nothing lands; the run passes."""
    mark = f"m{uuid.uuid4().hex[:10]}"
    given = f"given-{mark}.txt"
    write_scenarios(tmp_path / "scenarios", NAMED.format(name="bye", file=given))
    spaces = tmp_path / "spaces"
    spaces.mkdir()
    spec = f"cmd:python {CANDIDATES / 'hostile_cmd.py'} --mode bye-write --arg {spaces}"
    outcome = harness_run(tmp_path, tmp_path / "scenarios", "--target", spec, "--tmp", str(spaces))
    assert not (spaces / given).exists()
    assert outcome.code == 0 and outcome.result("hostile/bye")["verdict"] == "pass", outcome.stdout + outcome.stderr

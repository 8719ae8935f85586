"""A candidate that swaps its workspace for something else, hides a hard link deep, or makes
every step's record large: the scenario's verdict still says what it did, and what it wrote
outside is still reported."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from fakes import ScriptedTarget

from harness.containment import audit_hook
from harness.containment import enclosure as enclosure_module
from harness.run.runner import Runner
from harness.run.workspace import Workspace, steps_capped
from harness.scenario.model import Verdict
from harness.targets.base import CallResult, Session, TargetError, Unsupported
from harness.targets.reference import ReferenceSession
from harness.util import limits

SWAPPED = """\
id: hostile/swapped
profile: claude-code
title: t
source: test
given:
  files:
    a.txt: "x\\n"
steps:
  - tool: Read
    args: {file_path: "${workspace}/a.txt"}
then:
  files:
    a.txt: "x\\n"
  absent: [b.txt]
  others_unchanged: true
"""

READS = """\
id: hostile/reads
profile: claude-code
title: t
source: test
given:
  files: {files}
steps:
{steps}
"""


def _escape_then_swap(into: str):
    def answer(workspace: Path, args):
        with open(workspace.parent / "canary.txt", "a", encoding="utf-8") as canary:
            canary.write("written by the candidate\n")
        (workspace.parent / "sibling" / "new-file").write_text("x", "utf-8")
        shutil.rmtree(workspace)
        if into == "fifo":
            os.mkfifo(workspace)
        elif into == "link":
            os.symlink("/etc", workspace)
        elif into == "file":
            workspace.write_text("not a folder", "utf-8")
        return CallResult(output="     1→x")
    return answer


@pytest.mark.parametrize("into, shown", [("fifo", "fifo"), ("link", "symlink"), ("file", "file"),
                                         ("nothing", "<missing>")])
@pytest.mark.parametrize("record_states", [False, True])
def test_a_workspace_replaced_fails_its_checks_and_what_was_written_outside_is_still_reported(
        scenario_from, tmp_path, into, shown, record_states):
    target = ScriptedTarget({"Read": _escape_then_swap(into)})
    with Runner(target, tmp=str(tmp_path), record_states=record_states) as runner:
        result = runner.run(scenario_from(SWAPPED))
    assert result.verdict is Verdict.FAIL, result.reason
    assert "harness error" not in result.reason
    assert "canary.txt (rewritten" in result.reason and "sibling/new-file" in result.reason
    replaced = [m for m in result.then_failures if m.path == "then"]
    assert [(m.observed, m.why) for m in replaced] == [(shown, "the workspace was replaced")]


def test_what_was_written_outside_is_reported_when_the_harness_fails_during_the_steps(scenario_from, tmp_path):
    def answer(workspace: Path, args):
        (workspace.parent / "stolen.txt").write_text("x", "utf-8")
        raise RuntimeError("a fault of the harness while it takes the answer")

    with Runner(ScriptedTarget({"Read": answer}), tmp=str(tmp_path)) as runner:
        result = runner.run(scenario_from(SWAPPED))
    assert result.verdict is Verdict.FAIL and "stolen.txt" in result.reason
    assert any(m.why == "escape" and "stolen.txt" in str(m.observed) for m in result.then_failures)


class _EscapingThenFailingToOpen(ScriptedTarget):
    """A target whose session does not open: before it fails, the candidate wrote beside its
    workspace (under the harness's watch) and into the home the candidate was given."""

    def __init__(self, failure: Exception, home: Path) -> None:
        super().__init__()
        self.failure: Exception | None = failure
        self.home = home

    @property
    def candidate_home(self) -> str:
        return str(self.home)

    def open(self, profile, workspace, options):
        failure, self.failure = self.failure, None
        if failure is None:  # the next scenario's session opens as usual
            return super().open(profile, workspace, options)
        (workspace.parent / "stolen.txt").write_text("x", "utf-8")
        (self.home / "a.txt").write_text("x", "utf-8")  # a name the scenario gave: watched in the home
        raise failure


@pytest.mark.parametrize("failure", [RuntimeError("a fault of the harness while the session opens"),
                                     ValueError("a target's own bug: not a TargetError"),
                                     OSError(24, "Too many open files"),
                                     TargetError("the candidate crashed"), Unsupported("no such profile")])
def test_what_was_written_outside_is_a_failed_verdict_whatever_the_opening_of_the_session_raised(
        scenario_from, tmp_path, failure):
    """An escape made before a session fails to open is the scenario's verdict (FAIL, naming every
    path written outside), whatever the opening raised; the failure is still said."""
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "ws").mkdir()
    target = _EscapingThenFailingToOpen(failure, home)
    with Runner(target, tmp=str(tmp_path / "ws")) as runner:
        result = runner.run(scenario_from(SWAPPED))
        # Another name: a file written in a watched folder just before a session opens counts for it (harness/containment/outside.py).
        after = runner.run(scenario_from(SWAPPED.split("then:")[0].replace("a.txt", "b.txt"), "after.yaml"))
    assert result.verdict is Verdict.FAIL, result.reason
    assert result.reason.startswith("escape: wrote outside the workspace: ")
    assert "stolen.txt" in result.reason and str(home / "a.txt") in result.reason
    assert str(failure) in result.reason  # what ended the scenario is not hidden behind the escape
    escaped = [str(m.observed) for m in result.then_failures if m.why == "escape"]
    assert any("stolen.txt" in e for e in escaped) and any(str(home / "a.txt") in e for e in escaped)
    assert after.verdict is Verdict.PASS, after.reason  # the escape is never blamed on the next scenario


@pytest.mark.parametrize("where", ["given", "watch"])
def test_what_was_written_outside_before_the_session_opened_is_reported_when_the_scenario_ends_there(
        scenario_from, tmp_path, monkeypatch, where):
    """A candidate's process lives on between scenarios (cmd:, mcp:): what it writes beside the next
    workspace while the harness lays out ``given`` or starts its watch is reported, also when that
    step fails and the scenario ends before its session opens."""
    def write_then_fail(root: str) -> None:
        (Path(root).parent / "stolen.txt").write_text("x", "utf-8")
        if where == "given":
            raise OSError(28, "No space left on device")
        raise RuntimeError("a fault of the harness while it starts watching")

    if where == "given":
        monkeypatch.setattr(Workspace, "populate", lambda self, *args, **kwargs: write_then_fail(str(self.root)))
    else:
        monkeypatch.setattr(Runner, "_watch", lambda self, scenario, names: write_then_fail(names["workspace"]))
    with Runner(ScriptedTarget(), tmp=str(tmp_path)) as runner:
        result = runner.run(scenario_from(SWAPPED))
    assert result.verdict is Verdict.FAIL, result.reason
    assert result.reason.startswith("escape: wrote outside the workspace: ") and "stolen.txt" in result.reason
    assert ("No space left" if where == "given" else "a fault of the harness") in result.reason


@pytest.mark.parametrize("into", ["nothing", "link", "file"])
def test_the_folder_around_the_workspace_removed_or_replaced_is_an_escape_and_never_listed_through(
        scenario_from, tmp_path, into):
    """A tool that removes its workspace's parent (``rm -rf ..``), or puts a link or a file in its
    place: an escape naming that folder, not a harness error; a link there is never listed through."""
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "TOP-SECRET-NAME").write_text("x", "utf-8")

    done: list[Path] = []

    def answer(workspace: Path, args):
        if done:  # the next scenario's call: nothing hostile
            return CallResult(output="     1→x")
        base = workspace.parent
        done.append(base)
        shutil.rmtree(base)
        if into == "link":
            os.symlink(victim, base)
        elif into == "file":
            base.write_text("not a folder", "utf-8")
        return CallResult(output="     1→x")

    (tmp_path / "ws").mkdir()
    with Runner(ScriptedTarget({"Read": answer}), tmp=str(tmp_path / "ws")) as runner:
        result = runner.run(scenario_from(SWAPPED.split("then:")[0]))
        after = runner.run(scenario_from(SWAPPED.split("then:")[0].replace("a.txt", "b.txt"), "after.yaml"))
    base = str(done[0])
    assert result.verdict is Verdict.FAIL, result.reason
    said = {"nothing": f"removed {base}", "link": f"changed {base} (replaced by a symbolic link to {str(victim)!r})",
            "file": f"changed {base} (replaced by a file)"}[into]
    assert result.reason == f"escape: wrote outside the workspace: {said}", result.reason
    assert "TOP-SECRET" not in result.reason and (victim / "TOP-SECRET-NAME").exists()
    assert after.verdict is Verdict.PASS, after.reason  # a fresh folder around the next workspace


def _link_in(outside: Path, levels: int):
    """A candidate that makes a chain of ``levels`` folders, hard-links ``outside`` at its bottom and
    appends through the link."""
    def answer(workspace: Path, args):
        fd = os.open(workspace, os.O_RDONLY | os.O_DIRECTORY)
        try:
            for _ in range(levels):
                os.mkdir("d", dir_fd=fd)
                sub = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
                os.close(fd)
                fd = sub
            os.link(outside, "h", dst_dir_fd=fd)
            with open(os.open("h", os.O_WRONLY | os.O_APPEND, dir_fd=fd), "a", encoding="utf-8") as handle:
                handle.write("written through the link\n")
        finally:
            os.close(fd)
        return CallResult(output="     1→x")
    return answer


@pytest.mark.parametrize("levels", [0, 300])
@pytest.mark.parametrize("record_states", [False, True])
def test_a_write_through_a_hard_link_is_an_escape_without_a_recorded_state_and_below_the_depth_cap(
        scenario_from, tmp_path, levels, record_states):
    outside = tmp_path / "outside.txt"
    outside.write_text("outside\n", "utf-8")
    (tmp_path / "ws").mkdir()  # on the file system of the file outside: a hard link can be made
    target = ScriptedTarget({"Read": _link_in(outside, levels)})
    with Runner(target, tmp=str(tmp_path / "ws"), record_states=record_states) as runner:
        result = runner.run(scenario_from(SWAPPED.split("then:")[0]))
    assert outside.read_text("utf-8").endswith("written through the link\n")  # the candidate did write
    assert result.verdict is Verdict.FAIL, result.reason
    assert "hard link to a file outside the workspace" in result.reason and "/h (2 links)" in result.reason


def test_the_walk_for_hard_links_reaches_every_branch_holding_few_folders_open(tmp_path, monkeypatch):
    """With 3 folders held open, branches 40 levels deep are walked back up through ``..``: every
    hard-linked file is found, and a pair linked inside the workspace is not an escape."""
    monkeypatch.setattr(enclosure_module, "_OPEN_DIRS", 3)
    outside = tmp_path / "outside.txt"
    outside.write_text("o", "utf-8")
    ws = Workspace(parent=str(tmp_path))
    try:
        expected = set()
        for branch in ("a", "b", "c"):
            folder = ws.root / branch
            for level in range(40):
                folder.mkdir()
                if level in (1, 20, 39):
                    os.link(outside, folder / f"h{branch}{level}")
                    expected.add(str(folder / f"h{branch}{level}"))
                folder = folder / "d"
        (ws.root / "inside.txt").write_text("i", "utf-8")
        os.link(ws.root / "inside.txt", ws.root / "a" / "inside-too.txt")  # both links in the workspace
        found = ws.hard_links_out()
        assert {line.split(": ", 1)[1].rsplit(" (", 1)[0] for line in found} == expected
        assert len(found) == len(expected) == 9
    finally:
        ws.remove()


def test_the_walk_for_hard_links_says_when_the_workspace_holds_more_than_it_looks_at(tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "MAX_ENTRIES", 3)
    ws = Workspace(parent=str(tmp_path))
    try:
        for index in range(31):
            (ws.root / f"f{index}").write_text("x", "utf-8")
        assert ws.hard_links_out() == ["hard links not checked in all of the workspace: more than 30 entries"]
    finally:
        ws.remove()


def test_the_states_recorded_after_the_steps_hold_at_most_the_entry_cap_in_all(scenario_from, tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "MAX_ENTRIES", 10)
    files = "{" + ", ".join(f'f{index}.txt: "x"' for index in range(4)) + "}"
    steps = "\n".join('  - tool: Read\n    args: {file_path: "${workspace}/f0.txt"}' for _ in range(5))
    with Runner(ScriptedTarget(), tmp=str(tmp_path), record_states=True) as runner:
        result = runner.run(scenario_from(READS.format(files=files, steps=steps)))
    states = [step.extra["workspace"] for step in result.steps]
    assert [len(state) for state in states] == [4, 4, 3, 1, 1]
    assert sum(1 for state in states for rel in state if rel != "<capped>") == 10
    assert states[2]["<capped>"] == states[3]["<capped>"] == steps_capped()
    assert states[4] == {"<capped>": steps_capped()}
    assert len(result.workspace) == 4  # the final state has a cap of its own


@pytest.mark.parametrize("how", ["paths", "descriptors"])
def test_the_confined_reference_cannot_hard_link_a_file_outside_so_its_workspace_needs_no_walk(tmp_path, how):
    """The reference's sessions skip the walk for link counts (``links_confined``): the confinement
    refuses the link itself, by path and by directory descriptor."""
    enclosure = tmp_path / "enclosure"
    (enclosure / "ws").mkdir(parents=True)
    (tmp_path / "outside.txt").write_text("outside", "utf-8")
    bounds = audit_hook.Confinement(str(enclosure))
    outside_fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    ws_fd = os.open(enclosure / "ws", os.O_RDONLY | os.O_DIRECTORY)
    try:
        with audit_hook.confined(bounds), pytest.raises(PermissionError):
            if how == "paths":
                os.link(tmp_path / "outside.txt", enclosure / "ws" / "h")
            else:
                os.link("outside.txt", "h", src_dir_fd=outside_fd, dst_dir_fd=ws_fd)
    finally:
        os.close(outside_fd)
        os.close(ws_fd)
    assert not os.path.lexists(enclosure / "ws" / "h") and os.stat(tmp_path / "outside.txt").st_nlink == 1
    assert ReferenceSession.links_confined and not Session.links_confined

"""The runner: each verdict, the workspace lifecycle, actions, `then`, escapes and faults."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from fakes import ScriptedTarget, read_scenario

from harness.run.judge import check_then
from harness.run.runner import Runner
from harness.run.workspace import Workspace
from harness.scenario.model import Verdict
from harness.targets.base import CallResult, TargetError

READ = read_scenario("claude-code/read/t", '"     1→x"')


def run(scenario, target=None):
    target = target or ScriptedTarget({"Read": CallResult(output="     1→x")})
    with Runner(target) as runner:
        return runner.run(scenario), target


def test_pass_when_every_expectation_holds(scenario_from):
    result, target = run(scenario_from(READ))
    assert result.verdict is Verdict.PASS and result.reason == ""
    assert target.calls[0][1]["file_path"] == str(target.workspaces[0] / "a.txt")


def test_fail_lists_expected_and_observed(scenario_from):
    result, _ = run(scenario_from(READ), ScriptedTarget({"Read": CallResult(output="     1→y")}))
    assert result.verdict is Verdict.FAIL
    (where, mismatch), = result.failures
    assert where == "step 1 (Read)" and mismatch.path == "content" and mismatch.observed == "     1→y"


def test_an_error_where_output_was_expected_fails(scenario_from):
    result, _ = run(scenario_from(READ), ScriptedTarget({"Read": CallResult(error={"code": None, "message": "no"})}))
    assert result.verdict is Verdict.FAIL and "the call failed" in result.failures[0][1].why


def test_expected_error_code_and_message(scenario_from):
    text = READ.replace('output: "     1→x"', 'error: {code: -32600, message: {$contains: "absolute"}}')
    good = ScriptedTarget({"Read": CallResult(error={"code": -32600, "message": "Path must be absolute: a"})})
    assert run(scenario_from(text), good)[0].verdict is Verdict.PASS
    wrong_code = ScriptedTarget({"Read": CallResult(error={"code": -32000, "message": "Path must be absolute"})})
    result = run(scenario_from(text), wrong_code)[0]
    assert result.verdict is Verdict.FAIL and result.failures[0][1].path == "error.code"
    assert run(scenario_from(text))[0].verdict is Verdict.FAIL  # succeeded instead


def test_recorded_for_an_open_question(scenario_from):
    text = READ.replace("source: test", "source: test\nopen_question: what does Read say?")
    result, _ = run(scenario_from(text))
    assert result.verdict is Verdict.RECORDED and result.answer.output == "     1→x"


def test_a_failed_precondition_of_an_open_question_fails(scenario_from):
    text = READ.replace("source: test", "source: test\nopen_question: what does Read say?")
    result, _ = run(scenario_from(text), ScriptedTarget({"Read": CallResult(output="nope")}))
    assert result.verdict is Verdict.FAIL


def test_skip_when_the_target_lacks_the_profile(scenario_from):
    result, target = run(scenario_from(READ), ScriptedTarget(profiles=("gemini-safe-patch",)))
    assert result.verdict is Verdict.SKIP and "does not offer profile claude-code" in result.reason
    assert target.calls == []


def test_skip_when_the_target_cannot_realise_a_requirement(scenario_from):
    text = READ.replace("source: test", "source: test\nrequires: [permissions]")
    result, _ = run(scenario_from(text))
    assert result.verdict is Verdict.SKIP and "permissions" in result.reason


def test_error_when_the_target_breaks_and_the_run_goes_on(scenario_from):
    scenario = scenario_from(READ)
    target = ScriptedTarget({"Read": CallResult(output="     1→x")}, crash_on="Read")
    with Runner(target) as runner:
        first = runner.run(scenario)
        target.crash_on = None
        second = runner.run(scenario)
    assert first.verdict is Verdict.ERROR and "candidate crashed in Read" in first.reason
    assert "stderr: boom" in first.reason
    assert second.verdict is Verdict.PASS
    assert target.closed == 2  # the broken session was still closed


def test_a_harness_bug_is_an_error_verdict_not_a_crash(scenario_from, monkeypatch):
    import harness.run.runner as runner_module
    monkeypatch.setattr(runner_module, "check_call", lambda *a: 1 / 0)
    result, _ = run(scenario_from(READ))
    assert result.verdict is Verdict.ERROR and "ZeroDivisionError" in result.reason


def test_the_workspace_is_fresh_and_removed_afterwards(scenario_from):
    target = ScriptedTarget({"Read": CallResult(output="     1→x")}, crash_on=None)
    with Runner(target) as runner:
        runner.run(scenario_from(READ))
        runner.run(scenario_from(READ))
    first, second = target.workspaces
    assert first != second
    assert not first.parent.exists() and not second.parent.exists()


def test_the_workspace_is_removed_even_when_the_target_breaks_and_modes_are_closed(scenario_from):
    text = READ.replace('a.txt: "x\\n"', 'a.txt: "x\\n"\n  dirs: [{path: sealed, mode: "0000"}]')
    target = ScriptedTarget(crash_on="Read")
    run(scenario_from(text), target)
    assert not target.workspaces[0].parent.exists()


def test_actions_change_the_file_and_always_move_its_mtime(scenario_from):
    text = READ + """\
  - action: write
    path: a.txt
    content: "x\\n"
  - tool: Read
    args: {file_path: "${workspace}/a.txt"}
"""
    seen = []

    def read(workspace: Path, args):
        seen.append(os.stat(args["file_path"]).st_mtime_ns)
        return CallResult(output="     1→x")

    run(scenario_from(text), ScriptedTarget({"Read": read}))
    assert seen[1] - seen[0] >= 1_000_000_000  # same content, yet the mtime moved by at least a second


def test_then_checks_content_absence_and_others_unchanged(scenario_from):
    text = READ + """\
then:
  files:
    a.txt: "x\\n"
  absent: [b.txt]
  others_unchanged: true
"""
    def read_and_litter(workspace: Path, args):
        (workspace / "b.txt").write_text("litter")
        (workspace / "c.txt").write_text("litter")
        return CallResult(output="     1→x")

    result, _ = run(scenario_from(text), ScriptedTarget({"Read": read_and_litter}))
    paths = sorted(m.path for _, m in result.failures)
    assert paths == ["then.absent[b.txt]", "then.others_unchanged[c.txt]"]


def test_a_write_outside_the_workspace_is_an_escape_failure(scenario_from):
    def escape(workspace: Path, args):
        (workspace.parent / "sibling" / "stolen.txt").write_text("x")
        (workspace.parent / "canary.txt").write_text("changed")
        return CallResult(output="     1→x")

    result, _ = run(scenario_from(READ), ScriptedTarget({"Read": escape}))
    assert result.verdict is Verdict.FAIL and result.reason.startswith("escape")
    assert "stolen.txt" in result.reason and "canary.txt" in result.reason


def test_canaries_are_made_once_per_run_and_every_workspace_is_fresh(scenario_from):
    target = ScriptedTarget({"Read": CallResult(output="     1→x")})
    canaries = []

    def read(workspace: Path, args):
        canaries.append(os.lstat(workspace.parent / "canary.txt").st_ino)
        return CallResult(output="     1→x")

    target.answers["Read"] = read
    with Runner(target) as runner:
        verdicts = [runner.run(scenario_from(READ)).verdict for _ in range(4)]
        assert not any(w.exists() for w in target.workspaces[:-1]), "a finished workspace is still there"
        trash = runner._enclosure.trash  # where the finished ones went: removed by the end of the run
    assert verdicts == [Verdict.PASS] * 4
    assert trash is not None and not trash.exists()
    assert len(set(canaries)) == 1 and len({w.parent for w in target.workspaces}) == 1
    assert len(set(target.workspaces)) == 4 and not target.workspaces[0].parent.exists()


def test_an_escape_is_reported_for_its_scenario_alone_and_the_next_gets_fresh_canaries(scenario_from):
    def rewrite_and_restore(workspace: Path, args):
        canary = workspace.parent / "canary.txt"
        info = os.lstat(canary)
        canary.write_bytes(canary.read_bytes())  # the same bytes, the same mtime: only the ctime moves
        os.utime(canary, ns=(info.st_atime_ns, info.st_mtime_ns))
        return CallResult(output="     1→x")

    def quiet(workspace: Path, args):
        return CallResult(output="     1→x")

    target = ScriptedTarget({"Read": rewrite_and_restore})
    with Runner(target) as runner:
        first = runner.run(scenario_from(READ))
        target.answers["Read"] = quiet
        second = runner.run(scenario_from(READ))
    assert first.verdict is Verdict.FAIL and "canary.txt (rewritten" in first.reason
    assert second.verdict is Verdict.PASS, second.reason
    assert target.workspaces[0].parent != target.workspaces[1].parent


@pytest.mark.parametrize("failure", ["open fails", "harness error"])
def test_an_escape_by_a_scenario_that_ends_early_is_never_blamed_on_the_next(scenario_from, failure):
    """A candidate that writes beside its workspace and then fails to open a session (the target's
    own error, or any other exception): the escape is that scenario's verdict, and the next one passes."""
    class EscapingThenFailing(ScriptedTarget):
        def open(self, profile, workspace, options):
            (workspace.parent / "stolen.txt").write_text("x", "utf-8")
            if failure == "open fails":
                raise TargetError("the candidate crashed")
            raise RuntimeError("a bug in the harness")

    target = EscapingThenFailing({"Read": CallResult(output="     1→x")})
    with Runner(target) as runner:
        first = runner.run(scenario_from(READ))
        target.open = lambda profile, workspace, options: ScriptedTarget.open(target, profile, workspace, options)
        second = runner.run(scenario_from(READ))
    assert first.verdict is Verdict.FAIL and "stolen.txt" in first.reason  # its own escape is its verdict
    assert any(m.why == "escape" and "stolen.txt" in str(m.observed) for m in first.then_failures)
    assert second.verdict is Verdict.PASS, second.reason


def test_a_canary_changed_in_place_and_an_entry_made_and_removed_beside_are_escapes(scenario_from):
    import mmap

    def through_mmap(workspace: Path, args):
        with open(workspace.parent / "sibling" / "canary.txt", "r+b") as handle, mmap.mmap(handle.fileno(), 0) as m:
            m[0:1] = b"C"
        return CallResult(output="     1→x")

    def made_and_removed(workspace: Path, args):
        (workspace.parent / "sibling" / "gone.txt").write_text("x")
        (workspace.parent / "sibling" / "gone.txt").unlink()
        return CallResult(output="     1→x")

    for answer, said in ((through_mmap, "sibling/canary.txt"), (made_and_removed, "sibling (entries made")):
        result, _ = run(scenario_from(READ), ScriptedTarget({"Read": answer}))
        assert result.verdict is Verdict.FAIL and said in result.reason, result.reason


def test_a_canary_whose_bytes_change_with_every_time_stamp_kept_is_an_escape(tmp_path, monkeypatch):
    """The canaries' bytes are read again, not only their time stamps: a write that moves no time stamp
    (a page of a shared mapping dirtied before the stamps were taken is written back with none) is
    still found. No such write can be made on purpose, so the stamps are held here instead."""
    from harness.containment import enclosure as enclosure_mod
    enclosure = enclosure_mod.Enclosure(parent=str(tmp_path))
    try:
        enclosure.place()
        taken = dict(enclosure._canaries)
        real = enclosure_mod._signature
        monkeypatch.setattr(enclosure_mod, "_signature", lambda path: taken.get(path) or real(path))
        assert enclosure.escapes() == []
        canary = enclosure.base / "sibling" / "canary.txt"
        canary.write_bytes(enclosure_mod.CANARY.replace(b"c", b"C", 1))
        assert enclosure.escapes() == [f"changed {canary}"]
    finally:
        monkeypatch.undo()
        enclosure.remove()


def test_step_level_then_is_checked_right_after_the_call(scenario_from):
    text = READ + """\
    then:
      files: {a.txt: "changed\\n"}
"""
    result, _ = run(scenario_from(text))
    assert [m.path for _, m in result.failures] == ["then.files[a.txt].content"]


def test_faults_are_realised_on_a_fake_file_system_for_in_process_targets(scenario_from):
    text = """\
id: mcp-write-text-file/faults/t
profile: mcp-write-text-file
title: t
source: test
requires: [read-only-fs, permissions, disk-full]
given:
  dirs: [ro, {path: closed, mode: "0555"}]
  read_only: [ro]
  disk_free: 4
steps:
  - tool: write_text_file
    args: {path: "${workspace}/ro/a.txt", content: "x"}
"""
    outcomes = []

    def write(workspace: Path, args):
        for path, data in ((workspace / "ro" / "a.txt", b"x"), (workspace / "closed" / "a.txt", b"x"),
                           (workspace / "big.txt", b"0123456789")):
            try:
                path.write_bytes(data)
                outcomes.append("written")
            except OSError as exc:
                outcomes.append(errno.errorcode[exc.errno])
        return CallResult(output={})

    target = ScriptedTarget({"write_text_file": write}, realises=frozenset({"read-only-fs", "permissions", "disk-full"}),
                            in_process=True)
    result, _ = run(scenario_from(text), target)
    assert result.verdict is Verdict.PASS, result.reason
    assert outcomes == ["EROFS", "EACCES", "ENOSPC"]
    assert not os.path.exists(target.workspaces[0])


def test_the_references_first_scenario_in_a_process_may_fake_the_file_system(scenario_from, monkeypatch):
    # The reference's answers are held to the cmd: normal form, whose schema is read once per process:
    # read while a scenario's fake file system was in place, it was not there (a harness error).
    from harness.scenario.catalog import builtin_dir, load
    from harness.targets import faults
    from harness.targets.cmd import target as cmd
    from harness.targets.reference import ReferenceTarget
    from harness.util import schemas
    scenario = next(s for s in load([builtin_dir() / "mcp-write-text-file"]).scenarios
                    if s.id == "mcp-write-text-file/errors/disk-full")
    monkeypatch.setattr(faults, "_real", frozenset())  # on pyfakefs, wherever the kernel could realise it
    assert faults.on_pyfakefs(scenario.requires, scenario.given)
    cmd.response_checker.cache_clear()
    schemas.packaged.cache_clear()  # (where the protocol schema is cached: harness/util/schemas.py)
    result, _ = run(scenario, ReferenceTarget("reference"))
    assert result.verdict is Verdict.PASS, result.reason


def test_disk_free_is_the_free_space_whatever_the_workspace_holds(scenario_from):
    text = """\
id: mcp-write-text-file/faults/free
profile: mcp-write-text-file
title: t
source: test
requires: [disk-full]
given:
  files: {big.txt: {pattern: "x", size: 5000}}
  disk_free: 10
steps:
  - tool: write_text_file
    args: {path: "${workspace}/a.txt", content: "x"}
"""
    outcomes = []

    def write(workspace: Path, args):
        for name, size in (("fits.txt", 10), ("too-big.txt", 11)):
            try:
                (workspace / name).write_bytes(b"x" * size)
                outcomes.append("written")
                (workspace / name).unlink()  # deleting frees the space again
            except OSError as exc:
                outcomes.append(errno.errorcode[exc.errno])
        return CallResult(output={})

    target = ScriptedTarget({"write_text_file": write}, realises=frozenset({"disk-full"}), in_process=True)
    result, _ = run(scenario_from(text), target)
    assert result.verdict is Verdict.PASS, result.reason
    assert outcomes == ["written", "ENOSPC"]


def test_a_later_call_can_use_what_an_earlier_call_returned(scenario_from):
    text = """\
id: gemini-safe-patch/t/chain
profile: gemini-safe-patch
title: t
source: test
steps:
  - tool: read_file
    args: {file_path: "${workspace}/a.txt"}
  - tool: safe_patch
    args: {file_path: "${workspace}/a.txt", unified_diff: "", base_content_sha256: "${step1.output.sha256}"}
    expect:
      output: {version: "${step1.output.version}"}
"""
    target = ScriptedTarget({"read_file": CallResult(output={"sha256": "abc", "version": 7}),
                             "safe_patch": CallResult(output={"version": 7})})
    result, _ = run(scenario_from(text), target)
    assert result.verdict is Verdict.PASS, result.reason
    assert target.calls[1][1]["base_content_sha256"] == "abc"


def test_a_reference_to_a_failed_call_is_an_error_naming_it(scenario_from):
    text = """\
id: gemini-safe-patch/t/chain-broken
profile: gemini-safe-patch
title: t
source: test
steps:
  - tool: read_file
    args: {file_path: "${workspace}/a.txt"}
  - tool: safe_patch
    args: {file_path: "x", unified_diff: "", base_content_sha256: "${step1.output.sha256}"}
"""
    target = ScriptedTarget({"read_file": CallResult(error={"code": "ENOENT", "message": "missing"})})
    result, _ = run(scenario_from(text), target)
    assert result.verdict is Verdict.ERROR and "step 1 failed, so it has no output" in result.reason


def test_generated_content_reaches_the_target_as_text(scenario_from):
    text = """\
id: mcp-write-text-file/t/big
profile: mcp-write-text-file
title: t
source: test
steps:
  - tool: write_text_file
    args: {path: "${workspace}/big.txt", content: {$content: {pattern: "0123456789", size: 1048576}}}
"""
    target = ScriptedTarget()
    run(scenario_from(text), target)
    content = target.calls[0][1]["content"]
    assert isinstance(content, str) and len(content) == 1048576 and content.startswith("0123")


def test_real_workspaces_are_all_removed_around_fake_file_system_scenarios(scenario_from):
    fault = scenario_from(READ.replace("source: test", "source: test\nrequires: [permissions]"), "f.yaml")
    plain = scenario_from(READ)
    target = ScriptedTarget({"Read": CallResult(output="     1→x")}, realises=frozenset({"permissions"}),
                            in_process=True)
    with Runner(target) as runner:
        for scenario in (plain, plain, fault, plain, fault, plain):
            assert runner.run(scenario).verdict is Verdict.PASS
    real = [w for w in target.workspaces if "fake" not in str(w)]
    assert len(target.workspaces) == 6
    assert not any(w.parent.exists() for w in real)


def test_the_recorded_state_sees_a_same_size_rewrite_of_a_file():
    from harness.run.workspace import Workspace
    workspace = Workspace()
    try:
        path = workspace.path("a.txt")
        path.write_text("aaaa")
        before = workspace.state()["a.txt"]
        path.write_text("bbbb")  # same size, same inode, written at once
        after = workspace.state()["a.txt"]
        assert before["text"] == "aaaa" and after["text"] == "bbbb" and before["sha256"] != after["sha256"]
    finally:
        workspace.remove()


def test_a_changed_file_that_should_not_have_changed_shows_a_content_diff(tmp_path):
    from harness.run.workspace import Workspace
    workspace = Workspace()
    try:
        workspace.populate({"files": {"notes.txt": "one\ntwo\nthree\n", "blob.bin": {"hex": "00010203040506070809"}}}, {})
        (workspace.root / "notes.txt").write_text("one\n2\nthree\n")
        (workspace.root / "blob.bin").write_bytes(bytes.fromhex("000102030405ff070809"))
        failures = {f.path: f.render() for f in check_then(workspace, {"others_unchanged": True}, {})}
    finally:
        workspace.remove()
    text = failures["then.others_unchanged[notes.txt]"]
    assert "content changed" in text and "-two" in text and "+2" in text
    binary = failures["then.others_unchanged[blob.bin]"]
    assert "first difference at byte 6" in binary
    assert "00 01 02 03 04 05 06 07 08 09" in binary and "00 01 02 03 04 05 ff 07 08 09" in binary


def test_finished_workspaces_go_to_the_remover_in_batches_and_drain_removes_every_one(tmp_path):
    from harness.containment.cleanup import Remover, Tree
    remover = Remover()
    trees = []
    for number in range(Remover.BATCH):
        tree = tmp_path / f"ws-{number}"
        (tree / "sub").mkdir(parents=True)
        (tree / "sub" / "a.txt").write_text("x")
        trees.append(tree)
        remover.remove(Tree(tree))
        if number < Remover.BATCH - 1:  # no wake-up of the thread per workspace
            assert remover._thread is None and tree.exists()
    remover.remove(Tree(tmp_path / "gone-already"))
    remover.drain()
    assert not any(tree.exists() for tree in trees) and remover.leftovers == []


def test_an_inline_remover_removes_each_batch_in_the_calling_thread_without_a_thread(tmp_path):
    from harness.containment.cleanup import Remover, Tree
    remover = Remover(inline=True)
    trees = []
    for number in range(Remover.BATCH + 1):
        tree = tmp_path / f"ws-{number}"
        (tree / "sub").mkdir(parents=True)
        (tree / "sub" / "a.txt").write_text("x")
        trees.append(tree)
        remover.remove(Tree(tree))
        if number == Remover.BATCH - 1:  # the batch is full: removed before remove() returns
            assert not any(t.exists() for t in trees)
    assert trees[-1].exists() and remover._thread is None
    remover.drain()
    assert not trees[-1].exists() and remover._thread is None and remover.leftovers == []


def test_workspaces_on_a_memory_file_system_are_removed_inline_and_on_a_disk_by_a_thread(tmp_path):
    from harness.containment.cleanup import _MOUNTS, in_memory
    from harness.targets.reference import ReferenceTarget
    if not os.path.isfile("/proc/self/mountinfo"):
        pytest.skip("no mount table here (not Linux)")
    assert _MOUNTS.type_of("/proc") == "proc" and _MOUNTS.type_of("/proc/self") == "proc"
    assert not in_memory("/proc")
    shm = "/dev/shm"
    if _MOUNTS.type_of(os.path.realpath(shm)) != "tmpfs" or not os.access(shm, os.W_OK):
        pytest.skip("no tmpfs at /dev/shm here")
    assert in_memory(shm) and Runner(ReferenceTarget("reference"), tmp=shm)._remover.inline
    disk = next((folder for folder in (str(tmp_path), "/var/tmp", os.getcwd())
                 if os.access(folder, os.W_OK) and not in_memory(folder)), None)
    if disk is not None:  # the other half: on a disk a thread removes them, beside the next scenario
        with Runner(ReferenceTarget("reference"), tmp=disk) as runner:
            assert not runner._remover.inline
            runner._remover.remove(Workspace(parent=disk))
            assert runner._remover._thread is not None


def test_an_interrupted_inline_removal_leaves_the_rest_for_drain(tmp_path, monkeypatch):
    from harness.containment.cleanup import Remover
    spaces = [Workspace(parent=str(tmp_path)) for _ in range(3)]
    remover = Remover(inline=True)
    real = Workspace.remove
    calls = []

    def interrupted_once(self):
        calls.append(self)
        if len(calls) == 2:
            raise KeyboardInterrupt  # Ctrl-C where nothing defers it (under pytest, a library caller)
        return real(self)

    monkeypatch.setattr(Workspace, "remove", interrupted_once)
    for space in spaces[:2]:
        remover._pending.append(space)
    with pytest.raises(KeyboardInterrupt):
        remover.remove(spaces[2])  # an enclosure or a whole workspace is handed over at once
    assert remover._pending == spaces[1:]
    remover.drain()
    assert remover._pending == [] and not any(os.path.lexists(space.base) for space in spaces)


LONE = READ.replace('args: {file_path: "${workspace}/a.txt"}', 'args: {file_path: {$code_points: ["${workspace}/a", 0xD800]}}')


def test_a_lone_surrogate_is_sent_as_it_is_or_skipped_with_the_targets_reason(scenario_from):
    carrier = ScriptedTarget({"Read": CallResult(output="     1→x")})
    carrier.lone_surrogates_refused = None
    result, target = run(scenario_from(LONE), carrier)
    assert result.verdict is Verdict.PASS
    assert target.calls == [("Read", {"file_path": target.workspaces[0].as_posix() + "/a\ud800"})]
    result, target = run(scenario_from(LONE))  # a target that does not say it can
    assert result.verdict is Verdict.SKIP and "cannot send an argument holding a lone surrogate" in result.reason
    assert target.calls == []
    result, _ = run(scenario_from(READ))  # nothing to refuse
    assert result.verdict is Verdict.PASS


@pytest.mark.parametrize("answer,verdict", [
    ({"error": {"code": "EINVAL", "message": "bad"}}, None),
    ({"output": {"anything": [1, None]}}, None),
    ({"error": {"code": "EINVAL", "message": None}}, "at error/message"),
    ({"error": {"code": 1.5, "message": "bad"}}, "at error/code"),
    ({"output": 1, "extra": True}, "outside the normal form"),
])
def test_the_reference_is_held_to_the_normal_form_of_a_cmd_answer(answer, verdict, tmp_path):
    from harness.containment.audit_hook import Confinement
    from harness.targets.reference import ReferenceSession

    class Answers:
        def call(self, tool, args):
            return answer

    if verdict is None:
        assert ReferenceSession(Answers(), Confinement(str(tmp_path))).call("t", {}).failed == ("error" in answer)
    else:
        with pytest.raises(TargetError, match=verdict):
            ReferenceSession(Answers(), Confinement(str(tmp_path))).call("t", {})


def test_a_file_expected_below_a_folder_that_was_never_made_is_missing_not_a_harness_error(tmp_path):
    # then.files names sub/dir/x.txt, and nothing made sub/: the walk to it finds no folder on the way.
    folder = tmp_path / "scenarios"
    folder.mkdir()
    (folder / "s.yaml").write_text(
        "id: claude-code/parents-missing\nprofile: claude-code\ntitle: parents never made\n"
        "source: test\ngiven:\n  files:\n    a.txt: \"x\\n\"\nsteps:\n"
        "  - tool: Read\n    args: {file_path: \"${workspace}/a.txt\"}\n"
        "then:\n  files:\n    sub/dir/x.txt: \"new\\n\"\n", "utf-8")
    from harness.run import assemble
    from harness.scenario import catalog
    scenario = catalog.load([folder]).scenarios[0]
    with assemble.runner(assemble.target("reference")) as runner:
        result = runner.run(scenario)
    assert result.verdict is Verdict.FAIL, result.reason
    assert any(m.path == "then.files[sub/dir/x.txt]" and m.observed == "<missing>" for _, m in result.failures), result.failures


def test_a_fixed_enclosures_folder_made_before_its_first_scenario_is_placed_as_between_two(tmp_path):
    """A fixed enclosure's folder can be made before the first scenario (a sandboxed candidate binds it
    at its start); the first placing then checks it as it checks it between two scenarios."""
    from harness.containment import enclosure as enclosure_mod
    kept = enclosure_mod.Enclosure(parent=str(tmp_path), fixed=True)
    written = enclosure_mod.Enclosure(parent=str(tmp_path), fixed=True)
    try:
        early = kept.workspace_folder()
        assert early.is_dir() and kept.workspace_folder() == early
        assert kept.place() == early and kept.escapes() == []
        (written.workspace_folder() / "left.txt").write_text("by the candidate's start")
        with pytest.raises(OSError, match="written between two scenarios"):
            written.place()
        assert written.spoiled
    finally:
        kept.remove()
        written.remove()


class _QuietTarget(ScriptedTarget):
    """A scripted target whose sessions change the workspace only while a call runs (as the reference)."""

    def open(self, profile, workspace, options):
        session = super().open(profile, workspace, options)
        session.acts_only_in_calls = True
        return session


@pytest.mark.parametrize("quiet", [True, False])
def test_each_reading_after_a_call_of_a_target_that_acts_only_in_calls_sees_what_the_call_did(scenario_from, quiet):
    def write(workspace, args):
        (Path(workspace) / "a.txt").write_text(args["content"])
        return CallResult(output="written")
    text = read_scenario("claude-code/read/t", '"     1→x"').replace("given:", "given:\n  dirs: [d]", 1) + (
        '  - tool: Write\n    args: {file_path: "${workspace}/a.txt", content: "y\\n"}\n'
        '  - tool: Read\n    args: {file_path: "${workspace}/a.txt"}\n'
        '  - tool: Write\n    args: {file_path: "${workspace}/a.txt", content: "z\\n"}\n'
        'then:\n  files:\n    a.txt: "z\\n"\n  others_unchanged: true\n')
    target = (_QuietTarget if quiet else ScriptedTarget)({"Read": CallResult(output="     1→x"), "Write": write})
    with Runner(target, record_states=True) as runner:
        result = runner.run(scenario_from(text))
    assert result.verdict is Verdict.PASS, result.reason
    assert [step.extra["workspace"]["a.txt"]["text"] for step in result.steps] == ["x\n", "y\n", "y\n", "z\n"]
    assert result.workspace == result.steps[-1].extra["workspace"] and set(result.workspace) == {"a.txt", "d"}

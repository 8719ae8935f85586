"""Scenario files that try to make the harness act outside the workspace: refused at lint, or an error verdict.

The paths are the harness's own operations (laying out ``given``, actions, ``then`` checks), not a
candidate's. A scenario may lay out a link out of the workspace (that is a real test case), but only
into the harness's own folder around it: a candidate that follows links would otherwise write
wherever a scenario file aims it. Links a candidate makes may lead anywhere; the harness never
writes, changes, deletes or reads through them.
"""

from __future__ import annotations

import json
import os
import sys

import pytest

from harness.containment.paths import Outside, check_link_target, resolve
from harness.scenario.static_checks import built_path_problem
from harness.util.pathrules import argument_path_problem, lexical_problem, link_target_problem
from tests.hostile.conftest import CANDIDATES, harness_run, no_secret, write_scenarios

DOTDOT = """
id: hostile/dotdot-{n}
profile: claude-code
title: climbs out with ..
source: test
{body}
steps:
  - tool: Read
    args: {{file_path: "${{workspace}}/a.txt"}}
{tail}
"""

CASES = [
    ("given:\n  files:\n    ../../escape.txt: boom", ""),
    ("given:\n  dirs: [a/../../out]", ""),
    ("given:\n  symlinks:\n    ../link: link-target", ""),
    ("", "  - action: write\n    path: ../../../victim.txt\n    content: x"),
    ("", "then:\n  files:\n    ../../../../etc/passwd: root"),
    ("", "then:\n  absent: [../sibling]"),
]


def test_paths_that_climb_out_of_the_workspace_are_invalid_and_named_with_file_line_and_field(tmp_path, victim):
    folder = tmp_path / "scenarios"
    for n, (body, tail) in enumerate(CASES):
        write_scenarios(folder, DOTDOT.format(n=n, body=body, tail=tail), f"s{n}.yaml")
    outcome = harness_run(tmp_path, folder)
    assert outcome.code == 2  # invalid scenario files
    problems = [r["reason"] for r in outcome.report["results"]]
    assert len(problems) == len(CASES)
    for n, field in enumerate(["given.files", "given.dirs[0]", "given.symlinks", "steps[1].path",
                               "then.files", "then.absent[0]"]):
        reason = next(p for p in problems if f"s{n}.yaml:" in p)
        assert field in reason and "outside the workspace" in reason, reason
    assert not any((victim.parent / name).exists() for name in ("escape.txt", "out", "link", "victim.txt"))


def test_the_lexical_rule_allows_what_stays_inside():
    assert lexical_problem("a/../b") is None and lexical_problem("${workspace}/a") is None
    assert lexical_problem("a/../../b") and lexical_problem("/etc/passwd") and lexical_problem("a\0b")


LINKED = """
id: hostile/through-link-{n}
profile: claude-code
title: acts through links a candidate laid out
source: test
given:
  files:
    a.txt: "a\\n"
steps:
  - tool: Read
    args: {{file_path: "${{workspace}}/a.txt"}}
{step}
{then}
"""


def linking_candidate(victim) -> str:
    """A cmd: candidate whose call lays out ``out``, ``secret.txt`` and ``rel``, links leading to ``victim``."""
    return f"cmd:{sys.executable} {CANDIDATES / 'hostile_cmd.py'} --mode links --arg {victim}"


ACTIONS = [
    "  - action: write\n    path: out/new.txt\n    content: pwned",
    "  - action: append\n    path: secret.txt\n    content: pwned",
    "  - action: chmod\n    path: out/keep.txt\n    mode: '0777'",
    "  - action: delete\n    path: out/keep.txt",
    "  - action: delete\n    path: rel/sub",
    "  - action: mkdir\n    path: out/made",
    "  - action: touch\n    path: secret.txt",
    "  - action: symlink\n    path: out/planted\n    target: a.txt",
    "  - action: write\n    path: rel/keep.txt\n    content: pwned",
]


def test_actions_through_a_link_leading_outside_are_error_verdicts_and_not_performed(tmp_path, victim):
    folder = tmp_path / "scenarios"
    for n, step in enumerate(ACTIONS):
        write_scenarios(folder, LINKED.format(n=n, step=step, then=""), f"s{n}.yaml")
    outcome = harness_run(tmp_path, folder, "--target", linking_candidate(victim))
    assert outcome.code == 1
    for n in range(len(ACTIONS)):
        result = outcome.result(f"hostile/through-link-{n}")
        assert result["verdict"] == "error", result
        assert "outside the workspace: not followed" in result["reason"], result["reason"]
    no_secret(outcome)


def test_then_checks_never_read_through_a_link_leading_outside(tmp_path, victim):
    then = ("then:\n  files:\n    secret.txt: {matches: {$regex: '.'}}\n    out/secret.txt: x\n"
            "    rel/sub/deep.txt: {sha256: '" + "0" * 64 + "'}\n    secret.txt/..: {type: dir}")
    write_scenarios(tmp_path / "scenarios", LINKED.format(n=0, step="", then=then))
    outcome = harness_run(tmp_path, tmp_path / "scenarios", "--target", linking_candidate(victim))
    result = outcome.result("hostile/through-link-0")
    assert result["verdict"] == "fail"
    shown = json.dumps(result["then"])
    assert shown.count("not followed") >= 3
    no_secret(outcome)
    # The recorded workspace holds the links themselves, never what they point at.
    assert result["workspace"]["secret.txt"] == {"type": "symlink", "target": f"{victim}/secret.txt"}


def test_resolve_follows_a_link_only_while_it_stays_inside(tmp_path):
    root = tmp_path / "ws"
    (root / "d").mkdir(parents=True)
    (root / "d" / "f").write_text("x")
    os.symlink("d", root / "in")
    os.symlink("../d/f", root / "d" / "up")
    os.symlink(str(tmp_path), root / "out")
    with resolve(str(root), "in/up") as at:
        assert at.rel == "d/f"
    for rel in ("out/x", "in/../../x"):
        try:
            with resolve(str(root), rel):
                raise AssertionError(f"{rel} resolved")
        except Outside:
            pass


OUTWARD = """
id: hostile/outward-link-{n}
profile: mcp-write-text-file
title: aims a link it lays out at the rest of the machine
source: test
{body}
steps:
{step}
  - tool: write_text_file
    args: {{path: "${{workspace}}/l/pwned.txt", content: "pwned"}}
"""

OUTWARD_CASES = [
    ("given:\n  symlinks:\n    l: {victim}", "", "given.symlinks"),
    ("given:\n  symlinks:\n    l: ../../outside", "", "given.symlinks"),
    ("given:\n  symlinks:\n    d/l: a/../../../outside", "", "given.symlinks"),
    ("given:\n  symlinks:\n    l: ${{workspace}}/../../outside", "", "given.symlinks"),
    ("", "  - action: symlink\n    path: l\n    target: /etc", "steps[0].target"),
]


def test_a_link_a_scenario_aims_beyond_the_folder_around_the_workspace_is_invalid_at_lint(tmp_path, victim):
    folder = tmp_path / "scenarios"
    for n, (body, step, _) in enumerate(OUTWARD_CASES):
        write_scenarios(folder, OUTWARD.format(n=n, body=body.format(victim=victim), step=step), f"s{n}.yaml")
    outcome = harness_run(tmp_path, folder)
    assert outcome.code == 2
    for n, (_, _, field) in enumerate(OUTWARD_CASES):
        reason = next(r["reason"] for r in outcome.report["results"] if f"s{n}.yaml:" in r["reason"])
        assert f"[{field}" in reason and "link target outside the harness's folder" in reason, reason
    assert not (victim / "pwned.txt").exists()


def test_a_link_placed_through_another_link_is_checked_where_it_really_is(tmp_path):
    # Linted, ``deep/er/l`` is two levels down, so three '..' stay in the folder around the
    # workspace; on disk ``deep`` leads to the root, the link would sit one level down, and its
    # target would be the folder holding the harness's own. The reference follows links when it
    # writes, so the link, had it been made, would have taken the write there.
    work = tmp_path / "work"
    work.mkdir()
    body = "given:\n  dirs: [er]\n  symlinks:\n    deep: ."
    step = "  - action: symlink\n    path: deep/er/l\n    target: ../../.."
    write_scenarios(tmp_path / "scenarios", OUTWARD.format(n=0, body=body, step=step))
    outcome = harness_run(tmp_path, tmp_path / "scenarios", "--tmp", str(work))
    result = outcome.result("hostile/outward-link-0")
    assert result["verdict"] == "error", result
    assert "would lead outside the workspace and the harness's folder around it: not made" in result["reason"]
    assert [p.name for p in work.iterdir() if not p.name.startswith("harness-")] == []
    assert not list(work.rglob("pwned.txt"))


def test_links_into_the_folder_around_the_workspace_are_made():
    root, base = "/w/harness-1/ws", "/w/harness-1"
    for link, target in ((["l"], ".."), (["l"], "../sibling/canary.txt"), (["d", "l"], "../../x"),
                         (["l"], f"{root}/.."), (["l"], f"{root}/a/b"), (["l"], f"{base}/sibling"), (["d", "l"], "a/b")):
        check_link_target(root, base, link, target)
        assert link_target_problem("/".join(link), target.replace(root, "${workspace}")) is None or target.startswith(base)
    for link, target in ((["l"], "../.."), (["l"], "/etc"), (["d", "l"], "a/../../../x"), (["l"], f"{root}/../.."),
                         (["l"], f"{base}/../x"), (["l"], "x/../.."), (["d", "l"], "../../../x")):
        try:
            check_link_target(root, base, link, target)
        except Outside as refused:
            assert "not made" in refused.message
        else:
            raise AssertionError(f"{link} -> {target} was allowed")
        assert link_target_problem("/".join(link), target.replace(root, "${workspace}")), target


def test_the_path_argument_rule_allows_the_root_one_level_above_it_and_relative_forms():
    for value in ("${workspace}/a.txt", "${workspace}", "${workspace}/../x", "/${workspace}/../x", "../x",
                  "a/b/../../../x", "src/index.ts", "~/note.txt", "C:/Users/dev/x", "..\\up.txt"):
        assert argument_path_problem(value) is None, value
    for value in ("/etc/x", "//srv/share/x", "${workspace}/../../x", "../../x", "a/../../../x", "/${workspace}/../../x"):
        assert argument_path_problem(value), value



EXPANDED = """
id: hostile/expanded-{n}
profile: claude-code
title: a path a careless tool expands
source: test
steps:
  - tool: Write
    args: {{file_path: "{path}", content: "planted\\n"}}
"""


def test_home_and_file_uri_paths_that_lead_beyond_what_the_harness_watches_are_invalid(tmp_path):
    """``~`` and ``file:`` are read by some tools (Claude Code expands ``~``; a tool taking URIs reads
    ``file:``): ``~/.ssh/authorized_keys`` wrote into the home folder, below what the harness watches
    there, and ``file:///...`` anywhere, while the scenario passed its lint and its run."""
    home, victim = tmp_path / "home", tmp_path / "victim"
    home.mkdir()
    victim.mkdir()
    folder = tmp_path / "scenarios"
    paths = ["~/.ssh/authorized_keys", "~/.bashrc", f"file://{victim}/planted.txt",
             f"FILE://localhost{victim}/planted-2.txt", f"file://${{workspace}}/../..{victim}/planted-3.txt",
             f"file:%2F{str(victim).lstrip('/')}/planted-4.txt"]
    for n, path in enumerate(paths):
        write_scenarios(folder, EXPANDED.format(n=n, path=path), f"s{n}.yaml")
    spec = f"cmd:python {CANDIDATES / 'hostile_cmd.py'} --mode expand"
    outcome = harness_run(tmp_path, folder, "--target", spec, env={"HOME": str(home)})
    said = outcome.stdout + outcome.stderr + outcome.report_text
    assert outcome.code == 2, said  # invalid scenario files, not run
    for n in range(len(paths)):
        assert f"s{n}.yaml:8: [steps[0].args.file_path] path argument outside" in said, said
    assert not (home / ".ssh").exists() and not (home / ".bashrc").exists()
    assert list(victim.iterdir()) == []


def test_the_path_argument_rule_reads_home_and_file_uri_paths_as_a_tool_that_expands_them_would():
    allowed = ("~/note.txt", "~/file-tool-conformance-tilde-probe-missing.txt", "file://${workspace}/a.txt",
               "file:///${workspace}/a.txt", "file://localhost${workspace}/a/b.txt", "file://${workspace}/../x",
               "file:a.txt", "a/~/b", "notes~/x")
    for value in allowed:
        assert argument_path_problem(value) is None, value
    refused = ("~", "~/", "~/.bashrc", "~/.ssh/authorized_keys", "~/a/b.txt", "~/../x", "~root/.ssh/x", "~/./x/",
               "file:///etc/cron.d/x", "file:/etc/x", "FILE:///etc/x", "file://localhost/etc/x",
               "file://server/share/x", "file://${workspace}/../../x", "file://${workspace}/%2e%2e/%2E%2E/x",
               "file:%2fetc/x", "file://${workspace}/a%2f..%2f..%2f../x")
    for value in refused:
        assert argument_path_problem(value), value


def test_the_path_argument_rule_reads_a_path_with_white_space_around_it_as_a_tool_that_trims_it_would():
    for value in (" /etc/passwd", "/etc/passwd\n", " ~/.ssh/authorized_keys", "\t~/.bashrc ", " ${workspace}/../../x"):
        assert argument_path_problem(value), repr(value)
    for value in ("   ", " a.txt", "${workspace}/a b.txt ", " ~/note.txt"):
        assert argument_path_problem(value) is None, repr(value)


def test_a_home_or_file_uri_path_built_from_an_earlier_answer_is_checked_as_it_is_built(tmp_path):
    root = str(tmp_path / "ws")
    assert built_path_problem(f"file://{root}/a.txt", root) is None
    assert built_path_problem(f"file://{root}/../x", root) is None
    for value in (f"file://{root}/../../x", "file:///etc/x", "~/.ssh/authorized_keys", f"file://{root}/%2e%2e/%2e%2e/x"):
        assert built_path_problem(value, root), value


def test_with_links_laid_out_a_path_argument_may_not_climb_after_a_name():
    # a/b/c/d/l leads to the folder around the workspace; the kernel applies each '..' after it
    # from there, so the path below reaches / though it reads as staying inside.
    escape = "${workspace}/a/b/c/d/l/../../../../../../x"
    assert argument_path_problem(escape) is None  # no links: read as written, it stays inside
    assert "after a name" in argument_path_problem(escape, links=True)
    assert argument_path_problem("../x", links=True) is None and argument_path_problem("a/b", links=True) is None
    assert argument_path_problem("../a/../x", links=True)


def test_a_path_argument_built_from_code_points_is_checked_as_the_text_it_makes(tmp_path):
    scenario = """
id: hostile/code-points-path
profile: mcp-write-text-file
title: a path assembled from code points
source: test
given:
  symlinks: {"a/b/l": "../../.."}
steps:
  - tool: write_text_file
    args: {path: {$code_points: [47, "etc/x"]}, content: "x"}
  - tool: write_text_file
    args: {path: "${workspace}/a/b/l/../../../../x\\nmore", content: "x"}
"""
    write_scenarios(tmp_path / "scenarios", scenario)
    outcome = harness_run(tmp_path, tmp_path / "scenarios")
    assert outcome.code == 2
    reasons = " ".join(r["reason"] for r in outcome.report["results"])
    assert "[steps[0].args.path] path argument outside" in reasons and "'/etc/x' is an absolute path" in reasons
    assert "[steps[1].args.path] path argument outside" in reasons and "after a name" in reasons


BUILT_FROM_ANSWERS = """\
id: aptix-tul-004/hostile/built-path
profile: aptix-tul-004
title: a path argument built from what the candidate answered before
source: test
steps:
  - tool: workspace_create_file
    args: {path: "notes/a.txt", content: "x"}
  - tool: workspace_create_file
    args: {path: "${step1.output.path}", content: "y"}
"""


@pytest.mark.parametrize("answered, sent", [
    ("/etc/cron.d/x", False),                  # absolute, beyond the folder around the workspace
    ("../../x", False),                        # climbs two levels above the root
    ("{root}/../../x", False),                 # from the root, two levels up
    ("notes/b.txt", True),                     # relative, inside
    ("{root}/notes/b.txt", True),              # the workspace's real path, inside
    ("{root}/../b.txt", True),                 # one level above the root: where the canaries see it
])
def test_a_path_argument_built_from_an_earlier_answer_is_checked_before_it_is_sent(scenario_from, answered, sent):
    from fakes import ScriptedTarget

    from harness.run.runner import Runner
    from harness.scenario.model import Verdict
    from harness.targets.base import CallResult

    def create(workspace, args):
        return CallResult(output={"path": answered.format(root=workspace)})

    target = ScriptedTarget({"workspace_create_file": create})
    with Runner(target) as runner:
        result = runner.run(scenario_from(BUILT_FROM_ANSWERS))
    assert len(target.calls) == (2 if sent else 1), target.calls
    if not sent:
        assert result.verdict is Verdict.ERROR
        assert "a path built from an earlier answer leads outside" in result.reason
        assert "args.path" in result.reason and "not sent" in result.reason
    else:
        assert result.verdict is Verdict.PASS, result.reason

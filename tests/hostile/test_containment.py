"""Scenario files that try to make the harness act outside the workspace: refused at lint, or an error verdict.

The paths are the harness's own operations (laying out ``given``, actions, ``then`` checks), not a
candidate's: a scenario may lay out a link pointing outside (that is a real test case), but the
harness never writes, changes, deletes or reads through it.
"""

from __future__ import annotations

import json
import os

from harness.safepath import Outside, lexical_problem, resolve
from tests.hostile.conftest import SECRET, harness_run, no_secret, write_scenarios

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
    ("given:\n  symlinks:\n    ../link: /etc", ""),
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
title: acts through a link the scenario laid out
source: test
given:
  files:
    a.txt: "a\\n"
  symlinks:
    out: {victim}
    secret.txt: {victim}/secret.txt
    rel: ../../../../../../../../../..{victim}
steps:
{step}
  - tool: Read
    args: {{file_path: "${{workspace}}/a.txt"}}
{then}
"""

ACTIONS = [
    "  - action: write\n    path: out/new.txt\n    content: pwned",
    "  - action: append\n    path: secret.txt\n    content: pwned",
    "  - action: chmod\n    path: out/keep.txt\n    mode: '0777'",
    "  - action: delete\n    path: out/keep.txt",
    "  - action: delete\n    path: rel/sub",
    "  - action: mkdir\n    path: out/made",
    "  - action: touch\n    path: secret.txt",
    "  - action: symlink\n    path: out/planted\n    target: /etc/passwd",
    "  - action: write\n    path: rel/keep.txt\n    content: pwned",
]


def test_actions_through_a_link_leading_outside_are_error_verdicts_and_not_performed(tmp_path, victim):
    folder = tmp_path / "scenarios"
    for n, step in enumerate(ACTIONS):
        write_scenarios(folder, LINKED.format(n=n, victim=victim, step=step, then=""), f"s{n}.yaml")
    outcome = harness_run(tmp_path, folder)
    assert outcome.code == 1
    for n in range(len(ACTIONS)):
        result = outcome.result(f"hostile/through-link-{n}")
        assert result["verdict"] == "error", result
        assert "outside the workspace: not followed" in result["reason"], result["reason"]
    no_secret(outcome)


def test_then_checks_never_read_through_a_link_leading_outside(tmp_path, victim):
    then = ("then:\n  files:\n    secret.txt: {matches: {$regex: '.'}}\n    out/secret.txt: x\n"
            "    rel/sub/deep.txt: {sha256: '" + "0" * 64 + "'}\n    secret.txt/..: {type: dir}")
    write_scenarios(tmp_path / "scenarios", LINKED.format(n=0, victim=victim, step="", then=then))
    outcome = harness_run(tmp_path, tmp_path / "scenarios")
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

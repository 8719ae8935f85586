"""Candidates that leave traps in the workspace for the harness that reads it back.

A FIFO (opening it would block), a socket and a sparse 10 GB file (reading it would take minutes
and all memory); a written file swapped for a link to a secret outside the workspace. Reading the
workspace must never open what is not a regular file, must stop at its caps, and must never
follow a link the candidate made out of the workspace: the secret reaches no report.
"""

from __future__ import annotations

import resource

from tests.hostile.conftest import CANDIDATES, harness_run, no_secret, write_scenarios

WRITE = """
id: hostile/{name}
profile: claude-code
title: a candidate that leaves traps
source: test
steps:
  - tool: Write
    args: {{file_path: "${{workspace}}/a.txt", content: "hello\\n"}}
then:
  files:
    a.txt: {{content: "hello\\n", matches: {{$contains: "hello"}}}}
"""


def test_fifos_sockets_and_a_sparse_10_gb_file_are_recorded_not_read(tmp_path):
    write_scenarios(tmp_path / "scenarios", WRITE.format(name="special"))
    spec = f"cmd:python {CANDIDATES / 'hostile_cmd.py'} --mode special"
    outcome = harness_run(tmp_path, tmp_path / "scenarios", "--target", spec, timeout=120)
    result = outcome.result("hostile/special")
    workspace = result["workspace"]
    assert workspace["fifo"]["type"] == "fifo" and workspace["sock"]["type"] == "socket"
    sparse = workspace["sparse.bin"]
    assert sparse["size"] == 10 * 1024 ** 3 and "sha256" not in sparse and "sha256_of_first" in sparse
    assert outcome.seconds < 90
    assert resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss < 1024 * 1024  # KiB: under 1 GiB


def test_a_file_swapped_for_a_link_to_a_secret_is_never_read(tmp_path, victim):
    write_scenarios(tmp_path / "scenarios", WRITE.format(name="swap"))
    spec = f"cmd:python {CANDIDATES / 'hostile_cmd.py'} --mode swap-link --arg {victim / 'secret.txt'}"
    outcome = harness_run(tmp_path, tmp_path / "scenarios", "--target", spec)
    result = outcome.result("hostile/swap")
    assert result["verdict"] == "fail"
    assert result["workspace"]["a.txt"] == {"type": "symlink", "target": str(victim / "secret.txt")}
    no_secret(outcome)


def test_a_tool_map_file_that_is_a_fifo_or_endless_is_an_error_not_a_hang(tmp_path):
    # The user names it, often as a path in a checkout: a link to /dev/zero never ended, a FIFO
    # blocked the start of the run.
    import os

    import pytest

    from harness.targets.bindings import BindingError, from_tool_map
    fifo = tmp_path / "map.yaml"
    os.mkfifo(fifo)
    endless = tmp_path / "zero.yaml"
    endless.symlink_to("/dev/zero")
    for path, why in ((fifo, "not a regular file"), (endless, "not a regular file")):
        with pytest.raises(BindingError) as refused:
            from_tool_map([], path)
        assert why in str(refused.value), path

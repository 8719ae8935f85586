"""Scenario files that ask for too much: huge generated content, deep nesting, a YAML bomb, a catastrophic regex.

Each is refused at load time with file, line and field (``harness run`` exits 2, the rest of the
catalog still runs), or, for a regex that only misbehaves on what a candidate returned, is an
``error`` verdict within a bounded time: never a crash, an exhausted memory or a hang.
"""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from harness.scenario import matchers
from tests.hostile.conftest import ROOT, harness_run, write_scenarios
from tests.test_profiles import PROFILE

HEAD = """
id: hostile/{name}
profile: claude-code
title: asks for too much
source: test
"""


def test_generated_content_beyond_the_cap_is_invalid_before_anything_is_made(tmp_path):
    folder = tmp_path / "scenarios"
    write_scenarios(folder, HEAD.format(name="lines") + """
given:
  files:
    big.txt: {lines: 10000000000}
steps:
  - tool: Read
    args: {file_path: "${workspace}/big.txt"}
""", "lines.yaml")
    write_scenarios(folder, HEAD.format(name="pattern") + """
steps:
  - tool: Write
    args: {file_path: "${workspace}/x", content: {$content: {pattern: "ab", size: 99999999999}}}
""", "pattern.yaml")
    outcome = harness_run(tmp_path, folder)
    assert outcome.code == 2
    reasons = " ".join(r["reason"] for r in outcome.report["results"])
    assert "lines.yaml:9: [given.files.big.txt]" in reasons and "pattern.yaml:9: [steps[0].args.content]" in reasons
    assert reasons.count("more than the cap") == 2
    assert outcome.cpu_seconds < 30


def test_yaml_nested_50000_deep_is_invalid_with_its_line_not_a_crash(tmp_path):
    folder = tmp_path / "scenarios"
    write_scenarios(folder, HEAD.format(name="deep") + "steps:\n  - tool: Read\n    args: {file_path: "
                    + "[" * 50000 + "]" * 50000 + "}\n", "deep.yaml")
    write_scenarios(folder, HEAD.format(name="block") + "options:\n" + "".join(
        " " * (2 * i + 2) + "k:\n" for i in range(100)) + "steps: []\n", "block.yaml")
    outcome = harness_run(tmp_path, folder)
    assert outcome.code == 2, outcome.stderr
    # The harness's behaviour, not a parser's wording: each file an invalid-file error, named with its line. 50,000 levels
    # may be stopped by the YAML parser itself (libyaml's own limit, PyYAML 6.0.4) or by the harness's bound;
    # 100 levels are under every parser's limit, so only the harness's own bound (64) can refuse them.
    said = {Path(r["reason"].split(":")[0]).name: r for r in outcome.report["results"]}
    assert said["deep.yaml"]["verdict"] == "error" and "deep.yaml:8: " in said["deep.yaml"]["reason"], said
    assert said["block.yaml"]["verdict"] == "error" and "nested deeper than 64" in said["block.yaml"]["reason"], said


def test_a_yaml_bomb_is_invalid(tmp_path):
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [*a{i-1}, *a{i-1}, *a{i-1}, *a{i-1}, *a{i-1}, *a{i-1}, *a{i-1}, *a{i-1}, *a{i-1}]"
              for i in range(1, 9)]
    text = HEAD.format(name="bomb") + "options:\n" + "".join("  " + line + "\n" for line in lines) + \
        "steps:\n  - tool: Read\n    args: {file_path: x}\n"
    write_scenarios(tmp_path / "scenarios", text)
    outcome = harness_run(tmp_path, tmp_path / "scenarios", timeout=60)
    assert outcome.code == 2 and "YAML bomb" in outcome.report["results"][0]["reason"]


def test_a_regex_that_does_not_compile_is_invalid(tmp_path):
    write_scenarios(tmp_path / "scenarios", HEAD.format(name="bad-regex") + """
steps:
  - tool: Read
    args: {file_path: "${workspace}/x"}
    expect: {error: {message: {$regex: "(unclosed"}}}
""")
    outcome = harness_run(tmp_path, tmp_path / "scenarios")
    assert outcome.code == 2 and "hostile.yaml:10: [steps[0].expect.error.message.$regex] invalid $regex" in outcome.stdout
    assert "regex" in outcome.report["results"][0]["reason"]


def test_a_catastrophic_regex_is_an_error_verdict_within_bounded_time(tmp_path):
    write_scenarios(tmp_path / "scenarios", HEAD.format(name="redos") + """
given:
  files:
    a.txt: {pattern: "a", size: 5000}
steps:
  - tool: Read
    args: {file_path: "${workspace}/a.txt"}
    expect: {output: {$regex: "(a+)+b"}}
  - tool: Read
    args: {file_path: "${workspace}/a.txt"}
then:
  files:
    a.txt: {matches: {$regex: "(.*a){20}x"}}
""")
    # The bound is on the work (processor time), not on the wall clock a busy machine stretches: the
    # wall-clock timeout here only ends a hang.
    outcome = harness_run(tmp_path, tmp_path / "scenarios", timeout=240)
    result = outcome.result("hostile/redos")
    assert outcome.code == 1 and result["verdict"] == "error"
    assert f"did not finish within {matchers.REGEX_TIMEOUT:g} s" in result["reason"]
    assert outcome.cpu_seconds < 20
    assert resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss < 1024 * 1024  # KiB: under 1 GiB


DEEP = "[" * 50000 + "]" * 50000
STEP = "steps:\n  - tool: Read\n    args: {file_path: \"${workspace}/x\"}\n"


def test_a_profile_or_binding_nested_50000_deep_is_invalid_not_a_crash(tmp_path):
    # profile.yaml and binding files come with contributed scenario folders: the same bound holds for them
    profile = tmp_path / "scenarios" / "deep-profile"
    profile.mkdir(parents=True)
    (profile / "profile.yaml").write_text(f"name: deep-profile\ntitle: {DEEP}\n", "utf-8")
    outcome = harness_run(tmp_path, tmp_path / "scenarios")
    assert outcome.code == 2, (outcome.code, outcome.stderr)
    assert "profile.yaml:2:" in outcome.stdout + outcome.stderr

    binding = tmp_path / "deep.binding.yaml"
    binding.write_text(f"profile: claude-code\ntools: {DEEP}\n", "utf-8")
    write_scenarios(tmp_path / "plain", HEAD.format(name="plain") + STEP)
    outcome = harness_run(tmp_path, tmp_path / "plain", "--binding", str(binding), "--target", "cmd:true")
    assert outcome.code == 2, (outcome.code, outcome.stderr)
    assert "deep.binding.yaml:2:" in outcome.stdout + outcome.stderr


@pytest.mark.parametrize("expression, problem", [
    ("(" * 1500 + "a" + ")" * 1500, "nests too deep to parse"),  # the JMESPath parser recurses per level
    ("a." * 30000 + "a", "is longer than 4096 characters"),
])
def test_a_binding_expression_that_would_exhaust_the_parser_is_invalid_not_a_crash(tmp_path, expression, problem):
    binding = tmp_path / "deep.binding.yaml"
    binding.write_text(f"profile: claude-code\ntools:\n  Read:\n    output: \"{expression}\"\n", "utf-8")
    write_scenarios(tmp_path / "plain", HEAD.format(name="plain") + STEP)
    outcome = harness_run(tmp_path, tmp_path / "plain", "--binding", str(binding), "--target", "cmd:true")
    said = outcome.stdout + outcome.stderr
    assert outcome.code == 2, (outcome.code, said[-2000:])
    assert "deep.binding.yaml:4: [tools.Read.output]" in said and problem in said, said[-2000:]
    assert len(said) < 20000  # the expression is shown cut, not whole


def test_a_fifo_given_as_a_binding_is_refused_not_waited_on(tmp_path):
    write_scenarios(tmp_path / "plain", HEAD.format(name="plain") + STEP)
    os.mkfifo(tmp_path / "pipe.yaml")  # nobody ever writes to it: a blocking open would wait for ever
    outcome = harness_run(tmp_path, tmp_path / "plain", "--binding", str(tmp_path / "pipe.yaml"),
                          "--target", "cmd:true", timeout=30)
    assert outcome.code == 2, (outcome.code, outcome.stderr)
    assert "pipe.yaml" in outcome.stdout + outcome.stderr and "not a regular file" in outcome.stdout + outcome.stderr


def test_a_link_in_a_scenario_folder_is_not_read_through(tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "secret.yaml").write_text("id: TOPSECRET-4711\nprofile: nosuch\n", "utf-8")
    folder = tmp_path / "scenarios"
    write_scenarios(folder, HEAD.format(name="plain") + STEP)
    (folder / "leak.yaml").symlink_to(victim / "secret.yaml")
    (folder / "linked-folder").symlink_to(victim, target_is_directory=True)
    outcome = harness_run(tmp_path, folder)
    assert outcome.code == 2, (outcome.code, outcome.stderr)
    everything = outcome.stdout + outcome.stderr + outcome.report_text
    assert "leak.yaml" in everything and "a symbolic link, not followed" in everything
    assert "TOPSECRET" not in everything and "linked-folder" not in everything


def test_a_baseline_or_report_nested_past_the_parsers_stack_is_an_error_naming_it(tmp_path):
    baseline = tmp_path / "deep-baseline.yaml"
    baseline.write_text("a: " + "[" * 100_000 + "]" * 100_000 + "\n", "utf-8")
    write_scenarios(tmp_path / "plain", HEAD.format(name="plain") + STEP)
    outcome = harness_run(tmp_path, tmp_path / "plain", "--baseline", str(baseline))
    said = outcome.stdout + outcome.stderr
    assert "deep-baseline.yaml:1:" in "".join(said.split()), said[-2000:]  # wrapped at any width

    report = tmp_path / "deep.json"
    report.write_text("[" * 200_000 + "]" * 200_000, "utf-8")
    done = subprocess.run([sys.executable, "-m", "harness", "report", str(report)], capture_output=True, text=True,
                          timeout=60, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2 and "Traceback" not in done.stdout + done.stderr, done.stderr[-2000:]
    assert "notareadableJSONreport:itneststoodeeptoparse" in "".join((done.stdout + done.stderr).split())


#: The put-file profile of tests/test_profiles.py, its ``mode`` argument a reference to ``{ref}``.
REF_PROFILE = PROFILE.replace("{", "{{").replace("}", "}}").replace(
    "mode: {{enum: [create, replace]}}", 'mode: {{$ref: "{ref}"}}')


@pytest.mark.parametrize("kind", ["json-file", "fifo", "url"])
def test_a_schema_refers_to_no_file_and_no_url_the_harness_would_fetch(tmp_path, kind):
    # jsonschema-rs retrieves any file:// or http(s):// URI a schema names: a JSON file's values
    # reached the messages, a FIFO hung the harness, a URL was requested.
    import socket
    secret = tmp_path / "secret.json"
    secret.write_text('{"enum": ["TOP-SECRET-VALUE"]}', "utf-8")
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(0.2)
    ref = {"json-file": secret.as_uri(), "fifo": fifo.as_uri(),
           "url": f"http://127.0.0.1:{listener.getsockname()[1]}/schema.json"}[kind]
    folder = tmp_path / "scenarios"
    profile = folder / "put-file" / "profile.yaml"
    profile.parent.mkdir(parents=True)
    profile.write_text(REF_PROFILE.format(ref=ref), "utf-8")
    try:
        done = subprocess.run([sys.executable, "-m", "harness", "lint", "--no-builtin", "--scenarios", str(folder)],
                              capture_output=True, text=True, timeout=60, cwd=ROOT,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
        try:
            listener.accept()[0].close()
            connected = True
        except OSError:
            connected = False
    finally:
        listener.close()
    out = done.stdout + done.stderr
    assert done.returncode == 2, out
    assert f"{profile}:16: [tools.put_text.arguments.properties.mode.$ref] not a valid JSON Schema" in out and ref in out, out
    assert "retrieves no schema" in out and "TOP-SECRET" not in out and "Traceback" not in out, out
    assert not connected


def test_a_tools_input_schema_refers_to_nothing_outside_itself(tmp_path):
    from harness.util import schemas
    secret = tmp_path / "secret.json"
    secret.write_text('{"enum": ["TOP-SECRET-VALUE"]}', "utf-8")
    with pytest.raises(schemas.SchemaInvalid) as refused:
        schemas.validator({"type": "object", "properties": {"p": {"$ref": secret.as_uri()}}})
    assert "retrieves no schema" in refused.value.message and "TOP-SECRET" not in refused.value.message
    local = schemas.validator({"$defs": {"s": {"type": "string"}}, "properties": {"p": {"$ref": "#/$defs/s"}}})
    assert local.is_valid({"p": "x"}) and not local.is_valid({"p": 1})
    drafts = schemas.validator({"$schema": "http://json-schema.org/draft-07/schema#", "type": "string"})
    assert drafts.is_valid("x")


def test_a_scenario_may_not_make_a_set_user_id_or_set_group_id_file(tmp_path):
    # Made as root, a setuid file is root's, and under --run-as the candidate's user (meant not
    # to be root) can reach the workspace; no contract needs one.
    folder = tmp_path / "scenarios"
    write_scenarios(folder, HEAD.format(name="setuid") + """
given:
  files:
    tool: {content: "#!/bin/sh\\n", mode: "4755"}
  dirs:
    - {path: shared, mode: "2775"}
    - {path: sticky, mode: "1777"}
steps:
  - action: chmod
    path: tool
    mode: "6755"
  - tool: Read
    args: {file_path: "${workspace}/tool"}
""", "setuid.yaml")
    outcome = harness_run(tmp_path, folder)
    assert outcome.code == 2
    results = outcome.report["results"]
    assert {result["verdict"] for result in results} == {"error"}
    reasons = " ".join(result["reason"] for result in results)
    for field in ("given.files.tool.mode", "given.dirs[0].mode", "steps[0].mode"):
        assert f"[{field}] mode" in reasons and "set-user-ID or set-group-ID" in reasons, field
    assert "given.dirs[1]" not in reasons  # the sticky bit is harmless


def test_a_scenario_laying_out_too_many_entries_or_taking_too_many_steps_is_invalid(tmp_path):
    # 200,000 given files took a minute of system calls for one scenario; a 16 MiB file holds more.
    folder = tmp_path / "scenarios"
    files = "\n".join(f"    f{index}: ''" for index in range(20001))
    write_scenarios(folder, HEAD.format(name="many") + "given:\n  files:\n" + files + """
steps:
  - tool: Read
    args: {file_path: "${workspace}/f1"}
""", "many.yaml")
    steps = "".join('  - tool: Read\n    args: {file_path: "${workspace}/a"}\n' for _ in range(10001))
    write_scenarios(folder, HEAD.format(name="long") + "steps:\n" + steps, "long.yaml")
    outcome = harness_run(tmp_path, folder)
    assert outcome.code == 2 and outcome.cpu_seconds < 30
    reasons = " ".join(result["reason"] for result in outcome.report["results"])
    assert "[given] the scenario lays out 20001 entries and 0 folders on their paths, more than the cap of 20000" in reasons
    assert "[steps] the scenario has 10001 steps, more than the cap of 10000" in reasons


def test_a_regex_that_would_expand_past_memory_when_compiled_is_invalid(tmp_path):
    # The engine expands counted repeats when it compiles: (?:a{1000}){1000} took 274 MB, one more
    # level all the memory of the machine, before any search (and its timeout) began.
    folder = tmp_path / "scenarios"
    write_scenarios(folder, HEAD.format(name="expands") + """
steps:
  - tool: Read
    args: {file_path: "${workspace}/a"}
    expect:
      output: {$regex: "(?:(?:(?:a{1000}){1000}){1000})"}
""", "expands.yaml")

    out = _lint_in_2_gib(folder)
    assert f"{folder / 'expands.yaml'}:11: [steps[0].expect.output.$regex] invalid $regex: it expands to" in out, out
    assert "(HARNESS_MAX_REGEX_SIZE)" in out


def test_paths_deeper_than_the_cap_or_making_too_many_folders_are_invalid(tmp_path):
    # One `given.dirs` entry of 1,000 components made 1,000 folders: 100 such entries (0.5% of the
    # entries cap) laid out 100,000 folders for one scenario.
    folder = tmp_path / "scenarios"
    deep = "/".join(["d"] * 300)
    write_scenarios(folder, HEAD.format(name="deep") + f"""
given:
  dirs:
    - "{deep}"
steps:
  - tool: Read
    args: {{file_path: "${{workspace}}/a"}}
""", "deep.yaml")
    wide = "\n".join(f'    - "w{n}/' + "/".join(["d"] * 250) + '"' for n in range(100))
    write_scenarios(folder, HEAD.format(name="wide") + "given:\n  dirs:\n" + wide + """
steps:
  - tool: Read
    args: {file_path: "${workspace}/a"}
""", "wide.yaml")
    outcome = harness_run(tmp_path, folder)
    assert outcome.code == 2
    reasons = " ".join(result["reason"] for result in outcome.report["results"])
    assert "[given.dirs[0]] the path has 300 components, more than the cap of 256" in reasons
    assert re.search(r"\[given\] the scenario lays out 100 entries and 2\d{4} folders on their paths, more than "
                     r"the cap of 20000", reasons), reasons


def test_many_regexes_each_under_the_cap_cannot_take_all_memory_together(tmp_path):
    # 300 patterns of 90,002 parts each (every one under the per-pattern cap): about 13 MB each,
    # all kept by the compiled-pattern caches, a MemoryError traceback at lint under 3 GB.
    folder = tmp_path / "scenarios"
    items = "\n".join(f'          - {{$not: {{$regex: "(?:a{{300}}){{300}}b{n}"}}}}' for n in range(300))
    write_scenarios(folder, HEAD.format(name="many-regexes") + """
steps:
  - tool: Read
    args: {file_path: "${workspace}/a"}
    expect:
      output:
        $all:
""" + items + "\n", "many.yaml")

    out = _lint_in_2_gib(folder)
    assert "patterns compile to more than 1000000 parts together (HARNESS_MAX_REGEX_TOTAL)" in out, out


def _lint_in_2_gib(folder) -> str:
    """Returns what ``harness lint`` of ``folder`` said, run in 2 GiB of address space; it must have
    found the files invalid (exit 1), without a traceback or running out of memory."""
    def capped() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    done = subprocess.run([sys.executable, "-m", "harness", "lint", "--no-builtin", "--scenarios", str(folder)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT, preexec_fn=capped,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    out = done.stdout + done.stderr
    assert done.returncode == 1 and "Traceback" not in out and "MemoryError" not in out, out
    return out

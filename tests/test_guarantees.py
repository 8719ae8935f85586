"""The run's guarantees, on every path: entry points x target kinds.

Entry points: ``harness run``, the pytest plugin, the capture driver, ``harness diff``/``report``.
Kinds: the reference, ``cmd:`` and ``mcp:`` (the misbehaving test adapters), ``acp:``, and
``claude-code`` (a CLI that is not there: every scenario skips; no live CLI is needed). For each
guarantee a parametrised test with one cell per (entry, kind) where the guarantee applies:

- isolation (``--sandbox``, ``--run-as``): applied by the kinds that can, refused (exit 2, one line)
  by the others, whatever the entry point;
- ``-x`` and ``--lf``;
- ``--jobs`` isolation: parallel sessions never share a workspace; nothing but the assembly
  (harness/run/assemble.py) constructs a ``Runner``;
- baselines (``harness run --baseline``, pytest ``--baseline``);
- a run in which nothing ran exits 1 with one line saying so, in every report;
- escapes are reported;
and, each with a test that failed before its fix, the failures measured on the way there.
"""

from __future__ import annotations

import ast
import io
import json
import sys
import textwrap
from pathlib import Path

import pytest

from harness.cli.main import main
from harness.containment import sandbox
from harness.run import assemble
from harness.run.options import RunOptions
from harness.targets import launch

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]
ADAPTERS = ROOT / "tests" / "adapters"
PY = sys.executable

REFERENCE = "reference"
CMD = f"cmd:{PY} {ADAPTERS / 'misbehaving.py'} --mode none"
CMD_ESCAPE = f"cmd:{PY} {ADAPTERS / 'misbehaving.py'} --mode escape"
CMD_MISSPELT = f"cmd:{PY} {ADAPTERS / 'misbehaving.py'} --mode none --profiles claude-cod"
MCP = f"mcp:{PY} {ADAPTERS / 'mcp_misbehaving.py'} --mode none"
MCP_ESCAPE = f"mcp:{PY} {ADAPTERS / 'mcp_misbehaving.py'} --mode escape"
MCP_NO_TOOL = f"mcp:{PY} {ADAPTERS / 'mcp_misbehaving.py'} --mode none --tool something_else"
ACP = f"acp:{PY} {ADAPTERS / 'acp_misbehaving.py'}"
CLAUDE_CODE = "claude-code:cli=/nonexistent/claude"  # a CLI that is not installed: every scenario skips

KINDS = {"reference": REFERENCE, "cmd:": CMD, "mcp:": MCP, "acp:": ACP, "claude-code": CLAUDE_CODE}
#: The isolation each kind applies today; the others refuse it (the reference runs in this process:
#: it starts nothing to confine).
APPLIES = {"reference": set(), "cmd:": {"sandbox", "run_as"}, "mcp:": {"sandbox"}, "acp:": {"sandbox"},
           "claude-code": {"run_as", "sandbox"}}
FLAGS = {"sandbox": ["--sandbox"], "run_as": ["--run-as", "nobody"]}

READ = """\
id: claude-code/read/{name}
profile: claude-code
title: Read numbers lines with an arrow
source: 001-claude-code-read-write-edit.md §Output Format
given:
  files: {{a.txt: "first line\\n"}}
steps:
  - tool: Read
    args: {{file_path: "${{workspace}}/a.txt"}}
    expect:
      output: {{$contains: "{line}"}}
"""
WRITE = """\
id: mcp/write-{name}
profile: mcp-write-text-file
title: one write_text_file
source: 003-mcp-write-text-file.md §Result
steps:
  - tool: write_text_file
    args: {{path: "${{workspace}}/{file}.txt", content: "hi\\n"}}
    expect:
      output: {{success: true, bytes_written: {size}, created: true}}
then:
  files:
    {file}.txt: "hi\\n"
"""


def read(name: str, ok: bool = True) -> str:
    return READ.format(name=name, line="first line" if ok else "FIRST LINE")


def write(name: str, ok: bool = True, file: str | None = None) -> str:
    return WRITE.format(name=name, file=file or name, size=3 if ok else 4)


def put(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(textwrap.dedent(text), "utf-8")
    return path


@pytest.fixture
def state(tmp_path, monkeypatch) -> Path:
    """A state folder (--lf, harness show) of this test's own."""
    folder = tmp_path / "state"
    monkeypatch.setenv("HARNESS_STATE_DIR", str(folder))
    return folder


def run(folder: Path, target: str, *extra: str) -> int:
    return main(["run", "--no-builtin", "--scenarios", str(folder), "--no-snapshots", "-j", "1",
                 "--target", target, *extra])


def error_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("error:")]


# -- isolation: applied or refused, on every entry point -----------------------------------------

ISOLATION_CELLS = [(kind, flag) for kind in KINDS for flag in FLAGS]


@pytest.mark.parametrize("kind,flag", ISOLATION_CELLS, ids=[f"{k}-{f}" for k, f in ISOLATION_CELLS])
def test_the_assembly_applies_isolation_or_refuses_it_in_one_line(kind, flag):
    options = RunOptions(targets=(KINDS[kind],), sandbox=flag == "sandbox",
                         run_as="nobody" if flag == "run_as" else None)
    if flag == "sandbox" and flag in APPLIES[kind] and not sandbox.available()[0]:
        with pytest.raises(ValueError, match="^--sandbox: "):  # applied where it can be, else said in one line
            assemble.target(KINDS[kind], options)
    elif flag in APPLIES[kind]:
        target = assemble.target(KINDS[kind], options)
        if flag == "sandbox":
            assert target.sandbox is True
        else:
            assert target.candidate_uid == 65534 or getattr(target, "user", None) == (65534, 65534)
        target.stop()
    else:
        with pytest.raises(ValueError) as raised:
            assemble.target(KINDS[kind], options)
        message = str(raised.value)
        assert "\n" not in message and FLAGS[flag][0] in message and "cannot apply" in message


STARTED = [kind for kind in KINDS if kind != "reference"]


@pytest.mark.skipif(not sandbox.available()[0], reason=f"no sandbox here: {sandbox.available()[1]}")
@pytest.mark.parametrize("kind", STARTED)
def test_by_default_every_kind_that_starts_a_process_is_sandboxed(kind):
    # Before: only cmd: applied --sandbox, and only when named; mcp:, acp: and claude-code refused it.
    options = RunOptions(targets=(KINDS[kind],))
    assert options.sandbox_decision() == (True, None)
    target = assemble.target(KINDS[kind], options)
    try:
        assert target.sandbox is True
    finally:
        target.stop()
    opted_out = assemble.target(KINDS[kind], RunOptions(targets=(KINDS[kind],), sandbox=False))
    assert opted_out.sandbox is False
    assert RunOptions(sandbox=False).sandbox_decision() == (False, launch.OPTED_OUT)


def test_where_no_sandbox_can_be_made_the_default_says_so_and_sandbox_named_is_a_usage_error(monkeypatch, capsys):
    monkeypatch.setattr(sandbox, "available", lambda: (False, "no bubblewrap (bwrap)"))
    on, said = RunOptions().sandbox_decision()
    assert not on and said is not None and "\n" not in said and "no bubblewrap (bwrap)" in said
    target = assemble.target(CMD, RunOptions(targets=(CMD,)))
    assert target.sandbox is False
    with pytest.raises(ValueError, match="^--sandbox: no bubblewrap"):
        assemble.target(CMD, RunOptions(targets=(CMD,), sandbox=True))
    assert main(["run", "--target", CMD, "--sandbox", "--no-builtin"]) == 2
    assert "--sandbox: no bubblewrap" in capsys.readouterr().out


def test_a_run_on_the_reference_alone_never_tries_to_make_a_sandbox(monkeypatch, capsys, tmp_path):
    # It starts no candidate: trying bwrap (a process started and waited for) was most of its start's wall time.
    tried = []
    monkeypatch.setattr(sandbox, "available", lambda: tried.append(1) or (False, "no bubblewrap (bwrap)"))
    assemble.target("reference", RunOptions())
    assert tried == []
    (tmp_path / "empty-file.yaml").write_bytes((ROOT / "scenarios/anthropic-text-editor/create/empty-file.yaml").read_bytes())
    assert main(["run", "--no-builtin", "--scenarios", str(tmp_path), "--no-snapshots"]) == 0 and tried == []
    assemble.target(CMD, RunOptions(targets=(CMD,)))  # a kind that starts a candidate still asks
    assert tried == [1]


REFUSED = [(kind, flag) for kind, flag in ISOLATION_CELLS if flag not in APPLIES[kind]]
ENTRIES = ["run", "diff", "report", "pytest", "capture"]
ENTRY_CELLS = [(entry, kind, flag) for entry in ENTRIES for kind, flag in REFUSED
               if not (entry == "capture" and flag == "sandbox")]  # a capture takes --run-as only


@pytest.mark.parametrize("entry,kind,flag", ENTRY_CELLS, ids=[f"{e}-{k}-{f}" for e, k, f in ENTRY_CELLS])
def test_every_entry_point_refuses_isolation_a_kind_cannot_apply(entry, kind, flag, tmp_path, capsys,
                                                                  pytester):
    # Before: mcp: and acp: (and the reference, and claude-code under --sandbox) took the flags,
    # ran as root, unconfined, and exited 0.
    spec = KINDS[kind]
    put(tmp_path / "s", "a.yaml", read("iso"))
    if entry == "run":
        assert run(tmp_path / "s", spec, *FLAGS[flag]) == 2
        lines = error_lines(capsys.readouterr().out)
    elif entry in ("diff", "report"):
        sources = [spec, spec] if entry == "diff" else [spec]
        assert main([entry, *sources, "--no-builtin", "--scenarios", str(tmp_path / "s"), *FLAGS[flag]]) == 2
        lines = error_lines(capsys.readouterr().out)
    elif entry == "pytest":
        pytester.makeini("[pytest]\nharness_scenarios = scenarios\n")
        put(pytester.path / "scenarios", "a.yaml", read("iso"))
        result = pytester.runpytest("--target", spec, *FLAGS[flag])
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        lines = [line for line in result.stderr.lines if "cannot apply" in line]
    else:
        from harness.drivers.capture_claude_code import main as capture
        with pytest.raises(ValueError) as raised:
            capture.capture(spec, [], [], jobs=1, snapshots=tmp_path / "snap", json_dir=None, out=io.StringIO(),
                            run_as="nobody")
        lines = [str(raised.value)]
    assert len(lines) == 1 and FLAGS[flag][0] in lines[0] and "cannot apply" in lines[0], lines


def test_the_pytest_plugin_builds_its_runner_with_the_workspace_folder(pytester, tmp_path, monkeypatch):
    # Before: the plugin built its Runner itself and had no way to say where workspaces go.
    pytester.makeini("[pytest]\nharness_scenarios = scenarios\n")
    put(pytester.path / "scenarios", "a.yaml", """\
        id: claude-code/write/where
        profile: claude-code
        title: the workspace is under --harness-tmp
        source: 001-claude-code-read-write-edit.md §Write
        steps:
          - tool: Write
            args: {file_path: "${workspace}/w.txt", content: "x"}
            expect:
              output: {$regex: ".*"}
        """)
    folder = tmp_path / "workspaces"
    folder.mkdir()
    seen = []
    real = assemble.runner

    def spy(target, options=None, **kwargs):
        made = real(target, options, **kwargs)
        seen.append(made.tmp)
        return made
    monkeypatch.setattr(assemble, "runner", spy)
    result = pytester.runpytest_inprocess(f"--harness-tmp={folder}", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert seen == [str(folder)]


# -- -x and --lf ----------------------------------------------------------------------------------

LF_KINDS = {"reference": (REFERENCE, read), "cmd:": (CMD, read), "mcp:": (MCP, write)}


@pytest.mark.parametrize("kind", list(LF_KINDS))
def test_last_failed_reruns_only_what_failed_on_each_kind(kind, tmp_path, state, capsys):
    # Before: a cmd: target's failures were saved under its spec's name and looked up under its
    # hello's, so `-x --lf` ran everything again.
    spec, make = LF_KINDS[kind]
    folder = tmp_path / "s"
    put(folder, "a.yaml", make("a1"))
    put(folder, "b.yaml", make("b2", ok=False))
    put(folder, "c.yaml", make("c3"))
    assert run(folder, spec) == 1
    capsys.readouterr()
    assert run(folder, spec, "-x", "--lf") == 1
    out = capsys.readouterr().out
    assert "--lf: running the 1 scenario(s) that failed last time (2 deselected)" in out, out


@pytest.mark.parametrize("kind", list(LF_KINDS))
def test_exitfirst_stops_at_the_first_failure_on_each_kind(kind, tmp_path, state, capsys):
    spec, make = LF_KINDS[kind]
    folder = tmp_path / "s"
    put(folder, "a.yaml", make("a1"))
    put(folder, "b.yaml", make("b2", ok=False))
    put(folder, "c.yaml", make("c3"))
    report = tmp_path / "r.json"
    assert run(folder, spec, "-x", "--json", str(report)) == 1
    verdicts = [r["verdict"] for r in json.loads(report.read_text("utf-8"))["results"]]
    assert verdicts == ["pass", "fail"]


@pytest.mark.parametrize("option", ["-x", "--lf"])
def test_the_pytest_route_takes_x_and_lf(option, pytester):
    pytester.makeini("[pytest]\nharness_scenarios = scenarios\n")
    folder = pytester.path / "scenarios"
    put(folder, "a.yaml", read("p1"))
    put(folder, "b.yaml", read("p2", ok=False))
    put(folder, "c.yaml", read("p3"))
    pytester.runpytest().assert_outcomes(passed=2, failed=1)
    result = pytester.runpytest(option)
    result.assert_outcomes(passed=0 if option == "--lf" else 1, failed=1)


# -- --jobs: parallel sessions share nothing --------------------------------------------------------

def test_nothing_but_the_assembly_constructs_a_runner():
    made = []
    for path in sorted((ROOT / "harness").rglob("*.py")):
        if path == ROOT / "harness" / "run" / "assemble.py":
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "Runner":
                made.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert made == []


def test_nothing_but_the_assembly_builds_a_target_in_the_entry_points():
    kinds = {"ReferenceTarget", "CmdTarget", "McpTarget", "AcpTarget", "ClaudeCodeTarget", "make_target"}
    made = []
    for package in ("cli", "pytest_plugin", "drivers", "record", "report"):
        for path in sorted((ROOT / "harness" / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text("utf-8"))):
                if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) in kinds:
                    made.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert made == []


JOBS_KINDS = {"reference": (REFERENCE, read), "cmd:": (CMD, read), "mcp:": (MCP, write)}


@pytest.mark.parametrize("kind", list(JOBS_KINDS))
def test_parallel_jobs_never_share_a_workspace(kind, tmp_path, state):
    spec, make = JOBS_KINDS[kind]
    folder = tmp_path / "s"
    for number in range(6):
        put(folder, f"s{number}.yaml", make(f"j{number}"))
    report = tmp_path / "r.json"
    code = main(["run", "--no-builtin", "--scenarios", str(folder), "--no-snapshots", "-j", "2",
                 "--target", spec, "--json", str(report)])
    results = json.loads(report.read_text("utf-8"))["results"]
    assert code == 0, [(r["id"], r["reason"]) for r in results]
    assert len(results) == 6 and all(r["verdict"] == "pass" for r in results)


# -- baselines ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["reference", "cmd:"])
def test_harness_run_judges_by_the_baseline(kind, tmp_path, state):
    spec = KINDS[kind]
    folder = tmp_path / "s"
    put(folder, "a.yaml", read("k1", ok=False))
    put(folder, "b.yaml", read("k2"))
    known = tmp_path / "baseline.yaml"
    known.write_text("claude-code/read/k1: a known failure\n", "utf-8")
    assert run(folder, spec, "--baseline", str(known)) == 0
    known.write_text("claude-code/read/k1: a known failure\nclaude-code/read/k2: passes now\n", "utf-8")
    assert run(folder, spec, "--baseline", str(known)) == 1  # a stale entry


@pytest.mark.parametrize("kind", ["reference", "cmd:"])
def test_the_pytest_route_judges_by_the_baseline(kind, pytester):
    # Before: pytest had no --baseline (a usage error).
    pytester.makeini("[pytest]\nharness_scenarios = scenarios\n")
    folder = pytester.path / "scenarios"
    put(folder, "a.yaml", read("k1", ok=False))
    put(folder, "b.yaml", read("k2"))
    known = pytester.path / "baseline.yaml"
    known.write_text("claude-code/read/k1: a known failure\n", "utf-8")
    result = pytester.runpytest("--target", KINDS[kind], f"--baseline={known}")
    result.assert_outcomes(passed=1, xfailed=1)
    assert result.ret == 0
    known.write_text("claude-code/read/k1: a known failure\nclaude-code/read/k2: passes now\n", "utf-8")
    result = pytester.runpytest("--target", KINDS[kind], f"--baseline={known}")
    result.assert_outcomes(failed=1, xfailed=1)
    result.stdout.fnmatch_lines(["*stale baseline entry for claude-code/read/k2: the scenario passes now*"])


# -- a run in which nothing ran fails ----------------------------------------------------------------

NOTHING = {
    "cmd: offering no profile of the run": (CMD_MISSPELT, read),
    "cmd: under --profile claude-code, offering another": (
        f"cmd:{PY} {ADAPTERS / 'misbehaving.py'} --mode none --profiles mcp-write-text-file", read),
    "mcp: listing none of the profile's tools": (MCP_NO_TOOL, write),
    "mcp: under --profile claude-code": (MCP, read),
    "claude-code without its CLI": (CLAUDE_CODE, read),
    "acp: serving another profile": (f"acp:profile=mcp-write-text-file {PY} {ADAPTERS / 'acp_misbehaving.py'}", read),
}


@pytest.mark.parametrize("case", list(NOTHING))
def test_a_run_in_which_nothing_ran_exits_1_and_every_report_says_so(case, tmp_path, state, capsys):
    # Before: every scenario skipped, exit 0, JUnit 0 failures.
    spec, make = NOTHING[case]
    folder = tmp_path / "s"
    put(folder, "a.yaml", make("n1"))
    put(folder, "b.yaml", make("n2"))
    report, junit = tmp_path / "r.json", tmp_path / "r.xml"
    assert run(folder, spec, "--json", str(report), "--junit", str(junit)) == 1
    said = [line for line in capsys.readouterr().out.splitlines() if "nothing ran" in line]
    assert len(said) == 1 and "all 2 scenario(s) were skipped" in said[0], said
    summary = json.loads(report.read_text("utf-8"))["summary"]
    assert summary["skip"] == 2 and summary["nothing_ran"].startswith("nothing ran: all 2 scenario(s)")
    import xml.etree.ElementTree as ET
    failures = ET.parse(junit).getroot().findall(".//failure")
    assert [f.get("message", "")[:31] for f in failures] == ["nothing ran: all 2 scenario(s) "]


def test_the_json_report_with_nothing_ran_is_valid_against_its_schema(tmp_path, state):
    from harness.util import schemas
    put(tmp_path / "s", "a.yaml", read("v1"))
    report = tmp_path / "r.json"
    assert run(tmp_path / "s", CLAUDE_CODE, "--json", str(report)) == 1
    schema = json.loads((ROOT / "harness" / "schema" / "report.schema.json").read_text("utf-8"))
    assert schemas.errors(schemas.validator(schema), json.loads(report.read_text("utf-8"))) == []


def test_a_run_where_something_ran_and_something_skipped_is_not_nothing_ran(tmp_path, state, capsys):
    folder = tmp_path / "s"
    put(folder, "a.yaml", read("m1"))
    put(folder, "b.yaml", write("m2"))  # the reference runs both profiles; a cmd: adapter of claude-code only
    assert run(folder, CMD) == 0
    assert "nothing ran" not in capsys.readouterr().out


@pytest.mark.parametrize("spec,xdist", [(CMD_MISSPELT, False), (CLAUDE_CODE, False), (CLAUDE_CODE, True)],
                         ids=["cmd:", "claude-code", "claude-code-xdist"])
def test_the_pytest_route_fails_when_nothing_ran(spec, xdist, pytester):
    pytester.makeini("[pytest]\nharness_scenarios = scenarios\n")
    put(pytester.path / "scenarios", "a.yaml", read("q1"))
    result = pytester.runpytest("--target", spec, *(["-n", "1"] if xdist else []))
    result.assert_outcomes(skipped=1)
    assert result.ret == 1
    assert len([line for line in result.stdout.lines if "nothing ran: all 1 scenario(s)" in line]) == 1


# -- escapes --------------------------------------------------------------------------------------

ESCAPES = {"cmd:": (CMD_ESCAPE, read, "MISBEHAVE"), "mcp:": (MCP_ESCAPE, write, "MISBEHAVE")}


@pytest.mark.parametrize("entry", ["run", "pytest"])
@pytest.mark.parametrize("kind", list(ESCAPES))
def test_an_escape_is_reported_on_every_entry_point(kind, entry, tmp_path, state, capsys, pytester):
    spec, make, trigger = ESCAPES[kind]
    text = write("e1", file=trigger) if kind == "mcp:" else read("e1").replace("a.txt", f"{trigger}.txt")
    if entry == "run":
        folder = tmp_path / "s"
        put(folder, "a.yaml", text)
        report = tmp_path / "r.json"
        # --no-sandbox: the escape must land to be seen (in the default sandbox the write fails).
        assert run(folder, spec, "--json", str(report), "--no-sandbox") == 1
        (result,) = json.loads(report.read_text("utf-8"))["results"]
        assert result["verdict"] == "fail" and "escape" in result["reason"], result["reason"]
    else:
        pytester.makeini("[pytest]\nharness_scenarios = scenarios\n")
        put(pytester.path / "scenarios", "a.yaml", text)
        result = pytester.runpytest("--target", spec, "--no-sandbox")  # as above: the write must land
        result.assert_outcomes(failed=1)
        assert "escape" in result.stdout.str()
        assert result.stdout.str().count("sandbox: off (--no-sandbox)") == 1  # said once


# -- the claude-code target under --run-as ---------------------------------------------------------

def test_the_claude_code_cli_under_run_as_gets_a_keeper_that_user_can_run(tmp_path, monkeypatch):
    # Before: its keeper was this interpreter even where other users cannot reach it (under
    # /root), so under --run-as nobody the CLI never started. The cmd: target asks for one they can.
    from harness.targets.claude_code import session as session_mod
    from harness.util import processes
    asked = []
    monkeypatch.setattr(processes, "kept", lambda argv, **kwargs: (asked.append(kwargs.get("for_others")),
                                                                   (["/bin/false"], None))[1])
    monkeypatch.setattr(session_mod.cli_mod, "hand_over", lambda *args: None)
    monkeypatch.setattr(session_mod.cli_mod, "open_for_traversal", lambda *args: None)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    try:
        session_mod.ClaudeCodeSession(cli=tmp_path / "claude", workspace=workspace, user=(65534, 65534)).close()
    except Exception:  # noqa: BLE001 - /bin/false is no CLI; only the keeper's choice is looked at
        pass
    assert asked == [True]


# -- then.files: a check is never switched off ----------------------------------------------------

def test_a_pattern_and_size_in_then_files_checks_the_content(tmp_path, state):
    # Before: {pattern: ab, size: 4} was read as a size check (size 4) and a file holding zzzz passed.
    folder = tmp_path / "s"
    put(folder, "a.yaml", """\
        id: claude-code/write/pattern-checked
        profile: claude-code
        title: then.files with a pattern compares every byte
        source: docs/scenario-format.md §Content
        steps:
          - tool: Write
            args: {file_path: "${workspace}/a.txt", content: "zzzz"}
        then:
          files:
            a.txt: {pattern: ab, size: 4}
        """)
    report = tmp_path / "r.json"
    assert run(folder, REFERENCE, "--json", str(report)) == 1
    (result,) = json.loads(report.read_text("utf-8"))["results"]
    assert result["verdict"] == "fail" and "a.txt" in result["reason"]
    put(folder, "a.yaml", (folder / "a.yaml").read_text("utf-8").replace('"zzzz"', '"abab"'))
    assert run(folder, REFERENCE) == 0


@pytest.mark.parametrize("entry", ['{pattern: ab, mode: "0644"}', "{pattern: ab, size: 4, mode: \"0644\"}",
                                   "{sizes: 4}"])
def test_a_then_files_entry_mixing_forms_is_a_lint_error_naming_file_line_and_field(entry, tmp_path, capsys):
    folder = tmp_path / "s"
    put(folder, "a.yaml", f"""\
id: claude-code/write/mixed
profile: claude-code
title: t
source: docs/scenario-format.md §then
steps:
  - tool: Write
    args: {{file_path: "${{workspace}}/a.txt", content: "abab"}}
then:
  files:
    a.txt: {entry}
""")
    assert main(["lint", "--no-builtin", "--scenarios", str(folder)]) == 1
    out = capsys.readouterr().out
    assert f"{folder / 'a.yaml'}:10" in out and "then.files" in out.replace("/", "."), out

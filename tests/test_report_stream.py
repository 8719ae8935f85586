"""Results go to the reports as they are produced: written at once, not held, complete after an interruption."""

from __future__ import annotations

import gc
import io
import json
import weakref
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from harness.cli.main import main
from harness.containment.cleanup import Leftover
from harness.record.baseline import Baseline
from harness.report import json as json_report
from harness.report import junit, stream
from harness.report.tally import Tally
from harness.run import workers
from harness.run.options import RunOptions
from harness.scenario import catalog
from harness.scenario.model import Result, Scenario, Verdict
from harness.targets import make_target
from harness.targets.base import TargetInfo
from harness.targets.reference import ReferenceTarget


@pytest.fixture(scope="module")
def scenarios() -> list[Scenario]:
    """A slice of the built-in catalog the reference runs in this process (no fault injection)."""
    found = [s for s in catalog.load([catalog.builtin_dir()]).scenarios
             if not s.requires and s.profile == "claude-code"]
    return found[:12]


class _Watching(ReferenceTarget):
    """The reference, reading the JSON report's partial file each time a scenario's session opens."""

    def __init__(self, partial: Path) -> None:
        super().__init__("reference")
        self.partial = partial
        self.seen: list[str] = []

    def open(self, profile, workspace, options):
        self.seen.append(self.partial.read_text("utf-8") if self.partial.exists() else "")
        return super().open(profile, workspace, options)


def test_the_json_report_holds_each_result_before_the_next_scenario_runs(tmp_path, scenarios):
    path = tmp_path / "report.json"
    reports = stream.Reports(RunOptions(json=path, no_snapshots=True), [], several=False)
    target = _Watching(path.with_name(path.name + stream.PARTIAL))
    workers.run([target], scenarios, jobs=1, emit=reports.add, keep=False)
    for number, text in enumerate(target.seen):  # when scenario `number` starts, every earlier one is written
        for earlier in scenarios[:number]:
            assert f'"id": "{earlier.id}"' in text
        assert f'"id": "{scenarios[number].id}"' not in text


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_run_holds_no_result_once_the_reports_took_it(tmp_path, scenarios, jobs):
    options = RunOptions(json=tmp_path / "r.json", junit=tmp_path / "r.xml", markdown=tmp_path / "r.md",
                         snapshots=tmp_path / "snaps", snapshot_update=True)
    reports = stream.Reports(options, [], several=False, state=tmp_path / "state", matrix=True)
    refs: list[weakref.ref] = []

    def emit(run, result):
        reports.add(run, result)
        refs.append(weakref.ref(result))
    (run,) = workers.run([make_target("reference")], scenarios, jobs=jobs, emit=emit, keep=False)
    gc.collect()
    alive = [ref for ref in refs if ref() is not None]
    assert len(refs) == len(scenarios) and run.results == []
    # Only the failures' details are kept, for the summary at the end (the reference has none here).
    assert len(alive) == len(reports.tally(run).failures) == 0
    reports.finish([run])
    reports.close()
    written = json.loads((tmp_path / "r.json").read_text("utf-8"))
    assert [r["id"] for r in written["results"]] == [s.id for s in scenarios]


def _results(scenarios: list[Scenario]) -> list[Result]:
    """Results of every shape a report shows: pass, fail with details, error, skip, recorded, known, stale."""
    run = workers.run([make_target("reference")], scenarios[:6], jobs=1)[0].results
    run[1].verdict, run[1].reason = Verdict.FAIL, "then: a.txt: expected x \udcff \x1b[31m"
    run[2].verdict, run[2].reason = Verdict.ERROR, "step 1: the target broke"
    run[3].verdict, run[3].reason = Verdict.SKIP, "cannot"
    run[4].verdict, run[4].known = Verdict.FAIL, "known one"
    run[5].stale = "stale one"
    run[0].steps[0].output = {"deep": [[[[float("nan")]]]]}
    return run


def test_the_json_written_as_it_goes_is_the_json_of_the_whole_run(scenarios):
    results = _results(scenarios)
    info = TargetInfo("reference", "1.0")
    leftovers = [Leftover("/tmp/x", "busy")]
    extra = {"start_error": "it broke\nstderr: x", "baseline": {"file": "b.yaml", "known": 1},
             "leftovers": leftovers}
    handle = io.StringIO()
    writer = json_report.Stream(handle)
    writer.begin(info, "reference", start_error=extra["start_error"])
    for result in results:
        writer.add(result.as_dict())
    writer.end(json_report.summary(results), 1.5, baseline=extra["baseline"], leftovers=leftovers)
    expected = json.dumps(json_report.json_safe(json_report.document(results, info, "reference", 1.5, **extra)),
                          indent=1, ensure_ascii=False, default=str, allow_nan=False)
    assert handle.getvalue() == expected
    empty = io.StringIO()
    writer = json_report.Stream(empty)
    writer.begin(info, "reference")
    writer.end(json_report.summary([]))
    assert empty.getvalue() == json.dumps(json_report.document([], info, "reference"), indent=1)


def test_several_targets_json_written_as_it_goes_is_the_combined_file(tmp_path, scenarios):
    results = _results(scenarios)

    class Run:
        def __init__(self, spec, results):
            self.spec, self.info, self.results, self.seconds = spec, TargetInfo(spec, "1"), results, 2.0
            self.start_error, self.baseline, self.leftovers = None, None, []
    runs = [Run("reference", results), Run("cmd:x", results[:2]), Run("cmd:y", [])]
    json_report.write_combined(tmp_path / "whole.json", runs)
    handle = io.StringIO()
    combined = json_report.Combined(handle)
    for run in runs:
        writer = combined.stream()
        writer.begin(run.info, run.spec)
        for result in run.results:
            writer.add(result.as_dict())
        writer.end(json_report.summary(run.results), run.seconds)
    combined.close()
    assert handle.getvalue() == (tmp_path / "whole.json").read_text("utf-8")


def test_the_junit_written_as_it_goes_is_the_junit_of_the_whole_run(tmp_path, scenarios):
    results = _results(scenarios)
    info = TargetInfo("reference", "1.0")
    leftovers = [Leftover("/tmp/x", "busy")]
    junit.write(tmp_path / "whole.xml", results, info, "reference", start_error="no start", leftovers=leftovers)
    suites = junit.Suites(info, "", "no start")
    for result in results:
        suites.add(result)
    handle = io.StringIO()
    junit.write_stream(handle, "harness on reference", [(suites, leftovers)])
    assert handle.getvalue() == (tmp_path / "whole.xml").read_text("utf-8")

    class Run:
        def __init__(self, spec, results):
            self.spec, self.info, self.results, self.start_error, self.leftovers = spec, info, results, None, []
    runs = [Run("reference", results), Run("cmd:x", results[:3])]
    junit.write_runs(tmp_path / "runs.xml", runs)
    parts = []
    for run in runs:
        suites = junit.Suites(run.info, f"{run.spec} ")
        for result in run.results:
            suites.add(result)
        parts.append((suites, []))
    handle = io.StringIO()
    junit.write_stream(handle, "harness on 2 targets", parts)
    assert handle.getvalue() == (tmp_path / "runs.xml").read_text("utf-8")
    junit.write_runs(tmp_path / "none.xml", [])
    handle = io.StringIO()
    junit.write_stream(handle, "harness on 0 targets", [])
    assert handle.getvalue() == (tmp_path / "none.xml").read_text("utf-8")


def test_the_tally_counts_and_judges_as_the_whole_run_would(scenarios):
    from harness.record import baseline
    results = _results(scenarios)
    for result in results:
        result.known = result.stale = None
    listed = Baseline({results[1].id: "listed failure", results[0].id: "listed pass", "gone/one": "not run"})
    tally = Tally(listed)
    for result in results:
        tally.add(result)
    copies = _results(scenarios)
    whole = baseline.apply(listed, {r.id: r.verdict.value for r in copies})
    assert tally.outcome() == whole
    assert whole.known == [results[1].id] and whole.stale == [results[0].id] and whole.not_run == ["gone/one"]
    assert [(r.known, r.stale) for r in results] == [
        (listed.entries[r.id] if r.id in whole.known else None, listed.entries[r.id] if r.id in whole.stale else None)
        for r in results]
    assert tally.summary() == json_report.summary(copies)
    assert [r.id for r in tally.failures] == [r.id for r in copies if r.verdict in (Verdict.FAIL, Verdict.ERROR)]


def test_an_interrupted_run_leaves_complete_reports_of_what_ran(tmp_path, monkeypatch):
    real = workers.run
    taken = []

    def interrupted(*args, emit=None, **kwargs):
        def emit_then_stop(run, result):
            emit(run, result)
            taken.append(result.id)
            if len(taken) == 3:
                raise KeyboardInterrupt
        return real(*args, emit=emit_then_stop, **kwargs)
    monkeypatch.setattr(workers, "run", interrupted)
    monkeypatch.setenv("HARNESS_STATE_DIR", str(tmp_path / "state"))
    report, xml = tmp_path / "r.json", tmp_path / "r.xml"
    report.write_text("an earlier run's report", "utf-8")
    code = main(["run", "-q", "--jobs", "1", "--profile", "claude-code", "--no-snapshots", "--json", str(report),
                 "--junit", str(xml)])
    assert code == 130
    document = json.loads(report.read_text("utf-8"))
    import jsonschema_rs
    schema = Path(__file__).parents[1] / "harness/schema/report.schema.json"
    jsonschema_rs.validate(json.loads(schema.read_text("utf-8")), document)
    assert document["interrupted"] is True and [r["id"] for r in document["results"]] == taken
    assert sum(document["summary"].values()) == 3
    cases = ET.parse(xml).getroot().iter("testcase")
    assert [case.get("name") for case in cases] == taken
    assert "interrupted" in xml.read_text("utf-8").splitlines()[-1]
    assert not list(tmp_path.rglob("*.partial")) and not (tmp_path / "state" / "last.json").exists()


def test_a_run_killed_outright_leaves_only_a_partial_file(tmp_path, scenarios):
    path = tmp_path / "r.json"
    path.write_text("an earlier run's report", "utf-8")
    reports = stream.Reports(RunOptions(json=path, no_snapshots=True), [], several=False)
    workers.run([make_target("reference")], scenarios[:2], jobs=1, emit=reports.add, keep=False)
    # no close: as a SIGKILL leaves it
    assert not path.exists()
    partial = path.with_name(path.name + stream.PARTIAL)
    assert partial.read_text("utf-8").count('"id": ') == 2


def test_the_last_run_state_keeps_a_lone_surrogate_and_leaves_no_partial_file(tmp_path, scenarios):
    """A candidate's text with a lone surrogate once failed the state file's write half-way: its
    .partial stayed and `harness show` went on showing an earlier run."""
    state = tmp_path / "state"
    reports = stream.Reports(RunOptions(no_snapshots=True), [], several=False, state=state)
    run = workers.TargetRun(make_target("reference"), TargetInfo("odd \udcff name", "1"), "reference")
    result = Result(scenarios[0], Verdict.FAIL, "the candidate said \udcff")
    reports.add(run, result)
    reports.finish([run])
    reports.close()
    assert not list(state.rglob("*.partial"))
    document = json.loads((state / "last.json").read_text("utf-8"))
    assert document["target"]["name"] == "odd \udcff name"
    assert document["results"][0]["reason"] == "the candidate said \udcff"


def test_a_report_that_cannot_be_written_is_bad_usage_and_leaves_the_others_untouched(tmp_path):
    report = tmp_path / "r.json"
    report.write_text("an earlier run's report", "utf-8")
    code = main(["run", "-q", "--profile", "claude-code", "--no-snapshots", "--target", "reference", "--target",
                 "reference", "--json", str(report), "--junit", str(tmp_path / "missing" / "r.xml")])
    assert code == 2
    assert not list(tmp_path.rglob("*.partial"))
    assert report.read_text("utf-8") == "an earlier run's report"


def test_a_report_folder_loses_every_targets_earlier_report_when_the_run_starts(tmp_path):
    """A run interrupted before its second target began must not leave that target's earlier
    report in the folder, passing for this run's."""
    first, second = make_target("reference"), make_target("cmd:python -c pass")
    for slug in (first.slug, second.slug):
        (tmp_path / f"{slug}.json").write_text("an earlier run's report", "utf-8")
        (tmp_path / f"{slug}.xml").write_text("an earlier run's report", "utf-8")
    stream.Reports(RunOptions(json=tmp_path, junit=tmp_path, no_snapshots=True), [], several=True,
                   slugs=[first.slug, second.slug])
    assert not list(tmp_path.iterdir())


def test_a_new_report_format_is_one_writer(tmp_path, scenarios, monkeypatch):
    """A writer the formats add gets every target's begin, each result in catalog order, and one close."""
    from harness.report import formats

    class Lines:
        def __init__(self) -> None:
            self.events: list[str] = []

        def begin(self, part):
            self.events.append(f"begin {part.run.spec}")

        def add(self, part, result, data):
            self.events.append(f"add {data['id']} {data['verdict']}")

        def close(self, parts, *, interrupted):
            self.events.append(f"close {len(parts)} {interrupted} {parts[0].tally.summary()['pass']}")

    lines = Lines()
    chosen = formats.writers
    monkeypatch.setattr(formats, "writers", lambda *a, **k: [*chosen(*a, **k), lines])
    reports = stream.Reports(RunOptions(no_snapshots=True), [], several=False)
    (run,) = workers.run([make_target("reference")], scenarios[:3], jobs=1, emit=reports.add, keep=False)
    reports.finish([run])
    reports.close()
    reports.close()  # once only
    assert lines.events == ["begin reference", *(f"add {s.id} pass" for s in scenarios[:3]), "close 1 False 3"]

"""The committed snapshots follow the catalog: headers current, every captured scenario recorded.

Example: a scenario whose ``source:`` was reworded after the last capture leaves its snapshots'
``source:`` line stale, and a scenario ``source: "captured: gemini-cli 0.61.0 (...)"`` added
without a capture has no file in snapshots/gemini-cli-0.61.0/; both are named here, with the
command that mends them (the capture's make target, or ``harness run --snapshot-update``).
"""

from __future__ import annotations

import re
from pathlib import Path

from harness.record import snapshot as snap
from harness.scenario import catalog

ROOT = Path(__file__).resolve().parents[1]

# "captured: claude-code 2.1.330 (acceptEdits, cwd=outside)", "captured: gemini-cli 0.61.0 (snapshots/...)",
# "captured: secure-filesystem-server 0.2.0"
_CAPTURED = re.compile(r"^captured: (?P<tool>[\w.-]+) (?P<version>\d[\w.-]*)"
                       r"(?: \((?P<mode>[A-Za-z]+), cwd=(?P<cwd>workspace|outside)\))?")


def capture_folders(source: str) -> list[str]:
    """Returns the snapshot folders a scenario captured from a tool belongs in (by its ``source:``)."""
    found = _CAPTURED.match(source)
    if found is None:
        return []
    tool, version, mode, cwd = found.group("tool", "version", "mode", "cwd")
    if mode:
        return [f"{tool}-{version}-{mode}" + ("-outside" if cwd == "outside" else "")]
    return [f"{tool}-{version}", f"mcp-{tool}"]


def _header(text: str) -> str:
    """The scenario's words in a snapshot: its fields before ``steps:`` (not the comment lines above)."""
    return "\n".join(line for line in text.split("\nsteps:", 1)[0].splitlines() if not line.startswith("#"))


def problems(root: Path) -> list[str]:
    """Returns what is stale or missing in ``root``/snapshots against ``root``/scenarios."""
    cat = catalog.load([root / "scenarios"])
    assert not cat.problems, cat.problems
    scenarios = {scenario.id: scenario for scenario in cat.scenarios}
    out = []
    folders = {path.name: path for path in sorted((root / "snapshots").iterdir()) if path.is_dir()}
    held: dict[str, set[str]] = {}
    for slug, folder in folders.items():
        held[slug] = set(snap.folder_ids(folder))
        for scenario_id in sorted(held[slug]):
            scenario = scenarios.get(scenario_id)
            name = f"snapshots/{slug}/{scenario_id}.yaml"
            if scenario is None:
                out.append(f"{name}: no scenario {scenario_id} in the catalog")
                continue
            text = snap.read_below(folder, scenario_id + snap.SUFFIX) or ""
            want = snap.serialise({"id": scenario.id, "profile": scenario.profile, "title": scenario.title,
                                   "source": scenario.source, "open_question": scenario.open_question, "steps": []})
            if not text.startswith(snap.HEADER):
                out.append(f"{name}: comment lines differ from the serialiser's header (written by an older harness)")
            if _header(text) != _header(want):
                out.append(f"{name}: header differs from the scenario's (title, source or question changed "
                           "since the capture)")
    for scenario in cat.scenarios:
        for slug in capture_folders(scenario.source):
            if slug in folders and scenario.id not in held[slug]:
                out.append(f"snapshots/{slug}: no snapshot of the captured scenario {scenario.id}")
    return out


def test_committed_snapshots_have_current_headers_and_every_captured_scenario() -> None:
    found = problems(ROOT)
    assert not found, (f"{len(found)} stale or missing snapshot(s); recapture (make capture-*, real-tools, or "
                       "harness run --snapshot-update for the reference):\n" + "\n".join(found))


def test_the_header_names_files_that_exist() -> None:
    # The header's "masks: <path>" points a reader at the mask table; a moved or renamed file leaves it dangling.
    named = re.findall(r"masks: (\S+)\n", snap.HEADER)
    assert named, snap.HEADER
    for path in named:
        assert (ROOT / path).is_file(), f"the snapshot header names {path}, which is not a file here"
        assert "### Masks" in (ROOT / path).read_text("utf-8"), f"{path} has no Masks section"


def test_the_check_finds_a_stale_header_and_a_missing_capture(tmp_path: Path) -> None:
    # A copy of the gemini-cli captures: current at first, then one scenario reworded, another's snapshot gone.
    import shutil
    shutil.copytree(ROOT / "scenarios" / "gemini-cli-captured", tmp_path / "scenarios" / "gemini-cli-captured")
    shutil.copytree(ROOT / "snapshots" / "gemini-cli-0.61.0" / "gemini-cli-captured",
                    tmp_path / "snapshots" / "gemini-cli-0.61.0" / "gemini-cli-captured")
    assert problems(tmp_path) == []
    scenario = tmp_path / "scenarios" / "gemini-cli-captured" / "read_file" / "crlf.yaml"
    scenario.write_text(scenario.read_text("utf-8").replace("\ntitle: \"", "\ntitle: \"Reworded, ", 1), "utf-8")
    (tmp_path / "snapshots" / "gemini-cli-0.61.0" / "gemini-cli-captured" / "replace" / "chained.yaml").unlink()
    # A snapshot written by an older serialiser: its comment line names a module that has since moved.
    old = tmp_path / "snapshots" / "gemini-cli-0.61.0" / "gemini-cli-captured" / "read_file" / "empty-file.yaml"
    old.write_text(old.read_text("utf-8").replace("masks: docs/snapshots.md", "masks: harness/record/snapshot.py", 1),
                   "utf-8")
    assert problems(tmp_path) == [
        "snapshots/gemini-cli-0.61.0/gemini-cli-captured/read_file/crlf.yaml: header differs from the scenario's "
        "(title, source or question changed since the capture)",
        "snapshots/gemini-cli-0.61.0/gemini-cli-captured/read_file/empty-file.yaml: comment lines differ from the "
        "serialiser's header (written by an older harness)",
        "snapshots/gemini-cli-0.61.0: no snapshot of the captured scenario gemini-cli-captured/replace/chained"]

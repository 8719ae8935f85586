"""`harness coverage`: seed sections are parsed, citations matched, and the catalog covers every seed."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.scenario import catalog, coverage
from harness.scenario.model import Scenario

SEED = """\
# Title
## Read Tool Behavior
### Error Conditions
```
## not a heading inside a fence
```
## Write Tool Behavior
### Error Conditions
## 5. Behavior
### 5.1 Core Rules
1. **Validate input**
2. **Normalize path**
### 5.2 Path Safety
## Test Cases
### TC4: Permission Denied
## Open Questions for Testing
1. **Exact error messages**: ...
"""


def scenario(source: str, sid: str = "x/y/z") -> Scenario:
    return Scenario(id=sid, profile="claude-code", title="t", source=source, steps=())


@pytest.fixture
def sections(tmp_path: Path):
    seed = tmp_path / "009-example.md"
    seed.write_text(SEED)
    def build(*sources: str):
        return {s.label: s for s in coverage.build(tmp_path, [scenario(src, f"s/{i}/x") for i, src in
                                                             enumerate(sources)])}
    return build


def test_headings_and_numbered_items_become_sections_and_fences_are_skipped(tmp_path):
    (tmp_path / "009-example.md").write_text(SEED)
    labels = [s.label for s in coverage.build(tmp_path, [])]
    assert labels == ["§Read Tool Behavior", "§Error Conditions", "§Write Tool Behavior", "§Error Conditions",
                      "§5 Behavior", "§5.1 Core Rules", "§5.1.1 Validate input", "§5.1.2 Normalize path",
                      "§5.2 Path Safety", "§Test Cases", "§TC4 TC4: Permission Denied",
                      "§Open Questions for Testing", "§Open Questions for Testing 1 Exact error messages"]


def test_a_number_is_cited_with_its_section_sign_only(sections):
    found = sections("009-example.md §5.2 (drive roots); step 1")
    assert found["§5.2 Path Safety"].scenarios and not found["§5 Behavior"].scenarios
    assert not found["§5.1.1 Validate input"].scenarios


def test_items_are_cited_as_steps_or_by_number(sections):
    found = sections("009-example.md §5.1 step 2", "009-example.md §Open Questions for Testing 1 (messages)")
    assert found["§5.1.2 Normalize path"].scenarios == ["s/0/x"]
    assert found["§Open Questions for Testing 1 Exact error messages"].scenarios == ["s/1/x"]


def test_an_ambiguous_title_needs_its_parent(tmp_path):
    (tmp_path / "009-example.md").write_text(SEED)
    cited = scenario("009-example.md §Write Tool Behavior / Error Conditions (relative)")
    read_errors, write_errors = [s for s in coverage.build(tmp_path, [cited]) if s.title == "Error Conditions"]
    assert write_errors.scenarios and not read_errors.scenarios
    bare = scenario("009-example.md Error Conditions")
    assert not any(s.scenarios for s in coverage.build(tmp_path, [bare]) if s.title == "Error Conditions")


def test_test_case_ids_are_cited_by_name(sections):
    assert sections("009-example.md TC4")["§TC4 TC4: Permission Denied"].scenarios


def test_another_seed_is_not_cited(sections):
    assert not sections("008-other.md §5.2")["§5.2 Path Safety"].scenarios


def test_every_seed_section_is_covered_or_noted():
    seeds = coverage.seeds_dir()
    if not seeds.is_dir():
        pytest.skip(f"no seeds at {seeds}")
    sections = coverage.build(seeds, catalog.load().scenarios, coverage.load_notes())
    assert [f"{s.seed} {s.label}" for s in coverage.uncovered(sections)] == []


def test_the_coverage_table_in_the_docs_is_current():
    seeds = coverage.seeds_dir()
    if not seeds.is_dir():
        pytest.skip(f"no seeds at {seeds}")
    cat = catalog.load()
    fresh = coverage.markdown(coverage.build(seeds, cat.scenarios, coverage.load_notes()), len(cat.scenarios))
    committed = (Path(__file__).parents[1] / "docs" / "coverage.md").read_text("utf-8")
    assert committed == fresh, "run `make coverage` (harness coverage --markdown docs/coverage.md)"

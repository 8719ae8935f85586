"""Profile reference pages: generated from profile.yaml and the catalog, committed up to date."""

from __future__ import annotations

from pathlib import Path

from harness.cli import profile_pages
from harness.cli.main import main
from harness.scenario import catalog, profiles

ROOT = Path(__file__).resolve().parents[1]


def test_the_committed_reference_pages_are_up_to_date():
    cat = catalog.load()
    for name, profile in profiles.builtin().items():
        page = ROOT / "docs" / "profiles" / f"{name}.md"
        assert page.is_file(), f"missing {page}: run `make profiles`"
        assert page.read_text("utf-8") == profile_pages.render(profile, cat.scenarios), \
            f"{page} is out of date: run `make profiles`"


def test_a_page_has_the_tools_arguments_options_errors_and_the_citing_scenarios():
    cat = catalog.load()
    page = profile_pages.render(profiles.builtin()["aptix-tul-004"], cat.scenarios)
    assert "### `workspace_create_file`" in page
    assert "| `overwrite` | boolean | no | `false` |" in page
    assert "| `max_size` | integer or null | no |" in page
    assert "| TooLarge | `\"TooLarge\"` |" in page
    assert "`Tool.CreateFile.Executed`" in page
    cited = next(s for s in cat.scenarios if s.profile == "aptix-tul-004" and "§5.2" in s.source and not s.open_question)
    section = page.split("### §5.2", 1)[1].split("\n### ", 1)[0]
    assert f"(`{cited.id}`)" in section


def test_citations_name_the_sections_a_source_cites():
    profile = profiles.builtin()["aptix-tul-004"]
    scenario = next(s for s in catalog.load().scenarios if s.profile == "aptix-tul-004")
    object.__setattr__(scenario, "source", "002-aptix-tul-004-create-file.md §5.1 step 3 (a; b); §5.3 TooLarge")
    assert profile_pages.citations(scenario, profile) == ["5.1", "5.3"]
    assert profile_pages.cite_key("Edit Tool Behavior / Uniqueness Constraint (2+ matches)") == \
        "Edit Tool Behavior / Uniqueness Constraint"
    assert profile_pages.cite_key("TC4: permission denied") == "TC4"


def test_harness_profiles_lists_prints_and_writes(tmp_path, capsys):
    assert main(["profiles"]) == 0
    assert "aptix-tul-004" in capsys.readouterr().out
    assert main(["profiles", "mcp-write-text-file"]) == 0
    assert capsys.readouterr().out.startswith("# Profile `mcp-write-text-file`")
    assert main(["profiles", "--markdown", str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"{n}.md" for n in profiles.builtin())
    assert main(["profiles", "nope"]) == 2

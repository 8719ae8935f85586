"""The content aspect: what a call returns about the files, judged in the profile's normal form.

A Claude-Code-like candidate that does not cut lines at 2,000 characters, returns a PDF's raw bytes
or a notebook's raw JSON passes ``--aspects effects,outcome`` and fails
``--aspects effects,outcome,content``; one that only formats the line-number prefix differently (a
tab instead of the arrow, no padding) passes ``effects,outcome,content`` and fails only ``output``.
"""

from __future__ import annotations

import copy

import pytest

from harness.run.runner import Runner
from harness.scenario import aspects, catalog
from harness.scenario.normal_form import (
    FormError,
    Lines,
    entries_form,
    normal_form,
    numbered_lines,
    parse,
    path_names_field,
)
from harness.scenario.profiles import ProfileError, load_file
from tests import planted

CONTENT_JUDGED = ("effects", "outcome", "content")


def test_the_normal_form_rewrites_only_the_number_prefix() -> None:
    lines = Lines()
    assert normal_form("     1\tfirst\n2\tsecond\n    10→tenth", lines) == "     1→first\n     2→second\n    10→tenth"
    assert normal_form("<warning>empty</warning>", lines) == "<warning>empty</warning>"  # no number: kept
    assert normal_form("1\t\tindented", lines) == "     1→\tindented"  # a tab of the content stays
    blocks = [{"type": "text", "text": "3\tx"}, {"type": "image", "source": {"data": "AA=="}}]
    assert normal_form(blocks, lines) == [{"type": "text", "text": "     3→x"}, blocks[1]]
    assert normal_form({"content": "1\tx"}, lines) == {"content": "1\tx"}  # not a text: as it is
    assert numbered_lines("     1→a\nnote\n 2\tb", lines) == [[1, "a"], [2, "b"]]
    custom = parse({"lines": {"prefix": r"^([0-9]+): ", "canonical": "{number}| "}})
    assert normal_form("7: x", custom.lines) == "7| x"


def test_a_content_declaration_that_cannot_work_is_refused_with_its_field(tmp_path) -> None:
    with pytest.raises(FormError, match="group for the line number"):
        parse({"lines": {"prefix": "^ *[0-9]+→"}})
    with pytest.raises(FormError, match="lines.prefix: not a pattern"):
        parse({"lines": {"prefix": "^(["}})
    profile = tmp_path / "profile.yaml"
    profile.write_text(
        "name: p\ntitle: t\ncontract: {document: d.md, title: t}\ntools:\n  get:\n"
        "    arguments: {type: object}\n    output: {type: object, properties: {ok: {type: boolean}}}\n"
        "    outcome: [ok]\n    content: {fields: [ok]}\n", "utf-8")
    with pytest.raises(ProfileError) as info:
        load_file(profile)
    assert "tools.get.content.fields" in str(info.value) and "content or outcome, not both" in str(info.value)


def test_a_mismatch_inside_a_content_field_is_content_wherever_it_is() -> None:
    fields = ("content", "sha256")
    assert path_names_field("output.latest_file_state.sha256", fields)
    assert path_names_field("output[1].content", fields)
    assert not path_names_field("output.latest_file_state.version", fields)
    assert aspects.classify_failure({"output.latest_file_state": "output"}, "output.latest_file_state.sha256",
                                    "", fields) == "content"
    assert aspects.classify_failure({"output.success": "outcome"}, "output.success", "", fields) == "outcome"


@pytest.fixture(scope="module")
def claude_code():
    return [s for s in catalog.load().scenarios if s.profile == "claude-code"]


def _failing(session, scenarios, judged) -> list[str]:
    out = []
    with Runner(planted.PlantedTarget({"claude-code": session})) as runner:
        for scenario in scenarios:
            result = aspects.apply(copy.copy(runner.run(scenario)), judged)
            if result.verdict.value in ("fail", "error"):
                out.append(scenario.id)
    return out


@pytest.mark.parametrize("session, caught", [
    (planted.NoLineCutRead, {"claude-code/read/long-line-truncated-at-2000", "claude-code/read/line-of-2001-truncated",
                             "claude-code/read/truncation-counts-characters", "claude-code/read/truncation-of-a-middle-line",
                             "claude-code/read/truncation-with-offset-and-limit"}),
    (planted.RawPdfRead, {"claude-code/read/pdf-processed"}),
    (planted.RawNotebookRead, {"claude-code/read/notebook-cells-with-outputs", "claude-code/read/notebook-every-output-kind",
                               "claude-code/read/notebook-multi-line-cell"}),
], ids=lambda v: getattr(v, "__name__", ""))
def test_content_divergences_fail_only_when_content_is_judged(claude_code, session, caught) -> None:
    with_content = _failing(session, claude_code, CONTENT_JUDGED)
    assert set(with_content) == caught
    assert _failing(session, [s for s in claude_code if s.id in caught], ("effects", "outcome")) == []


@pytest.mark.parametrize("session", [planted.TabSeparatorRead, planted.UnpaddedNumberRead], ids=lambda v: v.__name__)
def test_a_prefix_formatted_otherwise_is_wording_only(claude_code, session) -> None:
    reads = [s for s in claude_code if any(step.tool == "Read" for step in s.calls)]
    assert _failing(session, reads, CONTENT_JUDGED) == []
    worded = _failing(session, reads, aspects.ASPECTS)
    assert "claude-code/read/arrow-not-tab" in worded and "claude-code/read/long-line-truncated-at-2000" in worded
    with Runner(planted.PlantedTarget({"claude-code": session})) as runner:
        result = runner.run(next(s for s in reads if s.id == "claude-code/read/long-line-truncated-at-2000"))
    assert result.aspects["content"] == "pass" and result.aspects["output"] == "fail"


def test_harness_diff_shows_a_content_change_apart_from_a_wording_change() -> None:
    doc = {"profile": "claude-code", "steps": [{"step": 1, "tool": "Read", "output": "     1→a\n     2→b"}]}
    tabbed = copy.deepcopy(doc)
    tabbed["steps"][0]["output"] = "1\ta\n2\tb"
    changed = copy.deepcopy(doc)
    changed["steps"][0]["output"] = "     1→a\n     2→c"
    assert aspects.differing(doc, tabbed) == ["output"]
    assert aspects.differing(doc, changed) == ["content", "output"]


def test_junit_and_github_annotations_show_the_four_aspects(claude_code, tmp_path) -> None:
    from harness.report import github, junit
    from harness.targets.base import TargetInfo
    scenario = next(s for s in claude_code if s.id == "claude-code/read/long-line-truncated-at-2000")
    with Runner(planted.PlantedTarget({"claude-code": planted.NoLineCutRead})) as runner:
        result = runner.run(scenario)
    (line,) = github.annotations([result], "planted")
    assert line.endswith("(aspects: effects pass, outcome pass, content fail, output pass)")
    junit.write(tmp_path / "r.xml", [result], TargetInfo("planted", "1"), "planted")
    text = (tmp_path / "r.xml").read_text("utf-8")
    for aspect, value in (("effects", "pass"), ("outcome", "pass"), ("content", "fail"), ("output", "pass")):
        assert f'<property name="aspect.{aspect}" value="{value}" />' in text


def test_a_lone_surrogate_in_an_answer_does_not_break_the_normal_form() -> None:
    # A JSON string can carry one; re2 cannot take it: the prefix is matched on the line's start, made encodable.
    assert normal_form("1\t\ud800x\n\ud800 alone", Lines()) == "     1→\ud800x\n\ud800 alone"
    assert numbered_lines("2\t\ud800", Lines()) == [[2, "\ud800"]]


# -- the content of the anthropic-text-editor and codex-apply-patch profiles ---------------------------


@pytest.fixture(scope="module")
def text_editor():
    return [s for s in catalog.load().scenarios if s.profile == "anthropic-text-editor"]


@pytest.fixture(scope="module")
def apply_patch():
    return [s for s in catalog.load().scenarios if s.profile == "codex-apply-patch"]


def _failing_in(profile, session, scenarios, judged) -> list[str]:
    out = []
    with Runner(planted.PlantedTarget({profile: session})) as runner:
        for scenario in scenarios:
            result = aspects.apply(copy.copy(runner.run(scenario)), judged)
            if result.verdict.value in ("fail", "error"):
                out.append(scenario.id)
    return out


def test_the_two_profiles_declare_their_content() -> None:
    # Declared from their documentation: view's numbered lines ("1: def is_prime(n):"), and
    # apply_patch's A/M/D summary lines (src/lib.rs print_summary).
    from harness.scenario import profiles
    editor = profiles.load_file("scenarios/anthropic-text-editor/profile.yaml").tools["str_replace_based_edit_tool"].content
    assert editor.lines is not None and editor.lines.canonical == "{number}: "
    assert normal_form("     1\tdef is_prime(n):\n2→x", editor.lines) == "1: def is_prime(n):\n2: x"
    patch = profiles.load_file("scenarios/codex-apply-patch/profile.yaml").tools["apply_patch"].content
    assert patch.entries is not None
    assert entries_form("Success. Updated the following files:\nA a.txt\nM b.txt\nD c.txt\n", patch.entries) \
        == "A a.txt\nM b.txt\nD c.txt"


def test_a_view_numbered_otherwise_is_wording_and_wrong_lines_are_content(text_editor) -> None:
    assert _failing_in("anthropic-text-editor", planted.TabNumberedView, text_editor, CONTENT_JUDGED) == []
    shifted = _failing_in("anthropic-text-editor", planted.ShiftedRangeView, text_editor, CONTENT_JUDGED)
    assert {"anthropic-text-editor/view/range-shows-those-lines", "anthropic-text-editor/view/range-one-line"} <= set(shifted)
    # what view returns is no longer judged as wording: without content, the wrong lines pass
    assert _failing_in("anthropic-text-editor", planted.ShiftedRangeView,
                       [s for s in text_editor if s.id in shifted], ("effects", "outcome")) == []
    with Runner(planted.PlantedTarget({"anthropic-text-editor": planted.ShiftedRangeView})) as runner:
        result = runner.run(next(s for s in text_editor if s.id == "anthropic-text-editor/view/range-one-line"))
    assert result.aspects["content"] == "fail" and result.aspects["outcome"] == "pass"


def test_a_summary_worded_otherwise_is_wording_and_wrong_letters_are_content(apply_patch) -> None:
    assert _failing_in("codex-apply-patch", planted.ReworderSummary, apply_patch, CONTENT_JUDGED) == []
    worded = _failing_in("codex-apply-patch", planted.ReworderSummary, apply_patch, aspects.ASPECTS)
    assert "codex-apply-patch/envelope/add-file" in worded  # the header is still checked, as wording
    wrong = _failing_in("codex-apply-patch", planted.ModifiedForAddedSummary, apply_patch, CONTENT_JUDGED)
    assert {"codex-apply-patch/envelope/add-file", "codex-apply-patch/envelope/multiple-operations"} <= set(wrong)
    assert _failing_in("codex-apply-patch", planted.ModifiedForAddedSummary,
                       [s for s in apply_patch if s.id in wrong], ("effects", "outcome")) == []
    with Runner(planted.PlantedTarget({"codex-apply-patch": planted.ReworderSummary})) as runner:
        result = runner.run(next(s for s in apply_patch if s.id == "codex-apply-patch/envelope/add-file"))
    assert result.aspects["content"] == "pass" and result.aspects["output"] == "fail"


def test_an_entries_declaration_that_cannot_work_is_refused_with_its_field() -> None:
    with pytest.raises(FormError, match="entries: not a pattern"):
        parse({"entries": "(["})
    with pytest.raises(FormError, match="`lines` or `entries`, not both"):
        parse({"lines": True, "entries": "[AMD] "})


def test_an_expectation_written_in_the_tools_own_prefix_is_judged_in_the_normal_form_too() -> None:
    # The captured Claude Code scenarios write a Read's lines as the CLI returns them ("1\ta"); the normal
    # form turns the output into "     1→a". Matched as written, such an expectation failed the content
    # aspect against the very output it was captured from (the turn-reminder scenarios, edit/inside-partial-read).
    from harness.run.judge import check_call
    from harness.targets.base import CallResult

    lines = Lines()
    captured = CallResult(output="1\ta\n2\t")
    assert check_call({"output": "1\ta\n2\t"}, captured, lines) == []
    assert check_call({"output": {"$regex": "^1\ta\n"}}, captured, lines) == []
    # The same lines with the arrow and the padding: content holds, the wording differs.
    arrow = CallResult(output="     1→a\n     2→")
    assert [m.path for m in check_call({"output": "1\ta\n2\t"}, arrow, lines)] == ["output"]
    # Other lines, or other numbers, are content, whichever prefix the expectation is written in.
    assert [m.path for m in check_call({"output": "1\ta\n2\t"}, CallResult(output="1\tb\n2\t"), lines)] == ["content"]
    assert [m.path for m in check_call({"output": "1\ta\n2\t"}, CallResult(output="     2→a\n     3→"), lines)] \
        == ["content"]
    assert [m.path for m in check_call({"output": "     1→a"}, CallResult(output="1\tb"), lines)] == ["content"]

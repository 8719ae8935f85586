"""How `make mutation` classifies survivors: a message rule covers wording only, never code."""

from harness.drivers import mutation


def diff(before: str, after: str) -> str:
    return f"-    {before}\n+    {after}"


def test_changed_text_inside_a_message_is_wording():
    assert mutation.wording_only(diff('raise ToolError(CODE, "No such file")', 'raise ToolError(CODE, "XXNo such fileXX")'))
    assert mutation.wording_only(diff('raise ToolError(CODE, f"gone: {path}")', 'raise ToolError(CODE, f"GONE: {path}")'))


def test_a_message_replaced_by_none_or_dropped_is_not_wording():
    assert not mutation.wording_only(diff('raise ToolError(CODE, "No such file")', "raise ToolError(CODE, None)"))
    assert not mutation.wording_only(diff('raise ToolError(CODE, "No such file")', "raise ToolError(CODE, )"))


def test_a_changed_code_name_or_lookup_is_not_wording():
    assert not mutation.wording_only(diff('raise ToolError(CODE, "x")', 'raise ToolError(None, "x")'))
    assert not mutation.wording_only(diff('raise ToolError(f"{opts[\'hash\']}")', 'raise ToolError(f"{opts[\'XXhashXX\']}")'))
    assert not mutation.wording_only(diff('if name == "a":', 'if name != "a":'))


def test_a_wording_rule_does_not_classify_a_mutant_that_changes_code(monkeypatch):
    classes = [{"mutants": "pkg.mod.*", "wording": True, "class": "open-question", "why": "wording"}]
    monkeypatch.setitem(mutation._DIFFS, "pkg.mod.x_f__mutmut_1", diff('raise E(C, "a")', 'raise E(C, "XXaXX")'))
    monkeypatch.setitem(mutation._DIFFS, "pkg.mod.x_f__mutmut_2", diff('raise E(C, "a")', 'raise E(None, "a")'))
    assert mutation.classify("pkg.mod.x_f__mutmut_1", classes)["class"] == "open-question"
    assert mutation.classify("pkg.mod.x_f__mutmut_2", classes) is None


def test_a_mutant_no_scenario_reaches_is_a_survivor_not_a_kill():
    assert mutation.status(mutation.NOT_REACHED) == "survived"
    assert mutation.status(1) == "killed" and mutation.status(0) == "survived" and mutation.status(36) == "timeout"

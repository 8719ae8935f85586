"""Placeholders are substituted everywhere (escaped inside regexes); content specs make exact bytes."""

from __future__ import annotations

import re

import pytest

from harness.scenario.content_spec import MAX_CODE_POINT_ITEMS, code_points_text, lone_surrogate_in, to_bytes
from harness.scenario.placeholders import UnknownPlaceholder, placeholders_in, substitute

NAMES = {"workspace": "/tmp/x.y/ws"}


def test_substitutes_in_nested_args():
    args = {"file_path": "${workspace}/a.txt", "paths": ["${workspace}/b", "c"], "n": 3}
    assert substitute(args, NAMES) == {"file_path": "/tmp/x.y/ws/a.txt", "paths": ["/tmp/x.y/ws/b", "c"], "n": 3}


def test_substitutes_escaped_inside_a_regex():
    out = substitute({"message": {"$regex": "^Wrote ${workspace}/a$"}}, NAMES)
    assert out == {"message": {"$regex": r"^Wrote /tmp/x\.y/ws/a$"}}


def test_a_doubled_dollar_is_a_literal():
    assert substitute("cost $${workspace}", NAMES) == "cost ${workspace}"
    assert placeholders_in("$${workspace}") == set()


def test_an_unknown_placeholder_raises():
    with pytest.raises(UnknownPlaceholder):
        substitute("${home}/x", NAMES)


def test_text_without_placeholders_is_untouched():
    assert substitute("$HOME and {workspace}", NAMES) == "$HOME and {workspace}"


@pytest.mark.parametrize("spec,data", [
    ("héllo\n", "héllo\n".encode()),
    ({"text": "é", "encoding": "latin-1"}, b"\xe9"),
    ({"text": "a", "encoding": "utf-16"}, "a".encode("utf-16")),
    ({"base64": "AP8="}, b"\x00\xff"),
    ({"hex": "00 ff 0a"}, b"\x00\xff\n"),
    ({"lines": 3}, b"line 1\nline 2\nline 3\n"),
    ({"lines": {"count": 2, "template": "r{n}", "eol": "\r\n", "final_eol": False}}, b"r1\r\nr2"),
    ({"lines": 0}, b""),
    ({"pattern": "abc", "size": 7}, b"abcabca"),
])
def test_content_specs(spec, data):
    assert to_bytes(spec) == data


def test_a_generated_mebibyte_is_exact():
    assert len(to_bytes({"pattern": "x", "size": 1 << 20})) == 1 << 20


def steps_returning(**fields):
    return lambda number, field: fields[f"{field}{number}"]


def test_a_step_reference_that_is_the_whole_string_keeps_its_type():
    lookup = steps_returning(output1={"version": 3, "sha256": "ab"})
    assert substitute({"v": "${step1.output.version}"}, NAMES, steps=lookup) == {"v": 3}
    assert substitute("v${step1.output.version}", NAMES, steps=lookup) == "v3"
    assert substitute({"h": "${step1.output.sha256}"}, NAMES, steps=lookup) == {"h": "ab"}


def test_a_step_reference_walks_lists_and_is_escaped_in_regexes():
    lookup = steps_returning(events2=[{"id": "call.1"}])
    assert substitute({"$regex": "^${step2.events[0].id}$"}, NAMES, steps=lookup) == {"$regex": r"^call\.1$"}


def test_a_step_reference_to_a_missing_field_says_so():
    with pytest.raises(UnknownPlaceholder, match="has no sha256"):
        substitute("${step1.output.sha256}", NAMES, steps=steps_returning(output1={"version": 1}))


def test_a_content_spec_in_args_becomes_text_and_only_in_args():
    spec = {"content": {"$content": {"pattern": "ab", "size": 5}}}
    assert substitute(spec, NAMES, in_args=True) == {"content": "ababa"}
    assert substitute(spec, NAMES) == spec


def test_an_expectation_without_placeholders_is_constant_and_substitutes_to_itself():
    from harness.scenario.placeholders import constant, has_references, resolve_references, substitute
    names = {"workspace": "/w"}
    plain = {"output": {"path": "a.txt", "lines": ["x", {"$regex": "^a$"}], 3: None}, "error": True}
    assert constant(plain) and substitute(plain, names) == plain
    assert not has_references(plain) and resolve_references(plain, lambda *a: None) == plain
    for holding in ({"output": {"path": "${workspace}/a.txt"}}, {"${workspace}": 1}, ["$${workspace}"],
                    {"a": [{"b": "x ${step1.output.hash}"}]}):
        assert not constant(holding) and substitute(holding, names, steps=lambda n, f: {"hash": "h"}) != holding
    referring = {"output": {"hash": {"$same_as": "steps[1].output.hash"}}}
    assert constant(referring) and has_references(referring)
    # Remembered per object, not per value: another object is looked at afresh.
    assert constant({"a": "x"}) and not constant({"a": "${workspace}"})


def test_code_points_make_text_with_a_lone_surrogate_and_expand_placeholders():
    args = {"content": {"$code_points": ["${workspace}/", 0xD800, "é", 0x1F600]}, "n": 1}
    out = substitute(args, NAMES, in_args=True)
    assert out == {"content": "/tmp/x.y/ws/\ud800é\U0001F600", "n": 1}
    assert lone_surrogate_in(args) and not lone_surrogate_in({"content": {"$code_points": ["a", 0x41]}})
    # only in call arguments: in an expectation the mapping stays as written
    assert substitute(args, NAMES) == {"content": {"$code_points": ["/tmp/x.y/ws/", 0xD800, "é", 0x1F600]}, "n": 1}


@pytest.mark.parametrize("items,message", [
    ([], "non-empty list"),
    ("abc", "non-empty list"),
    (["a", 0x110000], "item 1 (1114112) is not a code point"),
    ([-1], "is not a code point"),
    ([True], "neither a string nor a code point"),
    (["a", 1.5], "neither a string nor a code point"),
    (["a"] * (MAX_CODE_POINT_ITEMS + 1), f"more than {MAX_CODE_POINT_ITEMS}"),
])
def test_a_bad_code_points_list_is_refused(items, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        code_points_text(items)


# -- generated_size: the bytes of a generated content, counted without making them ---------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from harness.scenario.content_spec import generated_size  # noqa: E402


@settings(max_examples=300, deadline=None)
@given(template=st.text(max_size=12).map(lambda text: text.replace("\ud800", "")) | st.sampled_from(["line {n}", "{n}", "a{n}b{n}"]),
       eol=st.sampled_from(["\n", "\r\n", "", "€"]), count=st.integers(-3, 1200),
       final_eol=st.sampled_from([True, False, None, 0, 1]))
def test_the_size_of_generated_lines_is_the_length_of_their_bytes(template: str, eol: str, count: int, final_eol) -> None:
    lines = {"count": count, "template": template, "eol": eol}
    if final_eol is not None:
        lines["final_eol"] = final_eol
    try:
        made = to_bytes({"lines": lines})
    except UnicodeError:  # a lone surrogate in the template: no bytes to count
        return
    assert generated_size({"lines": lines}) == len(made)


@pytest.mark.parametrize("spec", [{"lines": 0}, {"lines": 9}, {"lines": 10}, {"lines": 100000},
                                  {"lines": {"count": 1000001, "template": "x"}}, {"pattern": "ab", "size": 0},
                                  {"pattern": "abc", "size": 1000}])
def test_generated_size_of_the_catalog_forms(spec) -> None:
    assert generated_size(spec) == len(to_bytes(spec))


@pytest.mark.parametrize("spec", ["text", {"text": "x"}, {"hex": "00"}, {"base64": "AA=="}, {"pattern": "", "size": 3},
                                  {"pattern": "a", "size": -1}, {"lines": {"count": "3"}}, {"lines": {"count": 2, "template": 5}}])
def test_generated_size_leaves_other_specs_to_be_made(spec) -> None:
    assert generated_size(spec) is None

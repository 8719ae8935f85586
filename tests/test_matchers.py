"""Each matcher of the scenario format matches what it says and rejects the rest."""

from __future__ import annotations

import hashlib

import pytest

from harness.scenario.matchers import MISSING, match


def ok(expected, observed) -> bool:
    return match(expected, observed, "output") == []


def test_plain_values_match_exactly():
    assert ok("abc", "abc") and not ok("abc", "abd")
    assert ok(3, 3) and ok(3, 3.0) and not ok(3, 4)
    assert ok(None, None) and not ok(None, "")


def test_true_is_not_one_and_false_is_not_zero():
    assert not ok(True, 1) and not ok(1, True) and not ok(False, 0)
    assert ok(True, True)


def test_plain_mappings_need_the_same_keys():
    assert ok({"a": 1, "b": 2}, {"b": 2, "a": 1})
    (extra,) = match({"a": 1}, {"a": 1, "b": 2}, "output")
    assert "unexpected keys ['b']" in extra.why
    (missing,) = match({"a": 1, "b": 2}, {"a": 1}, "output")
    assert missing.path == "output.b" and missing.why == "missing"


def test_plain_lists_need_the_same_length_and_items():
    assert ok([1, 2], [1, 2])
    assert not ok([1, 2], [1, 2, 3]) and not ok([1, 2], [2, 1])


def test_matchers_nest_inside_plain_values():
    assert ok({"version": {"$type": "integer"}, "items": [{"$regex": "^a"}]}, {"version": 1, "items": ["ab"]})
    (bad,) = match({"version": {"$type": "integer"}}, {"version": "1"}, "output")
    assert bad.path == "output.version"


def test_eq_matches_literally_even_a_matcher_shaped_value():
    assert ok({"$eq": {"$any": True}}, {"$any": True})
    assert not ok({"$eq": {"$any": True}}, "anything")


def test_regex_searches():
    assert ok({"$regex": r"^\s+1→"}, "     1→x") and not ok({"$regex": "^1"}, "     1→x")
    assert not ok({"$regex": "x"}, 5)


def test_contains_and_not_contains():
    assert ok({"$contains": "read yet"}, "File has not been read yet.")
    assert not ok({"$contains": "read yet"}, "nope")
    assert ok({"$not_contains": "\t"}, "a→b") and not ok({"$not_contains": "\t"}, "a\tb")


def test_subset_requires_listed_keys_recursively():
    observed = {"success": True, "latest_file_state": {"version": 2, "content": "x"}, "message": "m"}
    assert ok({"$subset": {"latest_file_state": {"version": 2}}}, observed)
    assert not ok({"$subset": {"latest_file_state": {"version": 3}}}, observed)
    assert not ok({"$subset": {"missing": 1}}, observed)


def test_subset_of_a_list_finds_items_in_order():
    events = [{"type": "toolCall", "status": "pending"}, {"type": "log"}, {"type": "toolCallUpdate"}]
    assert ok({"$subset": [{"type": "toolCall"}, {"type": "toolCallUpdate"}]}, events)
    assert not ok({"$subset": [{"type": "toolCallUpdate"}, {"type": "toolCall"}]}, events)


def test_sha256_of_a_content_spec():
    digest = hashlib.sha256(b"hello\n").hexdigest()
    assert ok({"$sha256": "hello\n"}, digest)
    assert ok({"$sha256": {"hex": "68656c6c6f0a"}}, digest)
    assert not ok({"$sha256": "hello"}, digest)


def test_any_needs_presence_and_absent_needs_absence():
    assert ok({"a": {"$any": True}}, {"a": None})
    assert not ok({"a": {"$any": True}, "b": 1}, {"b": 1})
    assert ok({"a": {"$absent": True}, "b": 1}, {"b": 1})
    assert not ok({"a": {"$absent": True}}, {"a": 1})


@pytest.mark.parametrize("name,value", [("string", "s"), ("integer", 1), ("number", 1.5), ("boolean", False),
                                        ("null", None), ("array", []), ("object", {})])
def test_type_accepts_its_json_type(name, value):
    assert ok({"$type": name}, value)
    assert not ok({"$type": name}, MISSING)


def test_type_does_not_take_a_bool_for_an_integer():
    assert not ok({"$type": "integer"}, True)


def test_len():
    assert ok({"$len": 2}, [1, 2]) and ok({"$len": 3}, "abc") and not ok({"$len": 2}, "abc")


def test_json_parses_then_matches():
    assert ok({"$json": {"$subset": {"a": 1}}}, '{"a": 1, "b": 2}')
    (bad,) = match({"$json": {"a": 1}}, "not json", "output")
    assert "does not parse" in bad.why


def test_a_multiline_text_mismatch_renders_as_a_unified_diff():
    (mismatch,) = match("one\ntwo\nthree\n", "one\n2\nthree\n", "output")
    text = mismatch.render()
    assert "--- expected" in text and "+++ observed" in text
    assert "-two" in text and "+2" in text


def test_a_missing_final_newline_is_made_visible():
    (mismatch,) = match("a\nb\n", "a\nb", "output")
    assert "no newline" in mismatch.render()


def test_same_as_and_differs_from_compare_with_the_resolved_reference():
    from harness.scenario.matchers import Reference
    assert match({"$same_as": Reference("steps[1].output.v", 3)}, 3) == []
    assert match({"$same_as": Reference("steps[1].output.v", 3)}, 4)
    assert match({"$differs_from": Reference("steps[1].output.v", 3)}, 4) == []
    (same,) = match({"$differs_from": Reference("steps[1].output.v", [1])}, [1])
    assert same.why == "the same value"
    (nowhere,) = match({"$same_as": Reference("steps[1].output.v")}, 3)
    assert "was not observed" in nowhere.why
    assert match({"$differs_from": Reference("output.x")}, 3)  # nothing to differ from: not a pass


def test_not_any_of_all_of_combine_matchers():
    assert match({"$not": {"$contains": "%PDF"}}, [{"type": "document"}]) == []
    assert match({"$not": {"$contains": "%PDF"}}, "%PDF-1.4")
    assert match({"a": {"$not": 1}}, {}) != []  # a missing key matches nothing, not even $not
    assert match({"$any_of": [1, {"$type": "string"}]}, "x") == []
    assert match({"$any_of": [1, 2]}, 3)
    assert match({"$all_of": [{"$type": "string"}, {"$regex": "^a"}]}, "ab") == []
    assert len(match({"$all_of": [{"$type": "integer"}, {"$regex": "^a"}]}, "b")) == 2


def test_references_resolve_against_earlier_calls_and_the_same_response():
    from harness.scenario.placeholders import resolve_references
    steps = {1: {"output": {"sha256": "abc"}}, None: {"output": {"hash": "h"}, "events": [{"Hash": "h"}]}}

    def lookup(step, field):
        return steps[step][field]

    resolved = resolve_references({"x": {"$same_as": "steps[1].output.sha256"},
                                   "y": [{"$same_as": "events[0].Hash"}],
                                   "z": {"$same_as": "steps[1].output.missing"}}, lookup)
    assert resolved["x"]["$same_as"].value == "abc"
    assert resolved["y"][0]["$same_as"].value == "h"
    assert match(resolved["z"], "abc")  # a path that leads nowhere never matches


def test_a_long_text_shows_a_window_around_its_first_difference_on_both_sides():
    expected, observed = "x" * 9000 + "tail 2", "x" * 9000 + "tail 3"
    (mismatch,) = match(expected, observed, "output")
    text = mismatch.render()
    assert "first difference at char 9005" in text
    assert 'xxtail 2" (9006 chars)' in text and 'xxtail 3" (9006 chars)' in text
    assert len(text) < 400


def test_a_long_multiline_text_shows_the_hunk_of_its_difference_at_the_end():
    expected = "".join(f"line {i}\n" for i in range(1, 2002))
    observed = expected.replace("line 2001\n", "line 2001 changed\n")
    (mismatch,) = match({"$eq": expected}, observed, "output")
    text = mismatch.render()
    assert "line 2001, column 10" in text and "-line 2001" in text and "+line 2001 changed" in text
    assert "line 10\n" not in text


def test_a_failed_regex_shows_the_pattern_and_how_far_it_matched():
    (mismatch,) = match({"$regex": r"File has been (unexpectedly )?modified\. Read it again"},
                        "Error: File has been unexpectedly modified. Please read it first", "error.message")
    text = mismatch.render()
    assert "modified\\. Read it again/" in text
    assert r"/File has been (unexpectedly )?modified\. / matches" in text and "then /Read it again/ does not" in text


def test_a_missing_piece_shows_how_much_of_it_was_found_and_where():
    (mismatch,) = match({"$contains": "File has been unexpectedly modified"},
                        "Error: File has been modified since read", "error.message")
    assert "its first 14 of 35 chars occur at char 7" in mismatch.render()


def test_a_long_observed_text_shows_its_head_and_its_tail():
    (mismatch,) = match({"$contains": "needle"}, "a" * 5000 + "THE END", "output")
    assert 'THE END" (5007 chars)' in mismatch.render()


def test_control_characters_are_shown_escaped_never_raw():
    (mismatch,) = match("plain\nline\n", "pl\x1b[31main\nline\n", "output")
    text = mismatch.render()
    assert "\x1b" not in text and "\\u001b[31m" in text


def test_a_mismatch_that_is_dropped_is_not_explained_and_one_that_is_shown_is(monkeypatch):
    from harness.util import textdiff as difference
    asked: list[str] = []
    monkeypatch.setattr(difference, "regex_progress", lambda pattern, text, *a: asked.append(pattern) or "progress")
    assert match({"$not": {"$regex": "^b"}}, "abc") == []
    assert match({"$any_of": [{"$regex": "^b"}, {"$regex": "^a"}]}, "abc") == []
    assert match([{"$regex": "c$"}], ["ab", "abc"], subset=True) == []  # "ab" is tried first and dropped
    assert asked == []
    (shown,) = match({"$regex": "^b"}, "abc")
    assert shown.detail == "progress" and asked == ["^b"]

"""Values made safe to store and show: json_safe gives what its encoder-decided form gave."""

from __future__ import annotations

import json
import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.util import printable
from harness.util.printable import MAX_DEPTH, defused, json_safe, json_safe_at, shown


def _oracle(value: Any, depth: int = 0) -> Any:
    # json_safe as it was decided by the JSON encoder alone: the behaviour the walk must keep. What the
    # encoder refuses goes json_safe's own slow path, with the walk under test (`_unchanged`) switched off.
    if isinstance(value, (dict, list)):
        try:
            text = json.dumps(value, allow_nan=False, ensure_ascii=False)
            text.encode("utf-8")
            if text.count("[") + text.count("{") + depth <= MAX_DEPTH:
                return value
        except (ValueError, TypeError, UnicodeEncodeError, RecursionError):
            pass
    walk = printable._unchanged
    printable._unchanged = lambda value, depth: False
    try:
        return printable.json_safe(value, depth)
    finally:
        printable._unchanged = walk


def _shown(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False, default=repr).encode("utf-8", "surrogatepass").hex()


_texts = st.text(alphabet=st.sampled_from(["a", "[", "{", "é", "\ud800", "\x1b", "\u2028", "→"]), max_size=6)
_leaves = st.none() | st.booleans() | st.integers() | st.floats() | _texts
_values = st.recursive(_leaves, lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
                       | st.dictionaries(_texts | st.integers(), inner, max_size=4), max_leaves=40)


def _nested(levels: int, leaf: Any = "x") -> Any:
    value = leaf
    for level in range(levels):
        value = [value] if level % 2 else {"k": value}
    return value


@settings(max_examples=400, deadline=None)
@given(_values, st.sampled_from([0, 1, 30, 63]))
def test_json_safe_gives_what_the_encoder_decided_form_gave(value, depth):
    assert _shown(json_safe_at(value, depth)) == _shown(_oracle(value, depth))


def test_deep_values_brackets_in_strings_and_unencodable_values_as_before():
    cases = [_nested(MAX_DEPTH - 1), _nested(MAX_DEPTH), _nested(MAX_DEPTH + 1), _nested(200),
             {"text": "[{" * 100}, ["[" * 70], {"a": float("nan")}, [math.inf], {"s": "lone \udc80"},
             {1: "int key"}, {"t": (1, 2)}, [b"bytes"], {"k": {"\udc80": 1}}, {"big": "0123456789abcdef" * 65536}]
    for value in cases:
        for depth in (0, 1, MAX_DEPTH - 1):
            assert _shown(json_safe_at(value, depth)) == _shown(_oracle(value, depth)), (value, depth)
        assert _shown(json_safe(value)) == _shown(_oracle(value)), value


def test_plain_data_is_given_back_as_it_is_without_the_encoder(monkeypatch):
    value = {"content": "0123456789abcdef" * 65536, "lines": ["é", 1, 2.5, None, True], "nested": _nested(40)}

    def refuse(*args, **kwargs):
        raise AssertionError("encoded")
    monkeypatch.setattr(printable.json, "dumps", refuse)
    assert json_safe(value) is value


def test_bidirectional_and_invisible_characters_are_shown_escaped():
    """U+202E once reached the terminal, HTML, Markdown and JUnit raw: `a\u202ecba` reads as `aabc`."""
    assert shown("a\u202ecba\u202c") == "a\\u202ecba\\u202c"
    for char in ("\u202a", "\u202b", "\u202d", "\u2066", "\u2067", "\u2068", "\u2069", "\u200e", "\u200f", "\u061c",
                 "\u200b", "\u200c", "\u200d", "\u2060", "\u2063", "\ufeff", "\u3164", "\ufe0f"):
        assert shown(f"x{char}y") == f"x\\u{ord(char):04x}y"
    assert shown("tag\U000e0041") == "tag\\U000e0041" and shown("soft\u00adhyphen") == "soft\\xadhyphen"
    assert shown("plain, accents: é ü, CJK: 漢字, emoji: 🙂, tab\tand newline\n") == \
        "plain, accents: é ü, CJK: 漢字, emoji: 🙂, tab\tand newline\n"


def test_workflow_commands_are_defused_whatever_the_indentation():
    text = "ok\n::error::x\n    ::warning::y\n\u3000\t::add-mask::z\nnot :: a command\nlegacy ##[error]w\n"
    assert defused(text) == ("ok\n\\x3a:error::x\n    \\x3a:warning::y\n\u3000\t\\x3a:add-mask::z\nnot :: a command\n"
                             "legacy \\x23#[error]w\n")
    assert defused("plain text") == "plain text"

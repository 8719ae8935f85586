"""The numbered-lines normal form found in one search over a text gives what a search per line gives
(harness/scenario/normal_form.py): the fast path may only ever decline, never differ."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.scenario import normal_form as nf

PREFIXES = [nf.DEFAULT_PREFIX, "^ *([0-9]+)(?:: |\t|→)", r"([0-9]+)\s*", r"\s*([0-9]*)[:|]", r"(?s)([0-9]+).",
            r"\A([0-9]+)\t", r"([0-9]+)$", r"x?([0-9]+)\b", r"(?i)L([0-9]+) "]
CANONICAL = [nf.DEFAULT_CANONICAL, "{number}: "]
PIECES = st.sampled_from(["1", "12", "007", " ", "  3", "\t", "→", ": ", "|", "\n", "x", "L4 ", "l5 ", "abc",
                          "\ud800", "é", "9" * 250])


@settings(max_examples=1000, deadline=None)
@given(text=st.lists(PIECES, max_size=30).map("".join), prefix=st.sampled_from(PREFIXES),
       canonical=st.sampled_from(CANONICAL))
def test_one_search_over_the_text_gives_what_one_search_per_line_gives(text, prefix, canonical):
    lines = nf.Lines(prefix, canonical)
    at_once = nf._rewrite_at_once(text, lines)
    assert at_once is None or at_once == nf._rewrite_by_line(text, lines)
    assert nf._rewrite_text(text, lines) == nf._rewrite_by_line(text, lines)


def test_a_read_of_numbered_lines_is_rewritten_in_one_search():
    text = "".join(f"{n:>6}\tline {n}\n" for n in range(1, 200))
    lines = nf.Lines()
    assert nf._rewrite_at_once(text, lines) == nf._rewrite_by_line(text, lines)
    assert nf._rewrite_at_once(text, lines).startswith("     1→line 1\n")


def test_a_line_past_the_span_a_prefix_is_looked_for_in_is_left_to_the_search_per_line():
    lines = nf.Lines(r"([0-9]+)$", nf.DEFAULT_CANONICAL)
    text = "1\n" + "2" * (nf.PREFIX_SPAN + 1)  # per line, the prefix is looked for in the first characters only
    assert nf._rewrite_at_once(text, lines) is None
    assert nf._rewrite_text(text, lines) == nf._rewrite_by_line(text, lines)
    assert nf._rewrite_by_line(text, lines).endswith("→2")  # `$` held at the span's end, one digit past it


def test_a_prefix_bound_to_the_text_s_own_start_or_with_inline_flags_is_left_to_the_search_per_line():
    text = "1\tone\n2\ttwo\n"
    for prefix in (r"\A([0-9]+)\t", r"(?-m)^([0-9]+)\t", r"(?s)([0-9]+)\t"):
        lines = nf.Lines(prefix, "{number}: ")
        assert nf._rewrite_at_once(text, lines) is None
        assert nf._rewrite_text(text, lines) == nf._rewrite_by_line(text, lines) == "1: one\n2: two\n"

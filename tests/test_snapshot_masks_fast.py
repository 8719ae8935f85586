"""The snapshot masks' quick paths (harness/record/snapshot/normalise.py) change nothing: a text with
no mask's needle is returned as it is, and a mapping's keys and the placeholders of time and
duration keys, remembered per key, are what working them out each time gives."""

from __future__ import annotations

import importlib

from hypothesis import given, settings
from hypothesis import strategies as st

normalise = importlib.import_module("harness.record.snapshot.normalise")

#: Pieces that make texts near and on every mask: needles, the masked shapes, and plain words.
PIECES = ["/dev/shm/harness-abcd1234", "/tmp/harness-wxyz9876/ws-3/a.txt", "/ws", "-", "ms", " in 12 ms",
          "tmp", "tmpab12cd34", ".0123abcd.tmp", "GMT", "Mon Jan 05 2026 10:00:00 GMT", "2026-11-28T10:00:00Z",
          "123e4567-e89b-12d3-a456-426614174000", "${base}", "${base}/ws", "/harness-tool-home-Ab12Cd34",
          "/harness-cwd-ab12cd34", "/harness-worker-ab12cd34", "/harness-tmp-ab12cd34", "x", " ", "\n", "é", "/"]


def _every_mask(text: str) -> str:
    """The built-in masks applied one by one, as mask_text did before its quick path."""
    if "/harness-" in text:
        text = normalise._BASE.sub("${base}", text)
    for needle, pattern, replacement in normalise._TEXT_MASKS:
        if needle in text:
            text = pattern.sub(replacement, text)
    return text


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=12).map("".join) | st.text(max_size=40))
def test_a_text_is_masked_as_by_every_mask_in_turn(text):
    assert normalise.mask_text(text) == _every_mask(text)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(["time", "mtime_ns", "created_at", "seconds", "elapsed_ms", "duration",
                                        "path", "ws-2", "tmpab12cd34", "a-b", "size"]),
                       st.one_of(st.integers(), st.text(max_size=8), st.none()), max_size=6))
def test_a_mappings_keys_and_placeholders_are_those_worked_out_each_time(mapping):
    expected = {}
    for key, value in mapping.items():
        if value is not None and normalise._TIME_KEY.match(key):
            shown = "${time}"
        elif value is not None and normalise._DURATION_KEY.match(key):
            shown = "${duration}"
        else:
            shown = normalise._shorten(_every_mask(value)) if isinstance(value, str) else value
        expected[_every_mask(key)] = shown
    for _ in range(2):  # the second time from what was remembered
        assert normalise.normalise(mapping) == dict(sorted(expected.items()))


def _plain_normalise(value, key=None):
    """What normalise gave before its quick paths: every test in the order the masks table reads."""
    from collections.abc import Mapping
    if key is not None and not isinstance(value, (dict, list, tuple)) and value is not None:
        if normalise._TIME_KEY.match(key):
            return "${time}"
        if normalise._DURATION_KEY.match(key):
            return "${duration}"
    if isinstance(value, Mapping):
        items = ((_every_mask(str(k)), _plain_normalise(v, str(k))) for k, v in value.items())
        return dict(sorted(items, key=lambda item: item[0]))
    if isinstance(value, (list, tuple)):
        return [_plain_normalise(item) for item in value]
    if isinstance(value, str):
        return normalise._shorten(_every_mask(value))
    if isinstance(value, bytes):
        import hashlib
        return {"bytes_sha256": hashlib.sha256(value).hexdigest(), "size": len(value)}
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return _every_mask(str(value))


_KEYS = st.sampled_from(["time", "seconds", "path", "ws-2", "tmpab12cd34", "tmpab12cd35", "a-b", "text", "1"]) | \
    st.integers(0, 3)
_LEAVES = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.binary(max_size=4) | \
    st.lists(st.sampled_from(PIECES), max_size=6).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.recursive(_LEAVES, lambda inner: st.lists(inner, max_size=3) | st.lists(inner, max_size=3).map(tuple)
                    | st.dictionaries(_KEYS, inner, max_size=4)
                    | st.dictionaries(_KEYS, inner, max_size=3).map(__import__("types").MappingProxyType),
                    max_leaves=12))
def test_a_value_is_normalised_as_by_every_test_in_turn(value):
    # Two keys that mask alike ("tmpab12cd34", "tmpab12cd35") keep the order they came in.
    got = normalise.normalise({"value": value})
    assert got == _plain_normalise({"value": value}) and repr(got) == repr(_plain_normalise({"value": value}))

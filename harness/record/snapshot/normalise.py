"""Snapshot documents: a result turned into stable YAML, volatile values masked (the table in __init__).

The masks a target adds for values only it produces come in as ``masks`` (``Target.snapshot_masks``,
handed over by the report stream), never from a registry filled at import.
"""

from __future__ import annotations

import functools
import hashlib
import operator
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import yaml

FORMAT = 1
SUFFIX = ".yaml"
LONG_TEXT = 65536  # characters; longer strings keep head and tail lines plus length and SHA-256
HEAD_LINES, TAIL_LINES = 40, 10
HEAD_CHARS, TAIL_CHARS = 4000, 1000  # and no more characters than these (one huge line stays short)

HEADER = ("# harness snapshot (format 1): what one target did in one scenario.\n"
          "# Regenerate with `harness run --target <target> --snapshot-update`; masks: docs/snapshots.md\n")

#: The verdicts whose results carry an observation worth recording.
RECORDED_VERDICTS = frozenset({"pass", "fail", "recorded"})

# -- masks -------------------------------------------------------------------------------------

_BASE = re.compile(r"""(?:/[^/\s'"`<>|\\]+)*?/harness-[a-z0-9_]{8}(?![a-z0-9_])""")
#: (needle, pattern, placeholder): a pattern runs only on text holding its needle, which every match
#: of it holds (most strings hold none: a run masks some ten thousand of them).
_TEXT_MASKS: tuple[tuple[str, re.Pattern[str], str], ...] = (
    # A run's later workspaces beside the first ("…/ws-2") are the workspace as well.
    ("${base}/ws-", re.compile(r"(\$\{base\}/ws)-[0-9]+(?![\w-])"), r"\1"),
    # "…/ws" ends where a name cannot go on: "/ws/a", "/ws'", "/ws." at a sentence's end; not "/ws2", "/ws.bak".
    ("${base}/ws", re.compile(r"\$\{base\}/ws(?![\w-]|\.\w)"), "${workspace}"),
    ("tmp", re.compile(r"\btmp[a-z0-9_]{8}\b"), "tmp${random}"),
    (".tmp", re.compile(r"\.[0-9a-f]{8,}\.tmp\b"), ".${random}.tmp"),
    ("-", re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"), "${uuid}"),
    ("-", re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?\b"), "${time}"),
    # JavaScript's Date#toString (the MCP filesystem server's get_file_info).
    ("GMT", re.compile(r"\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{2} \d{4} "
                r"\d{2}:\d{2}:\d{2} GMT[+-]\d{4}(?: \([^()\n]{1,64}\))?"), "${time}"),
    # A tool's own timing in a message: "(found in 514.94ms)", "completed in 517.13ms", "took 3 ms".
    ("ms", re.compile(r"\b(in|took) \d+(?:\.\d+)? ?ms\b"), r"\1 ${duration}"),
    # The temporary HOME a launcher in tools/ gives a tool (tools/desktop-commander/serve.sh).
    ("/harness-tool-home-", re.compile(r"""(?:/[^/\s'"`<>|\\]+)*?/harness-tool-home-[A-Za-z0-9]{8}(?![A-Za-z0-9])"""), "${tool-home}"),
    # The candidate's working folder (harness/run/working_folder.py), where a relative path lands, and the
    # worker folder around it (harness/run/workers.py), which a path such as ``../a.txt`` reaches from there.
    ("/harness-cwd-", re.compile(r"""(?:/[^/\s'"`<>|\\]+)*?/harness-cwd-[a-z0-9_]{8}(?![a-z0-9_])"""), "${cwd}"),
    ("/harness-worker-", re.compile(r"""(?:/[^/\s'"`<>|\\]+)*?/harness-worker-[a-z0-9_]{8}(?![a-z0-9_])"""), "${worker}"),
    # The candidate's own temporary folder (its TMPDIR, and its HOME in the sandbox: ``~/x`` lands there).
    ("/harness-tmp-", re.compile(r"""(?:/[^/\s'"`<>|\\]+)*?/harness-tmp-[a-z0-9_]{8}(?![a-z0-9_])"""), "${tmp}"),
)
_TIME_KEY = re.compile(r"^(time|timestamp|date|[mac]time(_ns)?|last_?modified|\w+_at|\w+_time)$", re.I)
_DURATION_KEY = re.compile(r"^(seconds|elapsed|duration|\w+_ms|duration_\w+|elapsed_\w+)$", re.I)


# -- target masks: volatile values a particular target puts into its messages --------------------

#: A target's own masks (``Target.snapshot_masks``): (regex, placeholder) pairs, applied before the built-in ones.
Masks = tuple[tuple[str, str], ...]


@functools.lru_cache(maxsize=32)
def _compiled(masks: Masks) -> tuple[tuple[re.Pattern[str], str], ...]:
    return tuple((re.compile(pattern), replacement) for pattern, replacement in masks)


#: What every built-in mask's match holds (its needle), the base's, and ``${base}`` (what the base's
#: replacement leaves for the workspace's masks).
_NEEDLES = frozenset({"/harness-", "${base}", *(needle for needle, _, _ in _TEXT_MASKS)})
#: The needles holding no other, each with its first character: a text holding none of these holds
#: none of them, and so nothing a built-in mask replaces. A needle is looked for only in a text that
#: holds its first character (one ``memchr``: a search for two or three characters in a long text
#: cost some fifty times as much). Shortest first: ``-``, in most texts that hold any.
_FEW_NEEDLES = tuple((needle[0], needle) for needle in sorted(
    (needle for needle in _NEEDLES if not any(other != needle and other in needle for other in _NEEDLES)),
    key=lambda needle: (len(needle), needle)))


def mask_text(text: str, masks: Masks = ()) -> str:
    """Returns ``text`` with every volatile part replaced by its placeholder (see the table above),
    the target's own ``masks`` first."""
    if not masks:  # most texts hold no needle: a few substring tests in C (a regex of them all was slower)
        for first, needle in _FEW_NEEDLES:
            if first in text and needle in text:
                break
        else:
            return text
    for pattern, replacement in _compiled(masks):
        text = pattern.sub(replacement, text)
    if "/harness-" in text:  # the pattern backtracks on long slash-heavy text: only run it where it can match
        text = _BASE.sub("${base}", text)
    for needle, pattern, replacement in _TEXT_MASKS:
        if needle[0] in text and needle in text:
            text = pattern.sub(replacement, text)
    return text


#: Mapping keys masked so far, with no target masks (a run's results hold some 1,800 distinct
#: strings among 12,600 masked, most of them keys: ``type``, ``mode``, a file's name).
_KEYS: dict[str, str] = {}


#: What a value under each key seen so far is replaced by: ``${time}``, ``${duration}``, or None (kept).
_KEY_PLACEHOLDERS: dict[str, str | None] = {}


def _masked_key(key: str, masks: Masks) -> str:
    if masks:
        return mask_text(key, masks)
    masked = _KEYS.get(key)
    if masked is None:
        if len(_KEYS) >= 4096:
            _KEYS.clear()
        masked = _KEYS[key] = mask_text(key)
    return masked


def normalise(value: Any, key: str | None = None, masks: Masks = ()) -> Any:
    """Returns a JSON-like value with masks applied, mapping keys sorted, long strings shortened."""
    if key is not None and value is not None and not isinstance(value, (dict, list, tuple)):
        placeholder = _KEY_PLACEHOLDERS.get(key, "")
        if placeholder == "":
            if len(_KEY_PLACEHOLDERS) >= 4096:
                _KEY_PLACEHOLDERS.clear()
            placeholder = _KEY_PLACEHOLDERS[key] = ("${time}" if _TIME_KEY.match(key)
                                                   else "${duration}" if _DURATION_KEY.match(key) else None)
        if placeholder is not None:
            return placeholder
    # The common kinds first (a test against Mapping, an abstract class, cost more than the rest of
    # a string's way here).
    if isinstance(value, str):
        return _shorten(mask_text(value, masks))
    if isinstance(value, dict):
        return _mapping(value, masks)
    if isinstance(value, (list, tuple)):
        return [normalise(item, None, masks) for item in value]
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, Mapping):
        return _mapping(value, masks)
    if isinstance(value, bytes):
        return {"bytes_sha256": hashlib.sha256(value).hexdigest(), "size": len(value)}
    return mask_text(str(value), masks)


def _mapping(value: Mapping[Any, Any], masks: Masks) -> dict[str, Any]:
    items = []
    for key, item in value.items():
        name = str(key)
        items.append((_masked_key(name, masks), normalise(item, name, masks)))
    items.sort(key=_FIRST)  # by the masked key alone, as they come where two mask alike
    return dict(items)


_FIRST = operator.itemgetter(0)


def _shorten(text: str) -> Any:
    if len(text) <= LONG_TEXT:
        return text
    lines = text.splitlines(keepends=True)
    return {"long_text": {"length": len(text), "sha256": hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest(),
                          "lines": len(lines), "head": "".join(lines[:HEAD_LINES])[:HEAD_CHARS],
                          "tail": "".join(lines[-TAIL_LINES:])[-TAIL_CHARS:]}}


# -- the document ------------------------------------------------------------------------------

def is_recordable(result: Mapping[str, Any]) -> bool:
    """Returns True when a result (JSON shape) carries an observation worth a snapshot."""
    return result.get("verdict") in RECORDED_VERDICTS


def document(result: Mapping[str, Any], masks: Masks = ()) -> dict[str, Any]:
    """Returns the snapshot document of one result given in the JSON report's shape (``masks``: the target's own)."""
    doc: dict[str, Any] = {"scenario": result["id"], "profile": result.get("profile", "")}
    for key in ("title", "source", "open_question"):
        if result.get(key):
            doc[key] = result[key]
    steps = []
    previous: tuple[int, Any] | None = None
    for number, step in enumerate(result.get("steps", ()), start=1):
        entry, workspace = _step(number, step, masks)
        if workspace is not None:
            if previous is not None and previous[1] == workspace:
                entry["workspace"] = f"same as after step {previous[0]}"
            else:
                entry["workspace"] = workspace
                previous = (number, workspace)
        steps.append(entry)
    doc["steps"] = steps
    if previous is None and result.get("workspace") is not None:
        doc["workspace"] = _workspace(result["workspace"], masks)  # no per-step states: the final one
    return doc


def _step(number: int, step: Mapping[str, Any], masks: Masks) -> tuple[dict[str, Any], Any]:
    entry: dict[str, Any] = {"step": number}
    if step.get("name"):
        entry["name"] = step["name"]
    extra = dict(step.get("extra") or {})
    workspace = extra.pop("workspace", None)
    if "action" in step:
        entry["action"] = step["action"]
        for key, value in step.items():
            if key not in ("action", "name", "failures", "extra"):
                entry[key] = normalise(value, key, masks)
    else:
        entry["tool"] = step["tool"]
        entry["args"] = normalise(step.get("args", {}), None, masks)
        if step.get("error") is not None:
            entry["error"] = normalise(step["error"], None, masks)
        else:
            entry["output"] = normalise(step.get("output"), None, masks)
        if step.get("events") is not None:
            entry["events"] = normalise(step["events"], None, masks)
        if extra:
            entry["extra"] = normalise(extra, None, masks)
    return entry, (_workspace(workspace, masks) if workspace is not None else None)


_ENTRY_ORDER = ("type", "mode", "size", "sha256", "target", "unreadable", "text")


def _workspace(state: Mapping[str, Any], masks: Masks) -> dict[str, Any]:
    out = {}
    for rel in sorted(state):
        entry = state[rel]
        shaped = {key: entry[key] for key in _ENTRY_ORDER if key in entry}
        shaped.update({key: entry[key] for key in sorted(entry) if key not in shaped})
        if "text" in shaped:
            shaped["text"] = mask_text(shaped["text"], masks)
        if "target" in shaped:
            shaped["target"] = mask_text(shaped["target"], masks)
        out[mask_text(rel, masks)] = shaped
    return out


# PyYAML is imported where a text is written or parsed: a run whose stored snapshots' behaviours
# come from the cache and match writes and parses none (tests/test_start_imports.py).
@functools.cache
def _dumper() -> type:
    """Returns our own dumper (PyYAML's globals stay untouched): block text for multi-line strings."""
    import yaml

    class Dumper(yaml.SafeDumper):
        def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
            super().increase_indent(flow, False)  # indent list items under their key, for readability

    Dumper.add_representer(str, _represent_str)
    return Dumper


def _represent_str(dumper: yaml.SafeDumper, text: str) -> yaml.Node:
    style = "|" if "\n" in text and text.strip() else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


def render(doc: Mapping[str, Any]) -> str:
    """Returns the document as YAML text, the header comment first."""
    import yaml
    body = yaml.dump(dict(doc), Dumper=_dumper(), sort_keys=False, allow_unicode=True, width=100,
                     default_flow_style=False)
    return HEADER + body


def serialise(result: Mapping[str, Any], masks: Masks = ()) -> str:
    """Returns the snapshot text of a result in the JSON report's shape."""
    return render(document(result, masks))


METADATA = ("scenario", "profile", "title", "source", "open_question")


def parse(text: str) -> dict[str, Any]:
    """Returns the document of a snapshot file's text."""
    import yaml  # reading may use libyaml; writing never does (stability)
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}


def stored_behaviour(text: str) -> dict[str, Any] | None:
    """Returns the behaviour part of a stored snapshot's text, or None when it is no snapshot document
    (not YAML, nested past the cap, not a mapping): then only its text is compared, and differs."""
    from harness.scenario import static_checks
    if static_checks.depth_problem(text):
        return None
    import yaml
    try:
        doc = parse(text)
    except (yaml.YAMLError, RecursionError):
        return None
    return behaviour(doc) if isinstance(doc, dict) else None


def behaviour(doc: Mapping[str, Any]) -> dict[str, Any]:
    """Returns the behaviour part of a document: everything but the scenario's own words (see ``body``)."""
    return {key: value for key, value in doc.items() if key not in METADATA}


def body(text: str) -> str:
    """Returns the behaviour part of a snapshot's text: from ``steps:`` on (what comparisons look at).

    The scenario's own words (title, source, the question) are kept in the file for a reader and for
    reports, but editing them is not a change of behaviour.
    """
    start = text.find("\nsteps:")
    return text[start + 1:] if start >= 0 else text

"""Failures grouped by cause: one bug that fails eighteen scenarios is one group of eighteen.

Two failing scenarios are in one group when their first unmet expectations are alike:

- the same **expectation**: the same step tool (``Read``; ``then`` for the scenario's end state),
  the same place (``output``, ``then.files[*].content``: named files and indexes made ``*``) and
  the same kind of expectation (a regular expression, a text, ``the call to succeed``, ...);
- the same **kind of difference**: for texts, the edit that turns what was expected into what was
  observed, reduced to its most frequent small change (``'→' → '\\t'``: a tab where the arrow
  belongs; ``'\\n' missing at the end``); for a regular expression, the same computed on the
  literal text the expression asks for; otherwise the note of the failure (``the call failed``:
  with the error's message, numbers and quoted parts masked), its numbers masked.

A scenario that errored is grouped by its reason, masked the same way; so a target that did not
start is one group holding every scenario. A group is shown once with its count and its members
(the terminal, Markdown, HTML, the step summary).
"""

from __future__ import annotations

import ast
import difflib
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

FAILING = ("fail", "error")
#: How much of a text the difference is computed on (bounded: a text may be megabytes).
WINDOW = 4000
SMALL = 3  # an edit of at most this many characters on each side is a "small change"

_NUMBER = re.compile(r"\d+")
_QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|`[^`]*`")
_NAMED = re.compile(r"\[[^\]]*\]")
_TOOL = re.compile(r"^step \d+ \((.*)\)$")


@dataclass
class Member:
    """One failing scenario of a group."""

    id: str
    verdict: str
    reason: str
    target: str = ""


@dataclass
class Group:
    """Failing scenarios alike in their first unmet expectation."""

    key: tuple[str, ...]
    title: str  # what they share, in one line
    members: list[Member] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.members)

    def as_dict(self) -> dict[str, Any]:
        return {"cause": self.title, "count": self.count,
                "members": [member.id for member in self.members]}


def _masked(text: str, limit: int = 80) -> str:
    text = " ".join(str(text).split())
    return _NUMBER.sub("N", _QUOTED.sub("…", text))[:limit]


def _regex_literal(pattern: str) -> str:
    """Returns the literal text a regular expression asks for, roughly: lookarounds, classes,
    groups' syntax, anchors and quantifiers removed, escapes decoded."""
    text = re.sub(r"\(\?[=!<][^()]*(?:\([^()]*\)[^()]*)*\)", "", pattern)  # lookarounds
    text = re.sub(r"\(\?[a-zA-Z]+\)", "", text)  # inline flags
    text = re.sub(r"\(\?:([^()|]*)(?:\|[^()]*)?\)", "", text)  # an optional ending like (?:\n|$)
    text = re.sub(r"\[(?:\\.|[^\]\\])*\][*+?]?(?:\{\d+(?:,\d*)?\})?", "", text)  # classes
    text = re.sub(r"\\[AZzbB]|[\^$]", "", text)
    text = re.sub(r"(?<!\\)[*+?]|\{\d+(?:,\d*)?\}", "", text)
    text = text.replace("(", "").replace(")", "").replace("|", "")
    try:
        return text.encode("latin-1", "backslashreplace").decode("unicode_escape")
    except (UnicodeDecodeError, ValueError):
        return text


def _expected_text(expected: str) -> tuple[str, str | None]:
    """Returns the kind of an expectation and, when it is a text or a regex, the literal it asks for."""
    expected = str(expected)
    found = re.match(r"^text matching /(.*)/[a-z]*$", expected, re.DOTALL)
    if found:
        return "text matching a regular expression", _regex_literal(found.group(1))
    if expected[:1] in ("'", '"'):
        try:
            value = ast.literal_eval(expected)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return "a text", None
        if isinstance(value, str):
            return "a text", value
    return _masked(expected, 60), None


def _edit(expected: str, observed: str) -> str | None:
    """Returns the most frequent small change from ``expected`` to ``observed``, in words, or None."""
    a, b = expected[:WINDOW], observed[:WINDOW]
    changes: Counter[str] = Counter()
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal" or (i2 - i1) > SMALL or (j2 - j1) > SMALL:
            continue
        if op == "replace":
            changes[f"{a[i1:i2]!r} → {b[j1:j2]!r}"] += 1
        elif op == "delete":
            changes[f"{a[i1:i2]!r} missing" + (" at the end" if i2 == len(expected) else "")] += 1
        else:
            changes[f"{b[j1:j2]!r} added" + (" at the end" if j2 == len(observed) else "")] += 1
    if not changes:
        return None
    return changes.most_common(1)[0][0]


def cause(verdict: str, reason: str, failures: list[dict[str, Any]]) -> tuple[tuple[str, ...], str]:
    """Returns a failing scenario's group key and its title, from its first unmet expectation."""
    if verdict == "error" or not failures:
        masked = _masked(reason.splitlines()[0] if reason else verdict)
        return ("error" if verdict == "error" else "reason", masked), f"{verdict}: {masked}"
    first = failures[0]
    where = str(first.get("where") or "")
    found = _TOOL.match(where)
    tool = found.group(1) if found else where or "then"
    path = _NAMED.sub("[*]", str(first.get("path") or ""))
    kind, literal = _expected_text(str(first.get("expected", "")))
    observed = first.get("observed")
    if isinstance(observed, dict) and isinstance(observed.get("error"), dict):
        observed = observed["error"].get("message")
    difference = None
    if literal is not None and isinstance(observed, str):
        difference = _edit(literal, observed)
    if difference is None:
        why = _masked(first.get("why") or "")
        if why == "the call failed" or (not why and isinstance(observed, str)):
            why = (why + ": " if why else "") + _masked(str(observed), 50)
        difference = why or "differs"
    title = f"{path if tool == 'then' else tool + ' ' + path}: expected {kind}; {difference}"
    return (tool, path, kind, difference), title


def cause_of_result(result: Any) -> tuple[tuple[str, ...], str]:
    """Returns the group key and title of a ``Result`` (harness/scenario/model.py) as it was run, observed
    values and all (a held result has lost them: take the cause before holding it)."""
    failures = [{"where": where, "path": failure.path, "expected": failure.expected, "observed": failure.observed,
                 "why": failure.why} for where, failure in result.failures]
    return cause(result.verdict.value, result.reason, failures)


def from_causes(items: Iterable[tuple[str, str, str, tuple[tuple[str, ...], str]]], target: str = "") -> list[Group]:
    """Returns the groups, largest first, of (id, verdict, reason, (key, title)) of failing scenarios."""
    groups: dict[tuple[str, ...], Group] = {}
    for scenario_id, verdict, reason, (key, title) in items:
        groups.setdefault(key, Group(key, title)).members.append(Member(scenario_id, verdict, reason, target))
    return sorted(groups.values(), key=lambda found: (-found.count, found.title))


def _failures_of(item: Any) -> tuple[str, str, str, list[dict[str, Any]]]:
    """Returns (id, verdict, reason, failures) of a result (a ``Result``, its JSON form, or an
    observation of harness/record/observations.py)."""
    if isinstance(item, dict):
        failures = [{"where": _where(index, step), **failure}
                    for index, step in enumerate(item.get("steps") or ()) if isinstance(step, dict)
                    for failure in step.get("failures") or () if isinstance(failure, dict)]
        failures += [{"where": "then", **failure} for failure in (item.get("then") or {}).get("failures") or ()
                     if isinstance(failure, dict)]
        return str(item.get("id")), str(item.get("verdict")), str(item.get("reason") or ""), failures
    if hasattr(item, "failures") and isinstance(item.failures, list):  # an Observation
        return item.id, item.verdict or "", item.reason or "", list(item.failures)
    return _failures_of(item.as_dict())  # a Result


def _where(index: int, step: dict[str, Any]) -> str:
    return f"step {index + 1} ({step.get('name') or step.get('tool') or step.get('action')})"


def group(items: Iterable[Any], target: str = "") -> list[Group]:
    """Returns the groups of the failing items (fail or error; a baseline's known ones too), largest
    first; the items are ``Result`` objects, their JSON forms, or observations."""
    causes = []
    for item in items:
        scenario_id, verdict, reason, failures = _failures_of(item)
        if verdict in FAILING:
            causes.append((scenario_id, verdict, reason, cause(verdict, reason, failures)))
    return from_causes(causes, target)


# -- renderings ---------------------------------------------------------------------------------------

def terminal_lines(groups: list[Group], width: int = 80, members: int = 8) -> list[str]:
    """Returns the groups as plain lines within ``width``: each group's count and cause, then its
    first ``members`` ids (wrapped at ``/``) and how many more."""
    from harness.report.wrap import cut, wrap_id
    from harness.util.printable import shown
    lines = []
    for number, found in enumerate(groups, 1):
        head = f"{number}. {found.count} × {shown(found.title)}"
        lines.append(cut(head, width))
        for member in found.members[:members]:
            lines += ["     " + part for part in wrap_id(shown(member.id), width - 5)]
        if found.count > members:
            lines.append(f"     … and {found.count - members} more")
    return lines


def markdown(groups: list[Group], heading: str = "### Failures by cause") -> str:
    """Returns the groups in Markdown: one list item per group, its members in a collapsed list."""
    from harness.report.markdown import _cell as cell
    from harness.report.markdown import _html as html
    from harness.report.markdown import _span as span
    if not groups:
        return ""
    lines = [heading, ""]
    for found in groups:
        lines.append(f"- **{found.count}** × {cell(found.title)}")
        shown_ids = ", ".join(span(member.id, table=False) for member in found.members[:50])
        more = f" and {found.count - 50} more" if found.count > 50 else ""
        lines.append(f"  <details><summary>{html(found.members[0].id)}"
                     f"{' …' if found.count > 1 else ''}</summary>\n\n  {shown_ids}{more}\n  </details>")
    return "\n".join(lines) + "\n"

"""Profile reference pages: one Markdown page per profile, generated from its ``profile.yaml`` and
the scenarios that cite it (``harness profiles``; the committed pages are docs/profiles/<name>.md).

A page says what an implementer needs to write an adapter that passes: the tools, their arguments
and output shapes, how failure is signalled, the session options, the events, the error kinds, and
the contract's sections with the scenarios that cite each (their titles restate the requirement in
our own words), then the open questions the catalog records where the contract is silent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from harness.scenario.model import Scenario
from harness.scenario.profiles import Profile

_SECTION_NUMBER = re.compile(r"^§?\s*(\d+(?:\.\d+)*)")
_TEST_CASE = re.compile(r"^(TC\d+)\b")


def _cell(text: Any) -> str:
    """Returns text safe inside a Markdown table cell."""
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _type_of(schema: Any) -> str:
    if not isinstance(schema, dict):
        return "any" if schema is True else "nothing"
    if "const" in schema:
        return f"`{_json(schema['const'])}`"
    if "enum" in schema:
        return "one of " + ", ".join(f"`{_json(v)}`" for v in schema["enum"])
    kind = schema.get("type")
    if isinstance(kind, list):
        text = " or ".join(kind)
    else:
        text = kind or "any"
    if kind == "array" and isinstance(schema.get("items"), dict):
        text = f"array of {_type_of(schema['items'])}"
    return text


def _properties_table(schema: Any, *, what: str) -> list[str]:
    """Returns a table of an object schema's properties: name, type, required, default, meaning."""
    if not isinstance(schema, dict) or not schema.get("properties"):
        return []
    required = set(schema.get("required", ()))
    out = [f"| {what} | type | required | default | meaning |", "|---|---|---|---|---|"]
    for name, prop in schema["properties"].items():
        prop = prop if isinstance(prop, dict) else {}
        default = f"`{_json(prop['default'])}`" if "default" in prop else ""
        constraints = []
        if "minimum" in prop:
            constraints.append(f"≥ {prop['minimum']}")
        if "pattern" in prop:
            constraints.append(f"matches `{prop['pattern']}`")
        meaning = " ".join(part for part in (prop.get("description", ""), "; ".join(constraints)) if part)
        out.append(f"| `{name}` | {_cell(_type_of(prop))} | {'yes' if name in required else 'no'} | {default} | "
                   f"{_cell(meaning)} |")
    return out


def _others_allowed(schema: Any) -> str:
    if isinstance(schema, dict) and schema.get("additionalProperties") is False:
        return "No other property is allowed."
    return "The contract does not forbid other properties."


def _schema_block(schema: Any) -> list[str]:
    return ["<details><summary>JSON Schema</summary>", "", "```json",
            json.dumps(schema, indent=2, ensure_ascii=False), "```", "", "</details>"]


def cite_key(citation: str) -> str:
    """Returns the section a citation names: ``5.1`` for ``§5.1 step 3``, ``TC4``, or the heading
    text before any parenthesis (``Edit Tool Behavior / Uniqueness Constraint``)."""
    text = citation.strip()
    number = _SECTION_NUMBER.match(text)
    if number:
        return number.group(1)
    case = _TEST_CASE.match(text)
    if case:
        return case.group(1)
    text = text.lstrip("§").strip()
    text = re.split(r"\s*[(:]", text, maxsplit=1)[0]
    return text.strip().rstrip(".") or citation.strip()


def citations(scenario: Scenario, profile: Profile) -> list[str]:
    """Returns the sections of the profile's contract a scenario's ``source`` cites."""
    text = scenario.source
    document = profile.document
    if document != "captured" and document in text:
        text = text.split(document, 1)[1]
    elif document == "captured" or text.startswith("captured"):
        return ["captured observation"]
    out = []
    for part in _split_top(text):
        part = part.strip(" ,.")
        if not part:
            continue
        key = cite_key(part)
        if key and key not in out:
            out.append(key)
    return out or ["(no section named)"]


def _split_top(text: str) -> list[str]:
    """Splits a citation list on ``;`` and ``+`` outside parentheses and quotes."""
    parts, depth, quoted, current = [], 0, False, ""
    for char in text:
        if char == '"':
            quoted = not quoted
        elif char == "(" and not quoted:
            depth += 1
        elif char == ")" and not quoted and depth:
            depth -= 1
        elif char in ";+" and depth == 0 and not quoted:
            parts.append(current)
            current = ""
            continue
        current += char
    return parts + [current]


def _sort_key(key: str) -> tuple:
    number = re.fullmatch(r"\d+(?:\.\d+)*", key)
    if number:
        return (0, tuple(int(p) for p in key.split(".")), "")
    case = re.fullmatch(r"TC(\d+)", key)
    if case:
        return (1, (int(case.group(1)),), "")
    return (2, (), key.lower())


def render(profile: Profile, scenarios: Iterable[Scenario]) -> str:
    """Returns the reference page of one profile."""
    scenarios = [s for s in scenarios if s.profile == profile.name]
    contract = profile.contract
    out = [f"# Profile `{profile.name}`: {profile.title}", "",
           "<!-- Generated by `harness profiles --markdown docs/profiles` from the profile's profile.yaml and "
           "the catalog; do not edit by hand. -->", ""]
    if profile.summary:
        out += [profile.summary.strip(), ""]
    out += ["## The contract", "",
            f"- Document: **{_cell(contract['title'])}**"
            + (f", status {contract['status']}" if contract.get("status") else "")
            + (f", version {contract['version']}" if contract.get("version") else "") + ".",
            (f"- Scenarios cite it as `{profile.document}` followed by a section (`source: {profile.document} §5.2`); "
             "the sections below list every citation with the scenarios that make it."
             if profile.document != "captured" else
             "- Its scenarios cite captured runs of a real tool (`source: captured: ...`), not a document."),
            f"- Paths: {_paths_text(profile.paths)}",
            f"- This page: `harness profiles {profile.name}` prints it from the installed package."]
    for link in contract.get("links", ()):
        out.append(f"- Public source: [{_cell(link.get('title', link['url']))}]({link['url']})")
    out += ["", f"{len(scenarios)} scenarios ({sum(1 for s in scenarios if s.open_question)} open questions).", ""]

    out += ["## How a call is answered", "",
            "A target runs each call and answers with its *normal form* (the cmd: protocol, "
            "docs/cmd-protocol.md, carries exactly this): `{\"output\": <JSON value>}` when the tool "
            "succeeded or returned a payload, or `{\"error\": {\"code\": <integer, string or null>, "
            "\"message\": <text>}}` when it failed; either may carry `\"events\": [...]`. "
            "A session is one scenario: its state (read set, counters) starts empty, and the workspace "
            "is an absolute folder already populated.", ""]

    out += ["## Tools", ""]
    for tool in profile.tools.values():
        out += [f"### `{tool.name}`", ""]
        if tool.summary:
            out += [tool.summary.strip(), ""]
        if tool.source:
            out += [f"Contract: {tool.source}.", ""]
        description = tool.arguments.get("description") if isinstance(tool.arguments, dict) else None
        out += ["**Arguments.** " + (description + " " if description else "") + _others_allowed(tool.arguments), ""]
        out += _properties_table(tool.arguments, what="argument") + [""] + _schema_block(tool.arguments) + [""]
        if tool.output is not None:
            desc = tool.output.get("description") if isinstance(tool.output, dict) else None
            out += ["**Output** (on success)." + (f" {desc.strip()}" if desc else ""), ""]
            table = _properties_table(tool.output, what="field")
            if isinstance(tool.output, dict) and tool.output.get("type") == "array":
                out += [f"An array of {_type_of(tool.output.get('items'))}:", ""]
                table = _properties_table(tool.output.get("items"), what="field of each item")
            if table:
                out += table + [""]
            out += _schema_block(tool.output) + [""]
        else:
            out += ["**Output.** The contract gives no shape.", ""]
        if tool.failure == "output":
            signal = ("**Failure** is not a protocol error: the call returns its payload (`output`) and "
                      + (", ".join(f"`{name}`" for name in tool.outcome) or "its fields")
                      + " say whether it worked and why not.")
        else:
            signal = ("**Failure** is an error: `{\"error\": {\"code\": ..., \"message\": ...}}`."
                      + (" On success the output's " + ", ".join(f"`{n}`" for n in tool.outcome)
                         + " is the success signal." if tool.outcome else ""))
        out += [signal, ""]
        content = tool.content
        if content.fields or content.lines is not None or content.entries is not None:
            parts = []
            if content.fields:
                parts.append("the output's " + ", ".join(f"`{n}`" for n in content.fields) + " (wherever they are)")
            if content.lines is not None:
                parts.append(f"its numbered lines, compared with each prefix (matched by `{content.lines.prefix}`) "
                             f"written `{content.lines.canonical.format(number=1)}`: the prefix is wording")
            if content.entries is not None:
                parts.append(f"the lines of its text that match `{content.entries.pattern}` (its entries, in their "
                             "order): every other line is wording")
            out += ["**Content** (the `content` aspect, docs/scenario-format.md#aspects): " + "; ".join(parts) + ".", ""]

    out += ["## Session options", ""]
    options = profile.options if isinstance(profile.options, dict) else {}
    table = _properties_table(options, what="option")
    if table:
        out += ["Given in a scenario's `options:` and handed to the target when the session opens "
                "(the cmd: protocol's `open` carries them).", ""] + table + [""]
    else:
        out += [(options.get("description") or "None.").strip(), ""]

    out += ["## Events", ""]
    if profile.events:
        out += [profile.events["summary"].strip()
                + (f" (contract: {profile.events['source']})" if profile.events.get("source") else ""), ""]
        if "schema" in profile.events:
            out += _schema_block(profile.events["schema"]) + [""]
    else:
        out += ["The contract defines none.", ""]

    out += ["## Error kinds", ""]
    if profile.errors:
        out += ["| kind | code | message | when | tools | contract |", "|---|---|---|---|---|---|"]
        for error in profile.errors:
            code = f"`{_json(error['code'])}`" if "code" in error else ""
            message = f"`{_cell(error['message'])}`" if error.get("message") else ""
            tools = ", ".join(error.get("tools", ())) or "all"
            out.append(f"| {_cell(error['kind'])} | {code} | {message} | {_cell(error['when'])} | {_cell(tools)} | "
                       f"{_cell(error.get('source', ''))} |")
        out.append("")
    else:
        out += ["The contract names none.", ""]

    out += _sections(profile, [s for s in scenarios if not s.open_question])
    questions = [s for s in scenarios if s.open_question]
    out += ["## Open questions", ""]
    if questions:
        out += ["Where the contract is silent or unsure, the catalog asserts nothing about the answer: it "
                "records what each target does (verdict `recorded`). Any answer passes.", ""]
        for scenario in sorted(questions, key=lambda s: s.id):
            out.append(f"- `{scenario.id}`: {_cell(scenario.open_question)}")
        out.append("")
    else:
        out += ["None.", ""]
    return "\n".join(out).rstrip() + "\n"


def _paths_text(paths: str) -> str:
    return {"absolute": "every path argument is absolute (the scenarios pass `${workspace}/...`).",
            "workspace-relative": "path arguments are relative to the workspace root; absolute ones are refused.",
            }.get(paths, "the contract does not say whether paths are absolute or relative.")


def _sections(profile: Profile, scenarios: list[Scenario]) -> list[str]:
    """Returns the sections part: each cited section, what it says (from profile.yaml when given),
    and the scenarios citing it with their titles."""
    said = {cite_key(section["cite"]): section for section in profile.sections}
    by_key: dict[str, list[Scenario]] = {}
    for scenario in scenarios:
        for key in citations(scenario, profile):
            # a numbered item (§7.4.1) goes under the section the profile restates (§7.4)
            while key not in said and re.fullmatch(r"\d+(?:\.\d+)+", key) and key.rsplit(".", 1)[0] in said:
                key = key.rsplit(".", 1)[0]
            # a heading cited without its parent ("Default Limits") goes to the one section it can be
            suffixed = [name for name in said if name.endswith(f"/ {key}")]
            if key not in said and len(suffixed) == 1:
                key = suffixed[0]
            if scenario not in by_key.setdefault(key, []):
                by_key[key].append(scenario)
    for key in said:
        by_key.setdefault(key, [])
    out = ["## The contract's sections and the scenarios that check them", ""]
    if not by_key:
        return out + ["No scenario yet.", ""]
    declared = list(said)
    for key in sorted(by_key, key=lambda k: (0, declared.index(k), ()) if k in said else (1, _sort_key(k))):
        section = said.get(key)
        heading = f"§{key}" if re.fullmatch(r"\d+(?:\.\d+)*", key) else key
        if section and section.get("title") and section["title"] != key:
            heading += f" {section['title']}"
        out += [f"### {heading}", ""]
        if section:
            out += [section["says"].strip(), ""]
        for scenario in sorted(by_key[key], key=lambda s: s.id):
            out.append(f"- {_cell(scenario.title)} (`{scenario.id}`)")
        out.append("")
    return out


def write_all(directory: Path, found: Iterable[Profile], scenarios: list[Scenario]) -> list[Path]:
    """Writes ``<directory>/<profile>.md`` for each profile; returns the paths written."""
    from harness.util.fileio import write_replacing
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for profile in found:
        path = directory / f"{profile.name}.md"
        write_replacing(path, render(profile, scenarios))
        written.append(path)
    return written

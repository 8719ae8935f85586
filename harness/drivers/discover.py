"""``harness discover TARGET [--profile P] [-o FILE]``: from an unknown MCP server to a first binding.

Starts the target, lists its tools with their arguments (from each tool's ``inputSchema``), and,
for a profile, writes a binding skeleton (docs/bindings.md) with best guesses: for each profile
tool the server tool whose name and arguments are most alike, for each profile argument the
server argument (top level, or inside an array or object argument: nesting) whose name is most
alike, constants for required arguments nothing maps to. Every guess is marked ``# check``; a
name that matched exactly is not a guess. Without ``--profile`` it names the profile whose tools
fit best.

Guessing is deliberately simple (name tokens, a few synonyms, ``difflib``'s ratio): it saves
typing, it does not replace reading the tool's documentation. What is left here is how to list and
guess; starting the server is the mcp: target's business.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.run.options import timeout_argument
from harness.util.fileio import write_replacing

#: Names that mean the same in file tools (each group is one meaning).
SYNONYMS: tuple[frozenset[str], ...] = (
    frozenset({"path", "file", "filepath", "filename", "file_path", "target", "uri"}),
    frozenset({"content", "contents", "text", "data", "body"}),
    frozenset({"old", "old_string", "old_str", "oldtext", "old_text", "search", "find", "original"}),
    frozenset({"new", "new_string", "new_str", "newtext", "new_text", "replacement"}),
    frozenset({"read", "get", "view", "cat", "open"}),
    frozenset({"write", "create", "save", "put"}),
    frozenset({"edit", "patch", "replace", "modify", "update", "block"}),
    frozenset({"offset", "start", "from_line", "start_line"}),
    frozenset({"limit", "length", "count", "lines"}),
    frozenset({"replace_all", "expected_replacements"}),
    frozenset({"sha256", "hash", "file_hash", "base_content_sha256", "checksum"}),
    frozenset({"paths", "files"}),
)
#: Words too common to relate two names by themselves (``replace_all`` is no ``new_text``).
GENERIC = frozenset({"file", "text", "all", "new", "old", "to", "from", "line", "lines", "content", "string", "str"})
#: What a profile tool of each kind is described with, and what a tool that does something else is.
KIND_WORDS = {
    "read": {"read", "reads", "contents", "content", "view", "show", "returns"},
    "write": {"write", "writes", "create", "creates", "overwrite", "overwrites", "save"},
    "edit": {"edit", "edits", "replace", "replaces", "modify", "substitute"},
}
OTHER_WORDS = {"metadata", "info", "information", "list", "listing", "search", "tree", "directory", "directories",
               "move", "rename", "delete", "size", "permissions", "stat"}
#: Below this score a guess is no guess: the skeleton says so instead of guessing.
THRESHOLD = 0.34


@dataclass
class ToolInfo:
    """One tool as the server lists it."""

    name: str
    description: str = ""
    schema: dict[str, Any] = field(default_factory=dict)

    @property
    def properties(self) -> dict[str, Any]:
        """Returns the top-level argument schemas."""
        props = self.schema.get("properties") if isinstance(self.schema, dict) else None
        return props if isinstance(props, dict) else {}

    @property
    def required(self) -> list[str]:
        """Returns the required top-level arguments."""
        req = self.schema.get("required") if isinstance(self.schema, dict) else None
        return [r for r in req if isinstance(r, str)] if isinstance(req, list) else []


def tokens(name: str) -> set[str]:
    """Returns a name's lower-case words (snake_case, camelCase, kebab-case)."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return {t for t in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if t}


def similarity(a: str, b: str) -> float:
    """Returns how alike two names are, 0..1: exact 1; same meaning (synonyms) high; shared words; spelling."""
    if a == b:
        return 1.0
    la, lb = a.lower(), b.lower()
    if la == lb:
        return 0.95
    for group in SYNONYMS:
        if la in group and lb in group:
            return 0.8
    ta, tb = tokens(a), tokens(b)
    shared = max(len(ta & tb) / len(ta | tb), 0.7 * len(ta & tb - GENERIC) / len(ta)) if ta and tb else 0.0
    related = 0.0
    for x in ta - GENERIC:
        for y in tb - GENERIC:
            if x != y and any(x in g and y in g for g in SYNONYMS):
                related = max(related, 0.5)
    spelling = difflib.SequenceMatcher(None, la, lb).ratio()
    return max(shared * 0.9, related * 0.9, spelling * 0.7)


# -- guessing -------------------------------------------------------------------------------------------


@dataclass
class Guess:
    """A profile tool's guessed mapping: the tool, per target argument a value spec, comments."""

    profile_tool: str
    tool: str | None
    score: float
    args: list[tuple[str, Any, str]] = field(default_factory=list)  # (target arg, value, comment)
    drop: list[str] = field(default_factory=list)


def _slots(tool: ToolInfo) -> list[tuple[tuple[Any, ...], str, dict[str, Any]]]:
    """Returns where a profile argument could go: top-level arguments, and the properties of an
    object argument or of the objects of an array argument (nesting), as (path, name, schema)."""
    out: list[tuple[tuple[Any, ...], str, dict[str, Any]]] = []
    for name, schema in tool.properties.items():
        schema = schema if isinstance(schema, dict) else {}
        out.append(((name,), name, schema))
        inner = schema.get("items") if schema.get("type") == "array" else schema if schema.get("type") == "object" else None
        if isinstance(inner, dict) and isinstance(inner.get("properties"), dict):
            for sub, sub_schema in inner["properties"].items():
                path = (name, 0, sub) if schema.get("type") == "array" else (name, sub)
                out.append((path, sub, sub_schema if isinstance(sub_schema, dict) else {}))
    return out


def _description_score(kind: str, tool: ToolInfo) -> float:
    """Returns -1..1: how far the tool's description says it does what a tool of ``kind`` does."""
    first = re.split(r"(?<=[.!?])\s", tool.description.strip(), maxsplit=1)[0].lower() if tool.description else ""
    words = set(re.findall(r"[a-z]+", first))
    score = 0.0
    if kind in KIND_WORDS and words & KIND_WORDS[kind]:
        score += 0.5
    if words & OTHER_WORDS and not (kind in KIND_WORDS and words & KIND_WORDS[kind] - {"returns", "content", "contents"}):
        score -= 0.5
    if "deprecated" in tool.description.lower():
        score -= 0.4
    return score


def candidates(profile_tool: str, profile_schema: dict[str, Any], tools: list[ToolInfo], count: int = 3) -> list[Guess]:
    """Returns up to ``count`` guesses for ``profile_tool``, best first (scores at or above THRESHOLD).

    The score weighs the tools' names (0.5), how many of the profile's arguments find a like
    argument (0.3), and what the description's first sentence says the tool does (0.2; a
    deprecated tool, or one that lists, searches or gives metadata, is marked down)."""
    from harness.drivers.discover_probe import kind_of
    kind = kind_of(profile_tool, profile_schema)
    profile_args = list((profile_schema.get("properties") or {}).keys())
    scored: list[Guess] = []
    for tool in tools:
        name_score = similarity(profile_tool, tool.name)
        arg_scores = [max((similarity(a, slot[1]) for slot in _slots(tool)), default=0.0) for a in profile_args]
        arg_score = sum(arg_scores) / len(arg_scores) if arg_scores else 0.0
        score = 0.5 * name_score + 0.3 * arg_score + 0.2 * _description_score(kind, tool)
        scored.append(Guess(profile_tool, tool.name, score))
    scored.sort(key=lambda g: -g.score)
    out: list[Guess] = []
    for guess in scored[:count]:
        if guess.score < THRESHOLD and out:
            break
        if guess.score < THRESHOLD and guess.score < THRESHOLD * 0.75:
            break
        tool = next(t for t in tools if t.name == guess.tool)
        _guess_args(guess, profile_schema, tool)
        out.append(guess)
    return out


def guess_tool(profile_tool: str, profile_schema: dict[str, Any], tools: list[ToolInfo]) -> Guess:
    """Returns the best guess for ``profile_tool`` among the server's ``tools``."""
    found = candidates(profile_tool, profile_schema, tools, 1)
    if not found or found[0].score < THRESHOLD:
        return Guess(profile_tool, None, found[0].score if found else 0.0)
    return found[0]


def _guess_args(guess: Guess, profile_schema: dict[str, Any], tool: ToolInfo) -> None:
    """Fills ``guess.args`` and ``guess.drop``: each profile argument to its most alike slot, once."""
    profile_args = list((profile_schema.get("properties") or {}).keys())
    slots = _slots(tool)
    pairs = sorted(((similarity(a, slot[1]), a, slot) for a in profile_args for slot in slots),
                   key=lambda item: -item[0])
    taken_args: set[str] = set()
    taken_paths: set[tuple[Any, ...]] = set()
    placed: dict[tuple[Any, ...], tuple[str, float]] = {}
    for score, arg, (path, _name, _schema) in pairs:
        if score < THRESHOLD or arg in taken_args or path in taken_paths:
            continue
        if any(p[: len(path)] == path or path[: len(p)] == p for p in taken_paths):
            continue  # a nested slot under a top-level one already taken (or the other way round)
        taken_args.add(arg)
        taken_paths.add(path)
        placed[path] = (arg, score)
    guess.drop = [a for a in profile_args if a not in taken_args]
    # Build each top-level argument: a name, or a nested list / object of names.
    for name, schema in tool.properties.items():
        schema = schema if isinstance(schema, dict) else {}
        if (name,) in placed:
            arg, score = placed[(name,)]
            value: Any = arg
            comment = "" if score == 1.0 else f"check: {arg} -> {name}"
            wanted = (profile_schema.get("properties") or {}).get(arg) or {}
            if wanted.get("type") == "boolean" and _type_of(schema) in ("integer", "number"):
                value = {"arg": arg, "default": False, "count": {True: 0, False: 1}}
                comment = f"check: the boolean {arg} onto the count {name} (false: 1; true: 0, which may mean nothing alike)"
            guess.args.append((name, value, comment))
            continue
        nested = {path[-1]: placed[path] for path in placed if path[0] == name and len(path) > 1}
        if nested:
            items = schema.get("items") if schema.get("type") == "array" else schema
            inner: dict[str, Any] = items if isinstance(items, dict) else {}
            required = [r for r in (inner.get("required") or []) if r not in nested]
            obj: dict[str, Any] = {key: arg for key, (arg, _score) in nested.items()}
            for key in required:
                obj[key] = _const_guess((inner.get("properties") or {}).get(key, {}))
            value = [obj] if schema.get("type") == "array" else obj
            names = ", ".join(f"{arg} -> {name}.{key}" for key, (arg, _s) in nested.items())
            guess.args.append((name, value, f"check: nested: {names}" + (
                f"; {', '.join(required)} required: a constant guessed" if required else "")))
        elif name in tool.required:
            guess.args.append((name, _const_guess(schema), "check: required by the tool, and no profile argument is like it"))


def _type_of(schema: dict[str, Any]) -> str:
    kind = schema.get("type") if isinstance(schema, dict) else None
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    return kind if isinstance(kind, str) else ""


def _value_guess(schema: dict[str, Any], depth: int = 0) -> Any:
    """Returns a plausible value for a required argument nothing maps to."""
    schema = schema if isinstance(schema, dict) else {}
    if "default" in schema:
        return schema["default"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    kind = _type_of(schema)
    description = str(schema.get("description", "")).lower()
    if kind == "integer" or kind == "number":
        if "1-based" in description or "one-based" in description:
            return 1
        return schema.get("minimum", 0)
    if kind == "array":
        items = schema.get("items")
        if isinstance(items, dict) and _type_of(items) == "object" and depth < 3:
            return [_value_guess(items, depth + 1)]
        return []
    if kind == "object":
        found = schema.get("properties")
        props: dict[str, Any] = found if isinstance(found, dict) else {}
        required = [r for r in schema.get("required") or [] if r in props]
        return {key: _value_guess(props[key], depth + 1) for key in required}
    empty = {"string": "", "boolean": False}
    return empty.get(kind)


def _const_guess(schema: dict[str, Any]) -> dict[str, Any]:
    """Returns a ``{const}`` placeholder for a required argument: its default, first enum value, an
    object or list holding what it requires (a line number a description calls 1-based is 1), or
    an empty value."""
    return {"const": _value_guess(schema)}


# -- writing --------------------------------------------------------------------------------------------


def _flow(value: Any) -> str:
    """Returns ``value`` as one line of YAML flow style (names plain where YAML allows it)."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_scalar(k)}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    return _scalar(value)


def _scalar(value: Any) -> str:
    if isinstance(value, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]*", value) and \
            value.lower() not in ("true", "false", "null", "yes", "no", "on", "off", "y", "n", "~"):
        return value
    return json.dumps(value, ensure_ascii=False)


def listing(tools: Iterable[ToolInfo]) -> list[str]:
    """Returns the server's tools, one line each, then one line per argument (type, required)."""
    out = []
    for tool in tools:
        description = " ".join(tool.description.split())
        out.append(f"{tool.name}" + (f": {description[:100]}" + ("..." if len(description) > 100 else "") if description else ""))
        for name, schema in tool.properties.items():
            schema = schema if isinstance(schema, dict) else {}
            kind = schema.get("type", "any")
            kind = "|".join(kind) if isinstance(kind, list) else str(kind)
            if isinstance(schema.get("enum"), list):
                kind += " " + "|".join(json.dumps(v) for v in schema["enum"][:8])
            mark = " (required)" if name in tool.required else ""
            out.append(f"  {name}: {kind}{mark}")
    return out


def skeleton(profile: str, guesses: list[Guess], tools: list[ToolInfo], target: str,
             outcomes: dict[str, Any] | None = None, header: bool = True) -> str:
    """Returns the binding skeleton as YAML text, the server's tools listed in comments at the top.

    With ``outcomes`` (harness/drivers/discover_probe.py), each tool carries what the experiments
    found: the evidence for the tool chosen, the candidates dropped and why, the output projection
    and failure signals they showed (each marked ``# probe: ...``)."""
    lines: list[str] = []
    if header:
        lines = [f"# A binding skeleton written by `harness discover` for profile {profile}.",
                 "# `# probe:` marks what a call in a scratch workspace showed; `# check:` what only names suggest:",
                 "# read the tool's documentation for those. Then run:",
                 "#   harness run --target '<target>' --binding <this file> --profile " + profile,
                 "# The server's tools:"]
        lines += [f"#   {line}" for line in listing(tools)]
    lines += ["binding: 1", f"profile: {profile}", f"target: {_scalar(target)}", "tools:"]
    for guess in guesses:
        outcome = (outcomes or {}).get(guess.profile_tool)
        lines.append(f"  {guess.profile_tool}:")
        if outcome is not None:
            lines += [f"    # {line}" for line in outcome.evidence]
            lines += [f"    # dropped {line}" for line in outcome.rejected]
        if guess.tool is None:
            offered = ", ".join(t.name for t in tools) or "none"
            why = ("no candidate passed the probe" if outcome is not None and outcome.rejected
                   else f"no tool is like it (offered: {offered})")
            lines.append(f"    tool: {_scalar(guess.profile_tool)}  # check: {why}: left unbound, its scenarios are skipped")
            continue
        exact = guess.tool == guess.profile_tool
        probed = outcome is not None and outcome.chosen is guess and any(e.startswith("probe:") for e in outcome.evidence)
        lines.append(f"    tool: {_scalar(guess.tool)}" + ("" if exact or probed else f"  # check: {guess.score:.2f} alike"))
        if guess.args:
            lines.append("    args:")
            for name, value, comment in guess.args:
                if outcome is not None and outcome.offset_add is not None and value == "offset":
                    value, comment = {"arg": "offset", "add": outcome.offset_add}, "probe: the tool counts lines from 0"
                lines.append(f"      {_scalar(name)}: {_flow(value)}" + (f"  # {comment}" if comment else ""))
        if guess.drop:
            lines.append(f"    drop: {_flow(guess.drop)}  # check: the tool takes nothing like these")
        if outcome is None:
            continue
        if outcome.output:
            lines.append(f"    output: {_scalar(outcome.output)}  # {outcome.output_evidence}")
        elif outcome.output_evidence:
            lines.append(f"    # {outcome.output_evidence}")
        if outcome.signals or outcome.codes or outcome.message:
            lines.append("    failure:")
            lines.append(f"      # {outcome.failure_evidence}")
            if outcome.signals:
                lines.append(f"      signals: {_flow(outcome.signals)}")
            if outcome.message:
                lines.append(f"      message: {_scalar(outcome.message)}")
            if outcome.codes:
                lines.append("      codes:")
                for entry in outcome.codes:
                    lines.append(f"        - {{match: {_scalar(entry['match'])}, code: {entry['code']}}}  # {entry['why']}")
        elif outcome.failure_evidence:
            lines.append(f"    # {outcome.failure_evidence}")
    return "\n".join(lines) + "\n"


# -- the command ------------------------------------------------------------------------------------------


def profile_tools(profile: str) -> dict[str, dict[str, Any]]:
    """Returns the profile's tools and their argument schemas (empty for an unknown profile)."""
    from harness.scenario import profiles
    found = profiles.builtin().get(profile)
    return {name: tool.arguments for name, tool in found.tools.items()} if found else {}


def known_profiles() -> list[str]:
    """Returns the profiles a skeleton can be written for (the built-in ones)."""
    from harness.scenario import profiles
    return list(profiles.builtin())


def discover_tools(spec: str, timeout: float) -> tuple[list[ToolInfo], str]:
    """Starts the target and returns its tools and its name; raises ValueError or TargetError."""
    from harness.run import assemble
    from harness.run.options import RunOptions
    from harness.targets.mcp.target import McpTarget
    target = assemble.target(spec, RunOptions(targets=(spec,), timeout=timeout))
    if not isinstance(target, McpTarget):
        target.stop()
        raise ValueError(f"discover lists the tools of an MCP server (mcp:<command line> or mcp+http://...); "
                         f"{spec!r} is no MCP server: a cmd: adapter takes the profile's own tool names")
    try:
        info = target.start()
        offered = target.offered
    finally:
        target.stop()
    tools = [ToolInfo(name, getattr(tool, "description", None) or "", _schema(tool)) for name, tool in sorted(offered.items())]
    return tools, f"{info.name} {info.version}".strip()


def _schema(tool: Any) -> dict[str, Any]:
    schema = getattr(tool, "input_schema", None)
    return schema if isinstance(schema, dict) else {}


#: A profile whose tools match the server's this well on average fits; below it, none does.
FIT = 0.45


def best_profile(tools: list[ToolInfo]) -> list[tuple[float, str]]:
    """Returns the profiles by how well their tools find a match on the server, best first.

    A profile tool without any candidate counts 0, so a profile the server covers only in part
    ranks below one it covers whole."""
    ranked = []
    for profile in known_profiles():
        wanted = profile_tools(profile)
        if not wanted:
            continue
        scores = []
        for name, schema in wanted.items():
            found = candidates(name, schema, tools, 1)
            scores.append(found[0].score if found and found[0].score >= THRESHOLD else 0.0)
        ranked.append((sum(scores) / len(scores), profile))
    return sorted(ranked, reverse=True)


def draft(profile: str, tools: list[ToolInfo], target: str, chosen: dict[str, Guess],
          outcomes: dict[str, Any] | None = None, header: bool = False) -> str:
    """Returns the binding text for ``chosen`` (profile tool -> Guess); tools without one are left out."""
    guesses = [chosen[name] for name in profile_tools(profile) if name in chosen]
    return skeleton(profile, guesses, tools, target, outcomes, header=header)


def probe(spec: str, profile_name: str, tools: list[ToolInfo], target: str, timeout: float) -> tuple[list[Guess], dict[str, Any]]:
    """Runs the experiments (harness/drivers/discover_probe.py); returns the chosen guesses and outcomes."""
    from harness.drivers import discover_probe
    from harness.scenario import profiles
    profile = profiles.builtin()[profile_name]
    options = {name: candidates(name, schema, tools) for name, schema in profile_tools(profile_name).items()}
    lab = discover_probe.Lab(spec, profile, timeout)
    try:
        outcomes = discover_probe.run_experiments(
            lab, options, lambda chosen, found: draft(profile_name, tools, target, chosen, found),
            {tool.name: tool.schema for tool in tools})
    finally:
        scratch = str(lab.scratch)
        lab.close()
    for outcome in outcomes.values():  # the scratch folder is gone: say where it was, not its random name
        outcome.evidence = [line.replace(scratch, "<scratch>") for line in outcome.evidence]
        outcome.rejected = [line.replace(scratch, "<scratch>") for line in outcome.rejected]
        outcome.output_evidence = outcome.output_evidence.replace(scratch, "<scratch>")
        outcome.failure_evidence = outcome.failure_evidence.replace(scratch, "<scratch>")
        for entry in outcome.codes:
            entry["why"] = entry["why"].replace(scratch, "<scratch>")
    guesses = []
    for name in profile_tools(profile_name):
        outcome = outcomes[name]
        guesses.append(outcome.chosen if outcome.chosen is not None else Guess(name, None, 0.0))
    return guesses, outcomes


def add_parser(sub: Any) -> None:
    """Adds the ``discover`` subcommand."""
    parser = sub.add_parser("discover", help="list an MCP server's tools and write a binding draft for a profile, "
                                             "tried by a few calls in a scratch workspace")
    parser.add_argument("target", metavar="TARGET", help="mcp:<command line> or mcp+http://<url>")
    parser.add_argument("--profile", help="write a binding draft for this profile")
    parser.add_argument("-o", "--output", type=Path, metavar="FILE", help="write the draft to FILE (default: standard output)")
    parser.add_argument("--no-probe", dest="probe", action="store_false",
                        help="guess from names only: call no tool (the draft's guesses are then all `# check`)")
    parser.add_argument("--timeout", type=timeout_argument, default=30.0, help="seconds the server may take to start (default 30)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Runs ``harness discover``; returns the exit code (0, 1 when the server cannot be started, 2 for bad usage)."""
    from harness.targets.base import TargetError
    if args.profile and args.profile not in known_profiles():
        print(f"error: unknown profile {args.profile!r} (known: {', '.join(known_profiles())})", file=sys.stderr)
        return 2
    try:
        tools, name = discover_tools(args.target, args.timeout)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except TargetError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if not args.profile:
        print(f"{name}: {len(tools)} tool(s)")
        for line in listing(tools):
            print(line)
        ranked = best_profile(tools)
        if ranked:
            print("\nprofiles by fit: " + ", ".join(f"{p} {s:.2f}" for s, p in ranked))
            if ranked[0][0] < FIT:
                print(f"no profile fits: the best, {ranked[0][1]}, scores {ranked[0][0]:.2f} (a fit is {FIT:.2f} or more); "
                      "its tools have few counterparts here")
            else:
                print(f"write a binding with: harness discover '{args.target}' --profile {ranked[0][1]} -o binding.yaml")
        return 0
    if getattr(args, "probe", True):
        try:
            guesses, outcomes = probe(args.target, args.profile, tools, name, args.timeout)
        except TargetError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
    else:
        guesses = [guess_tool(tool, schema, tools) for tool, schema in profile_tools(args.profile).items()]
        outcomes = None
    text = skeleton(args.profile, guesses, tools, name, outcomes)
    if args.output:
        write_replacing(args.output, text)
        print(f"{name}: {len(tools)} tool(s)")
        for line in listing(tools):
            print(line)
        print(f"\nwrote {args.output}: {sum(g.tool is not None for g in guesses)} of {len(guesses)} "
              f"{args.profile} tools bound; check every line marked `# check`")
    else:
        sys.stdout.write(text)
    return 0

"""The mutation report (``docs/mutation.md``) and the survivor classes of ``docs/mutation-classes.yaml``.

harness/drivers/mutation.py runs the mutants; this module classifies each survivor (equivalent,
wording-only, open-question, not-reached, killed-by), works out the two scores and writes the report.
"""

from __future__ import annotations

import fnmatch
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

STOPPED = (". The run was stopped before the end: the mutants run are a pseudo-random sample of every module "
           "(a fixed order by hash); `make mutation` resumes where it stopped. The time is the mutants' own "
           "run time shared by the jobs (a stopped run keeps no wall clock).")


def diff_of(name: str) -> str:
    """Returns mutmut's diff for one mutant (the changed lines only)."""
    import mutmut.__main__ as mm
    from mutmut.mutation.diff_apply import get_diff_for_mutant
    try:
        found = mm.find_mutant(name)
        text = get_diff_for_mutant(name, path=found.path)
    except Exception as exc:  # noqa: BLE001 - a diff that cannot be shown is reported as such
        return f"(no diff: {exc})"
    return "\n".join(line for line in text.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---"))


NOT_REACHED = 33  # mutmut's "no tests": no scenario enters the mutated function


def status(code: int) -> str:
    """Returns mutmut's word for an exit code (a mutant no scenario reaches is a survivor)."""
    return {0: "survived", 1: "killed", 36: "timeout", NOT_REACHED: "survived"}.get(code, "killed")


def load_classes(path: Path) -> list[dict[str, Any]]:
    """Returns the survivor classes (a list of {mutants, class, why, ...}) from YAML, or none."""
    import yaml
    if not path.exists():
        return []
    text = path.read_text("utf-8")
    classes = yaml.safe_load(text) or []
    check_classes(classes, str(path))
    node = yaml.compose(text)
    if node is not None and isinstance(node, yaml.SequenceNode):  # where each entry starts, for the report
        for entry, item in zip(classes, node.value):
            entry["_line"] = item.start_mark.line + 1
    return classes


CLASSES = ("equivalent", "wording-only", "open-question", "not-reached", "killed-by")


def check_classes(classes: list[dict[str, Any]], where: str) -> None:
    """Raises ValueError for an entry with an unknown class, or a ``wording-only`` entry without
    ``wording: true`` (the class may only take mutants whose change is inside string literals)."""
    for index, entry in enumerate(classes):
        kind = entry.get("class") if isinstance(entry, dict) else None
        if kind not in CLASSES:
            raise ValueError(f"{where}: entry {index + 1}: `class` must be one of {', '.join(CLASSES)}, not {kind!r}")
        if kind == "wording-only" and entry.get("wording") is not True:
            raise ValueError(f"{where}: entry {index + 1}: a wording-only entry must say `wording: true` "
                             f"(it may only take mutants that change the text inside string literals)")


def classify(name: str, classes: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Returns the first class whose ``mutants`` patterns match ``name`` and whose ``change`` regex
    (if any) is found in the mutant's diff."""
    import re
    for entry in classes:
        patterns = entry.get("mutants", "*")
        patterns = patterns if isinstance(patterns, list) else [patterns]
        if not any(fnmatch.fnmatch(name, pattern) for pattern in patterns):
            continue
        if "change" in entry and not re.search(entry["change"], _diff_cached(name)):
            continue
        if entry.get("wording") and not wording_only(_diff_cached(name)):
            continue
        return entry
    return None


def _literal_shape(literal: str) -> str:
    """What of a string literal is code: nothing for a plain string, the replacement fields of an
    f-string (a changed ``{key}`` is a changed lookup, not wording)."""
    import re
    prefix = re.sub(r"[^A-Za-z].*", "", literal, flags=re.DOTALL).lower()  # its leading letters
    return "|".join(re.findall(r"\{[^{}]*\}", literal)) if "f" in prefix else ""


#: Tokens beside a string literal that make its text data, not wording: a comparison, a lookup, a key.
_DATA_BEFORE = {"==", "!=", "in", "is", "[", "<", ">", "<=", ">="}
_DATA_AFTER = {"==", "!=", "in", "is", "]", ":", "<", ">", "<=", ">="}


def wording_only(diff: str) -> bool:
    """True when a mutant changes only the text inside string literals (the wording of a message):
    the removed and added lines are the same tokens but for the contents of their strings. A
    literal replaced by ``None``, an argument dropped or a name changed is not wording, nor is a
    literal that is compared, looked up or used as a key (``op == "open"``, ``d["k"]``, ``{"k": v}``):
    its text is data the code acts on."""
    import io
    import tokenize
    removed = [line[1:] for line in diff.splitlines() if line.startswith("-")]
    added = [line[1:] for line in diff.splitlines() if line.startswith("+")]
    if not removed or len(removed) != len(added):
        return False

    def shape(line: str) -> list[tuple[int, str]] | None:
        try:
            tokens = list(tokenize.generate_tokens(io.StringIO(line.strip() + "\n").readline))
        except (tokenize.TokenError, IndentationError, SyntaxError):
            return None
        tokens = [t for t in tokens
                  if t.type not in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER, tokenize.COMMENT)]
        out = []
        for number, token in enumerate(tokens):
            if token.type != tokenize.STRING:
                out.append((token.type, token.string))
                continue
            before = tokens[number - 1].string if number else ""
            after = tokens[number + 1].string if number + 1 < len(tokens) else ""
            acted_on = before in _DATA_BEFORE or after in _DATA_AFTER
            out.append((token.type, token.string if acted_on else _literal_shape(token.string)))
        return out

    for before, after in zip(removed, added):
        a, b = shape(before), shape(after)
        if a is None or b is None or a != b or before == after:
            return False
    return True


_DIFFS: dict[str, str] = {}


def _diff_cached(name: str) -> str:
    if name not in _DIFFS:
        _DIFFS[name] = diff_of(name)
    return _DIFFS[name]


def score_figures(totals: Counter[str], open_questions: int) -> dict[str, Any]:
    """Returns the scores from the counts of a run.

    ``strict``: killed (also killed since and timed out) of every mutant that is not an equivalent
    survivor. ``contract``: the same with the wording-only survivors left out like the equivalent
    ones (no conformant test can tell them from the reference). ``seeds_fix``: with the survivors on
    an open question left out too (a figure, not a score).
    """
    caught = totals["killed"] + totals["killed since"] + totals["timeout"]
    strict_base = caught + totals["survived"] - totals["equivalent"]
    contract_base = strict_base - totals["wording-only"]
    seeds_base = contract_base - open_questions

    def percent(base: int) -> float:
        return 100.0 * caught / base if base else 100.0

    return {"strict": percent(strict_base), "contract": percent(contract_base), "seeds_fix": percent(seeds_base),
            "wording": totals["wording-only"], "open_questions": open_questions}


def exclusions(root: Path = Path(".")) -> str:
    """Returns the sentence that names what is not mutated: the files pyproject's ``do_not_mutate``
    lists, and the lines of ``reference_impl/`` that carry ``# pragma: no mutate`` (each with the
    reason its comment gives)."""
    import tomllib
    config = tomllib.loads((root / "pyproject.toml").read_text("utf-8")).get("tool", {}).get("mutmut", {})
    files = ", ".join(f"`{name}`" for name in config.get("do_not_mutate", [])) or "none"
    lines = []
    for path in sorted((root / "reference_impl").rglob("*.py")):
        for number, line in enumerate(path.read_text("utf-8").splitlines(), start=1):
            if "pragma: no mutate" in line:
                lines.append(f"`{path.relative_to(root)}:{number}` ({line.split('#', 1)[-1].strip()})")
    pragmas = "; ".join(lines) if lines else "none"
    return (f"Not mutated: the files {files} (pyproject `do_not_mutate`: transports, never reached by the "
            f"in-process reference); lines excluded with `# pragma: no mutate`: {pragmas}.")


def survivor_class(name: str, result: dict[str, Any], classes: list[dict[str, Any]]) -> tuple[str, dict[str, Any] | None]:
    """Returns the class of one survivor and the entry that gives it: ``not-reached`` for a mutant no
    scenario reaches (whatever an entry says: nothing ran, so nothing can show it equivalent; a
    ``not-reached`` entry gives the reason), ``killed-by`` for one a rerun killed, ``unclassified`` (a
    gap) when no entry takes it, or when the entry is ``killed-by`` (that scenario no longer kills
    it) or ``not-reached`` (a scenario does reach it); otherwise the entry's class."""
    if result.get("killed_since"):
        return "killed-by", {"class": "killed-by", "scenario": result["killed_since"]}
    entry = classify(name, classes)
    if result["code"] == NOT_REACHED:
        return "not-reached", entry if entry and entry["class"] == "not-reached" else None
    if entry and entry["class"] == "killed-by":
        return "unclassified", {"class": "unclassified",
                                "why": f"survived this run, though classified as killed by {entry.get('scenario', '?')}"}
    if entry and entry["class"] == "not-reached":
        return "unclassified", {"class": "unclassified",
                                "why": f"classified as not reached, but a scenario reaches it ({entry.get('why', '')})"}
    return (entry["class"], entry) if entry else ("unclassified", None)


def stale_entries(results: dict[str, dict[str, Any]], classes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Returns the class entries that take no survivor of ``results`` (each survivor goes to the first
    entry that matches it): left over from mutants that a scenario kills now, or that changed."""
    used = set()
    for name, result in results.items():
        if name == "__run__" or status(result["code"]) != "survived" or result.get("killed_since"):
            continue
        entry = classify(name, classes)
        if entry is not None:
            used.add(id(entry))
    return [entry for entry in classes if id(entry) not in used]


def render(results: dict[str, dict[str, Any]], names_by_file: dict[str, list[str]], classes: list[dict[str, Any]],
           seconds: float, jobs: int, excluded: str | None = None, classes_path: str = "docs/mutation-classes.yaml") -> str:
    """Returns docs/mutation.md (``excluded``: the sentence of :func:`exclusions`, shown under the timing)."""
    rows = []
    totals: Counter[str] = Counter()
    by_class: dict[str, list[tuple[str, dict[str, Any] | None]]] = defaultdict(list)
    for path, names in sorted(names_by_file.items()):
        counts: Counter[str] = Counter()
        for n in names:
            if n not in results:
                continue
            word = status(results[n]["code"])
            if word == "survived" and results[n].get("killed_since"):
                word = "killed since"
            counts[word] += 1
            if word not in ("survived", "killed since"):
                continue
            kind, entry = survivor_class(n, results[n], classes)
            by_class[kind].append((n, entry))
            if kind == "not-reached":
                counts["not reached"] += 1
            if kind in ("equivalent", "wording-only"):
                counts[kind] += 1
        totals.update(counts)
        rows.append((path, len(names), counts))
    open_names = [n for n, _ in by_class.get("open-question", [])]
    worded_names = [n for n, _ in by_class.get("wording-only", [])]
    figures = score_figures(totals, open_questions=len(open_names))
    # Detected: killed (timed out, killed since), or a survivor that changes a committed snapshot of the
    # reference (an open question answered differently, a message worded otherwise): a target behaving
    # like the mutant shows as a changed snapshot in review, though no expectation fails.
    caught = totals["killed"] + totals["killed since"] + totals["timeout"]
    changed_snapshot = sum(1 for n in open_names + worded_names if results[n].get("recorded_by"))
    non_equivalent = caught + totals["survived"] - totals["equivalent"]
    detected = 100.0 * (caught + changed_snapshot) / non_equivalent if non_equivalent else 100.0
    gaps = len(by_class.get("unclassified", []))
    not_reached = totals["not reached"]
    recorded = sum(1 for n in open_names if results[n].get("recorded_by"))
    unrecorded = sum(1 for n in open_names if results[n].get("recorded_by") == "")
    unchecked = len(open_names) - recorded - unrecorded
    everything = sum(len(v) for v in names_by_file.values())
    ran = sum(1 for names in names_by_file.values() for n in names if n in results)
    wording, open_questions = figures["wording"], figures["open_questions"]
    out = [
        "# Mutation testing of the reference",
        "",
        "Generated by `make mutation` (mutmut 3 makes the mutants of `reference_impl/`; the catalog, run",
        "in-process on the mutated reference, is the test suite: the scenarios that enter the mutated",
        "function, stopping at the first that fails). Survivors are classified in",
        "`docs/mutation-classes.yaml`; a survivor no class names is a gap in the catalog.",
        "The reference is held to what every target is: it answers in the normal form of docs/cmd-protocol.md",
        "(a tool error has a `code` and a `message` that is a string) and acts only inside the folder around its",
        "workspace (harness/containment/audit_hook.py); a mutant that breaks either fails its scenario as a wrong answer does.",
        "",
        f"Measured: {ran} of {everything} mutants run, in {seconds / 60:.1f} minutes with {jobs} mutants at a time, "
        "on a machine shared with other work (its load varies)" + (STOPPED if ran < everything else "."),
        "",
        *([excluded, ""] if excluded else []),
        "| of the non-equivalent mutants | count | share |",
        "|---|---:|---:|",
        f"| killed (also timed out and killed since) | {caught} | {figures['strict']:.1f}% |",
        f"| detected: killed, or changing a committed snapshot of the reference | {caught + changed_snapshot} | {detected:.1f}% |",
        f"| survived without changing any snapshot (gaps, not recorded, not reached) | "
        f"{non_equivalent - caught - changed_snapshot} | {100.0 - detected:.1f}% |",
        f"| equivalent (not counted) | {totals['equivalent']} | |",
        f"| not reached (counted as survivors) | {not_reached} | |",
        "",
        f"**Detected: {detected:.1f}%** of the non-equivalent mutants: killed ({caught}), or surviving but changing a",
        f"committed snapshot ({changed_snapshot}: an open question answered otherwise, a message worded otherwise), so a",
        "target that behaved like the mutant shows as a changed snapshot in review. The goal is 98%.",
        "",
        f"**Score (strict): {figures['strict']:.1f}%** of the non-equivalent mutants killed (a timed-out mutant counts",
        "as killed: the catalog noticed it never finished; *killed since* are survivors of the full run that a",
        "scenario added afterwards kills). The goal is 95%. Every survivor that is not equivalent counts",
        f"against this score: also the {wording} wording-only ones, the {open_questions} on an open question and the "
        f"{not_reached} not reached.",
        "",
        f"**Score under the contract: {figures['contract']:.1f}%**: the same, with the {wording} wording-only",
        "survivors counted with the equivalent ones. Each of them changes nothing but the text of a message whose",
        "wording the seed leaves free (the section is named for each), so no conformant implementation can be",
        "told from it and no conformant test may kill it. This is not the strict score.",
        "",
        f"The {open_questions} survivors on an open question change a behaviour the seed does not settle (each",
        "names the seed section; the catalog records these and must not assert them); they count against",
        f"both scores. {gaps} survivors are gaps: the seed fixes what they change and no scenario checks it.",
        f"{not_reached} survivors are *not reached*: no scenario enters the function they mutate, so nothing ran",
        "them and nothing shows them equivalent; they count against both scores.",
        f"Of the mutants that change only what the seeds fix, {figures['seeds_fix']:.1f}% are killed (this third",
        "figure leaves the open questions out too; it is not a score).",
        "",
        f"**Recorded open questions: {recorded} of {open_questions}** survivors on an open question are recorded: an open",
        "scenario that reaches the mutated function observes, under the mutant, something other than the",
        "reference's committed snapshot (`snapshots/reference/`), so a target that behaved like the mutant would",
        f"show as a changed answer to that open question. {unrecorded} are not recorded (no open scenario's",
        "observation changes: marked *not recorded* below)" + (f"; {unchecked} were not checked." if unchecked else ".") +
        " A snapshot is the reference's own output, not the contract: a recorded mutant is not killed, and this",
        "figure changes no score.",
        "",
        "| module | mutants | killed | killed since | survived | of them not reached | timed out "
        "| of the survivors: equivalent | wording-only |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for path, total, counts in rows:
        out.append(f"| `{path}` | {total} | {counts['killed']} | {counts['killed since']} | {counts['survived']} | "
                   f"{counts['not reached']} | {counts['timeout']} | {counts['equivalent']} | {counts['wording-only']} |")
    out.append(f"| all | {sum(r[1] for r in rows)} | {totals['killed']} | {totals['killed since']} | "
               f"{totals['survived']} | {not_reached} | {totals['timeout']} | {totals['equivalent']} | "
               f"{wording} |")
    out += ["", "## Survivors", ""]
    titles = {"equivalent": "Equivalent (no scenario can tell them apart: the behaviour is the same)",
              "wording-only": "Wording only (the text of a message the seed leaves free; counted against the strict "
                              "score, with the equivalent ones under the contract)",
              "open-question": "On an open question of the seed (the catalog records, it does not assert)",
              "not-reached": "Not reached (no scenario enters the mutated function; counted against both scores)",
              "killed-by": "Killed since by a new scenario (named)",
              "unclassified": "Gaps in the catalog (no class: the seed fixes what they change, no scenario checks it)"}
    for kind in ("unclassified", "open-question", "not-reached", "wording-only", "equivalent", "killed-by"):
        entries = by_class.get(kind)
        if not entries:
            continue
        recording = kind == "open-question"
        out += [f"### {titles[kind]}: {len(entries)}", "",
                "| mutant | change | why |" + (" recorded by |" if recording else ""),
                "|---|---|---|" + ("---|" if recording else "")]
        for name, entry in entries:
            change = _diff_cached(name).replace("|", "\\|").replace("\n", "<br>")
            if len(change) > 300:
                change = change[:300] + " …"
            why = (entry or {}).get("why", "")
            if kind == "not-reached" and not why:
                why = "no scenario enters the function (no class entry gives the reason)"
            if entry and entry.get("scenario"):
                why = f"{why} ({entry['scenario']})" if why else entry["scenario"]
            row = f"| `{name.split('.', 1)[1]}` | `{change}` | {why.replace('|', '/')} |"
            if recording:
                found = results[name].get("recorded_by")
                row += f" {f'`{found}`' if found else ('*not recorded*' if found == '' else '(not checked)')} |"
            out.append(row)
        out.append("")
    if ran == everything:
        stale = stale_entries(results, classes)
        out += ["## Class entries that take no survivor", ""]
        if stale:
            out += [f"{len(stale)} entries of `{classes_path}` take no survivor of this run (a scenario kills their "
                    "mutants now, or the code changed): they are stale and should go.", "",
                    "| line | class | mutants | change |", "|---:|---|---|---|"]
            for entry in stale:
                patterns = entry.get("mutants", "*")
                patterns = patterns if isinstance(patterns, list) else [patterns]
                shown = ", ".join(f"`{p.split('.', 1)[-1]}`" for p in patterns).replace("|", "\\|")
                change = f"`{entry['change']}`".replace("|", "\\|") if entry.get("change") else ""
                out.append(f"| {entry.get('_line', '?')} | {entry['class']} | {shown} | {change} |")
        else:
            out.append(f"None: every entry of `{classes_path}` takes at least one survivor of this run.")
        out.append("")
    return "\n".join(out) + "\n"

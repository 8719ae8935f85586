"""The figures of the findings pages are the captures' (python -m harness.drivers.figures), and agree
with the committed snapshots.

Example: docs/real-world.md's row for desktop-commander says 69 pass, 18 fail, 36 recorded: the
folder snapshots/mcp-desktop-commander/ must then hold 123 snapshots of claude-code scenarios, and
the catalog 134 claude-code scenarios; a recapture that changed them and a page left as it was fail.
"""

from __future__ import annotations

import json
from pathlib import Path

from harness.drivers import figures
from harness.record import snapshot as snap
from harness.scenario import catalog

ROOT = Path(__file__).resolve().parents[1]
PAGES = ("docs/real-world.md", "docs/gemini-cli-findings.md", "docs/acp-findings.md")


def problems(root: Path, pages=PAGES) -> list[str]:
    """Returns where a page's figures differ from what its snapshots and the catalog say."""
    cat = catalog.load([root / "scenarios"])
    out = []
    for page in pages:
        text = (root / page).read_text("utf-8")
        found = figures.blocks(text)
        if not found or text.count("<!-- figures: ") != len(found):
            out.append(f"{page}: no figures block, or one not closed")
        for block in found:
            select = tuple(block["select"].split(",")) if block["select"] else ()
            rows = figures.parse(block["body"])
            if not rows:
                out.append(f"{page}: the block of {block['name']} holds no figures (run its capture)")
            for row in rows:
                where = f"{page}: {block['name']}, {row['profile']}"
                ids = [s.id for s in cat.scenarios if s.profile == row["profile"] and (not select or s.id.startswith(select))]
                held = [i for i in snap.folder_ids(root / row["snapshots"])
                        if i.startswith(row["profile"] + "/") and (not select or i.startswith(select))]
                counted = sum(row[v] for v in figures.VERDICTS)
                if row["scenarios"] != counted:
                    out.append(f"{where}: {row['scenarios']} scenarios, but the verdicts add up to {counted}")
                if row["scenarios"] != len(ids):
                    out.append(f"{where}: {row['scenarios']} scenarios, the catalog has {len(ids)}")
                recorded = row["pass"] + row["fail"] + row["recorded"]
                if recorded != len(held):
                    out.append(f"{where}: pass + fail + recorded = {recorded}, {row['snapshots']} holds {len(held)} "
                               "snapshots")
    return out


def test_the_findings_figures_agree_with_the_snapshots_and_the_catalog() -> None:
    found = problems(ROOT)
    assert not found, "figures out of date (rerun the capture, which writes them):\n" + "\n".join(found)


def test_a_block_is_written_from_the_report_and_a_stale_one_is_found(tmp_path: Path) -> None:
    results = [{"id": f"p/s{n}", "profile": "p", "verdict": verdict, "aspects": {"effects": judged, "outcome": "pass",
                                                                               "output": "n/a"}}
               for n, (verdict, judged) in enumerate([("pass", "pass"), ("fail", "fail"), ("skip", "n/a")])]
    (tmp_path / "run.json").write_text(json.dumps({"results": results}), "utf-8")
    page = "intro\n<!-- figures: run snapshots=x -->\nold\n<!-- /figures -->\nend\n"
    text = figures.update(page, tmp_path)
    assert text.startswith("intro\n<!-- figures: run snapshots=x -->\n| capture |") and text.endswith("<!-- /figures -->\nend\n")
    assert "| `run` | `snapshots/x` | `p` | 3 | 1 | 1 | 0 | 1 | 0 | 50% | 100% | – |" in text
    assert figures.parse(figures.blocks(text)[0]["body"])[0]["fail"] == 1
    # The real page with one figure changed by hand: found.
    (tmp_path / "docs").mkdir()
    import shutil
    (tmp_path / "scenarios").symlink_to(ROOT / "scenarios")
    for folder in ("mcp-secure-filesystem-server", "mcp-mcp-text-editor", "mcp-desktop-commander"):
        shutil.copytree(ROOT / "snapshots" / folder, tmp_path / "snapshots" / folder)  # a linked folder is not walked
    page = (ROOT / "docs" / "real-world.md").read_text("utf-8")
    row = figures.parse(figures.blocks(page)[-1]["body"])[0]
    old = f"| {row['scenarios']} | {row['pass']} | {row['fail']} |"
    (tmp_path / "docs" / "real-world.md").write_text(page.replace(old, f"| {row['scenarios']} | {row['pass'] - 1} | {row['fail'] + 1} |"), "utf-8")
    assert problems(tmp_path, ("docs/real-world.md",)) == []  # the counts still add up and match the snapshots
    (tmp_path / "docs" / "real-world.md").write_text(page.replace(old, f"| {row['scenarios']} | {row['pass'] - 1} | {row['fail']} |"), "utf-8")
    assert problems(tmp_path, ("docs/real-world.md",)) == [
        f"docs/real-world.md: capture-desktop-commander, claude-code: {row['scenarios']} scenarios, but the verdicts add up "
        f"to {row['scenarios'] - 1}",
        f"docs/real-world.md: capture-desktop-commander, claude-code: pass + fail + recorded = "
        f"{row['pass'] + row['fail'] + row['recorded'] - 1}, snapshots/mcp-desktop-commander holds "
        f"{row['pass'] + row['fail'] + row['recorded']} snapshots"]


def report_problems(root: Path, page: str = "docs/claude-code-report.md") -> list[str]:
    """Returns where the claude-code report's table differs from the catalog and the snapshots: each
    run's scenarios are the catalog's (seed 001's and the captured ones), and each run's folder
    holds at least pass + fail + recorded snapshots of them (the --run-as run adds the ones the main
    run skipped)."""
    from harness.drivers.capture_claude_code import findings
    from harness.targets.claude_code import PROFILES
    cat = catalog.load([root / "scenarios"])
    mine = [{"id": s.id, "source": s.source} for s in cat.scenarios if s.profile in PROFILES]
    groups = {"seed 001": {r["id"] for r in mine if not findings.is_captured(r)},
              "captured": {r["id"] for r in mine if findings.is_captured(r)}}
    out = []
    rows = [line for line in (root / page).read_text("utf-8").splitlines() if line.startswith("| `")]
    if not rows:
        out.append(f"{page}: no table of runs")
    for line in rows:
        cells = [cell.strip().strip("`") for cell in line.strip().strip("|").split("|")]
        run, group, numbers = cells[0], cells[1], [int(cell) for cell in cells[2:8]]
        ids = groups.get(group, set())
        held = set(snap.folder_ids(root / "snapshots" / run)) & ids
        if numbers[5] != len(ids) or sum(numbers[:5]) != numbers[5]:
            out.append(f"{page}: {run} {group}: total {numbers[5]} (verdicts {sum(numbers[:5])}), the catalog has {len(ids)}")
        if len(held) < sum(numbers[:3]):
            out.append(f"{page}: {run} {group}: pass + fail + recorded = {sum(numbers[:3])}, snapshots/{run} holds {len(held)}")
    return out


def test_the_claude_code_report_counts_the_catalog_and_its_snapshots() -> None:
    found = report_problems(ROOT)
    assert not found, "rerun make capture-claude-code:\n" + "\n".join(found)


def test_a_report_lagging_the_catalog_is_found(tmp_path: Path) -> None:
    import shutil
    (tmp_path / "scenarios").symlink_to(ROOT / "scenarios")
    (tmp_path / "snapshots").mkdir()
    (tmp_path / "docs").mkdir()
    text = (ROOT / "docs" / "claude-code-report.md").read_text("utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| `") and "| seed 001 |" in line)
    run = row.split("`")[1]
    shutil.copytree(ROOT / "snapshots" / run, tmp_path / "snapshots" / run)
    cells = row.strip("|").split("|")
    lagging = "|" + "|".join(cells[:2] + [f" {int(cells[2]) - 1} "] + cells[3:7] + [f" {int(cells[7]) - 1} "]) + "|"
    (tmp_path / "docs" / "claude-code-report.md").write_text(lagging + "\n", "utf-8")
    found = report_problems(tmp_path)
    assert len(found) == 1 and "the catalog has" in found[0], found

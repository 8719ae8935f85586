"""docs/agents.md and docs/agents/*.md are generated from the snapshots (harness/drivers/agents_doc.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from harness.drivers import agents_doc

ROOT = Path(__file__).resolve().parents[1]


def test_the_agents_pages_are_up_to_date() -> None:
    """Fails when a capture changed a snapshot (or the generator changed) and `make agents-doc` was not run."""
    pages = agents_doc.pages(ROOT / "snapshots", ROOT / "docs" / "agents.md")
    stale = [str(path.relative_to(ROOT)) for path, text in pages.items()
             if not path.is_file() or path.read_text(encoding="utf-8") != text]
    assert not stale, f"out of date (run `make agents-doc`): {stale}"
    written = {p.name for p in (ROOT / "docs" / "agents").glob("*.md")}
    assert written == {p.name for p in pages if p.parent.name == "agents"}, "a findings page without its snapshots"


def test_every_column_is_an_agent_with_a_behaviour_catalog() -> None:
    columns = agents_doc.columns(ROOT / "snapshots")
    assert {c.profile for c in columns} >= {"codex-captured", "qwen-code-captured", "claude-code-captured"}
    for column in columns:
        for behaviour in agents_doc.BEHAVIOURS:
            answer, relative = agents_doc.cell(ROOT / "snapshots", column, behaviour)
            assert (relative is None) == (answer == "—")
            if relative:
                assert (ROOT / "snapshots" / relative).is_file()


def _copy(tmp_path: Path, folder: str) -> Path:
    root = tmp_path / "snapshots"
    shutil.copytree(ROOT / "snapshots" / folder, root / folder, symlinks=True)
    return root


def test_drift_names_the_cells_a_new_release_changed(tmp_path: Path) -> None:
    root = _copy(tmp_path, "qwen-code-0.24.4")
    shutil.copytree(root / "qwen-code-0.24.4", root / "qwen-code-9.9.9", symlinks=True)
    path = root / "qwen-code-9.9.9" / "qwen-code-captured" / "behaviour" / "edit-crlf.yaml"
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    document["steps"][-1]["workspace"]["dos.txt"]["text"] = "1st\n2nd\nthird\r\n"
    path.write_text(yaml.safe_dump(document, allow_unicode=True), encoding="utf-8")
    assert agents_doc.drift(root, "qwen-code-0.24.4", "qwen-code-9.9.9") == [
        "Line endings: matched; CRLF kept -> matched; CRLF and LF mixed"]
    assert agents_doc.main(["--snapshots", str(root), "--drift", "qwen-code-0.24.4", "qwen-code-0.24.4"]) == 0
    assert agents_doc.main(["--snapshots", str(root), "--drift", "qwen-code-0.24.4", "qwen-code-9.9.9"]) == 1


def test_check_fails_on_a_stale_page_and_write_makes_it_current(tmp_path: Path) -> None:
    root = _copy(tmp_path, "codex-0.171.0")
    page = tmp_path / "docs" / "agents.md"
    assert agents_doc.main(["--snapshots", str(root), "--check", str(page)]) == 1
    assert agents_doc.main(["--snapshots", str(root), "--write", str(page)]) == 0
    assert agents_doc.main(["--snapshots", str(root), "--check", str(page)]) == 0
    assert (tmp_path / "docs" / "agents" / "codex-0.171.0.md").is_file()
    page.write_text(page.read_text(encoding="utf-8").replace("applied", "refused"), encoding="utf-8")
    assert agents_doc.main(["--snapshots", str(root), "--check", str(page)]) == 1


def test_a_refusal_cell_quotes_the_first_line_of_the_message() -> None:
    step = {"error": {"code": None, "message": "File not found: ${workspace}/missing.txt\nmore"}}
    assert agents_doc._refused(step) == "refused: “File not found: ${workspace}/missing.txt”"
    long = {"error": {"message": "x" * 200}}
    assert agents_doc._refused(long) == "refused: “" + "x" * 89 + "…”"


def test_a_latin1_file_rewritten_in_another_byte_is_named_by_that_byte() -> None:
    """Kilo 7.7.9 wrote é (0xE9) as 0xFF (observed in a run); the snapshot keeps only the hash, the cell names the byte."""
    import hashlib
    step = {"tool": "edit", "output": "Edit applied successfully."}
    for content, answer in ((b"caf\xff = 1\nx = 3\n", "applied; é (0xE9) written as byte 0xFF"),
                            (b"caf\xe9 = 1\nx = 3\n", "applied; Latin-1 bytes kept"),
                            (b"cafe = 1\nx = 3\n\n", "changed otherwise (see the snapshot)")):
        workspace = {"legacy.txt": {"type": "file", "sha256": hashlib.sha256(content).hexdigest(), "size": len(content)}}
        assert agents_doc._latin1_edit(step, workspace) == answer
    utf8 = {"legacy.txt": {"type": "file", "text": "caf\ufffd = 1\nx = 3\n"}}
    assert agents_doc._latin1_edit(step, utf8) == "applied; rewritten as UTF-8 with U+FFFD"

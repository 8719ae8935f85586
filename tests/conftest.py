"""Shared fixtures for the harness's own tests."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from harness.loader import load_text


@pytest.fixture
def scenario_from(tmp_path: Path):
    """Returns a function turning YAML text into a Scenario (written to a file, so lines are real)."""
    def make(text: str, name: str = "s.yaml"):
        path = tmp_path / name
        path.write_text(textwrap.dedent(text), "utf-8")
        return load_text(path.read_text("utf-8"), path)[0]
    return make


@pytest.fixture
def folder(tmp_path: Path, monkeypatch) -> Path:
    """Returns an empty scenario folder; the CLI's state (last run) goes to a temporary place too."""
    monkeypatch.setenv("HARNESS_STATE_DIR", str(tmp_path / "state"))
    directory = tmp_path / "scenarios"
    directory.mkdir()
    return directory

"""SIGTERM while the harness is still importing: the signal may come out wrapped in another exception."""

from __future__ import annotations

import dataclasses
import signal

import pytest

from harness.cli import main as cli
from harness.util import processes


def test_a_sigterm_raised_inside_a_class_body_being_made_still_exits_143(monkeypatch):
    # Seen under load: the signal landed while `harness.drivers.discover` was being imported, in a
    # dataclass field's __set_name__, which re-raises what it met as a RuntimeError: a traceback.
    def main(argv=None):
        class Field:
            def __set_name__(self, owner, name):
                raise processes.Terminated(signal.SIGTERM)

        @dataclasses.dataclass
        class Guess:
            args: Field = Field()

    monkeypatch.setattr(cli, "main", main)
    monkeypatch.setattr(processes, "own_tree", lambda: None)
    monkeypatch.setattr(processes, "sweep", lambda: None)
    assert cli.entry([]) == 128 + signal.SIGTERM


def test_other_errors_still_propagate(monkeypatch):
    def main(argv=None):
        raise RuntimeError("a real bug")

    monkeypatch.setattr(cli, "main", main)
    monkeypatch.setattr(processes, "own_tree", lambda: None)
    monkeypatch.setattr(processes, "sweep", lambda: None)
    with pytest.raises(RuntimeError, match="a real bug"):
        cli.entry([])

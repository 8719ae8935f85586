"""The misbehaving ACP agent (tests/adapters/acp_misbehaving.py) as the tests drive it: it sends the
client whatever requests a step lists and returns the answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.targets.acp.target import AcpTarget

MISBEHAVING = f"acp:python {Path(__file__).resolve().parent.parent / 'adapters' / 'acp_misbehaving.py'}"


@pytest.fixture(scope="module")
def prober():
    target = AcpTarget(MISBEHAVING, timeout=20)
    target.start()
    yield target
    target.stop()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def probe(target: AcpTarget, workspace: Path, requests: list[dict], options: dict | None = None, **args):
    """Opens a session, has the agent send ``requests`` to the client, and returns the call's result."""
    session = target.open("any", workspace, options or {})
    try:
        return session.call("probe", {"requests": requests, **args})
    finally:
        session.close()

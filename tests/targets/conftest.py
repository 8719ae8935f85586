"""Fixtures shared by the target tests: the misbehaving ACP agent and a workspace (tests/targets/acp_prober.py)."""

from acp_prober import prober, workspace  # noqa: F401  (fixtures, found by name)

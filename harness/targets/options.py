"""The run-wide settings a target is built with, as one typed, immutable object.

``harness/run/options.py`` (``RunOptions``) holds everything a run was asked to do; the part that
concerns the targets is handed to them as a :class:`TargetOptions` (``RunOptions.target_options``),
and each kind of target takes the fields it honours (its ``from_options``). Isolation a kind cannot
honour (``--sandbox``, ``--run-as``) is refused before anything starts (``refusal``), never
silently dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

#: The isolation settings a kind of target may honour (``Target.honours``); the others are refused.
ISOLATION = ("sandbox", "run_as")


@dataclass(frozen=True)
class TargetOptions:
    """What every target of a run is built with (each kind uses the fields that concern it)."""

    timeout: float | None = None  # seconds one call may take (None: the kind's own default)
    run_as: str | None = None  # run the candidate as this user
    sandbox: bool = False  # every process started in the sandbox (harness/targets/launch.py)
    sandbox_asked: bool = False  # --sandbox was named: a kind that starts nothing it can confine refuses
    binding: Path | None = None  # cmd:/mcp:/acp: the profile's tools mapped onto the target's
    tool_map: tuple[str, ...] = ()
    tool_map_file: Path | None = None
    workspace_parent: str | None = None  # the folder the runner makes workspaces in (None: $TMPDIR)

    def isolation(self) -> dict[str, str]:
        """Returns the isolation asked for: {setting: its flag as given}, e.g. {"sandbox": "--sandbox"}."""
        asked = {}
        if self.sandbox_asked:
            asked["sandbox"] = "--sandbox"
        if self.run_as is not None:
            asked["run_as"] = f"--run-as {self.run_as}"
        return asked


def refusal(kind: str, honours: frozenset[str], options: TargetOptions) -> str | None:
    """Returns the one-line reason a target of ``kind`` (honouring ``honours``) refuses ``options``, or None."""
    refused = [flag for name, flag in options.isolation().items() if name not in honours]
    if not refused:
        return None
    return (f"{' and '.join(refused)}: the {kind} target cannot apply it (its candidate would run unconfined, "
            "as the harness's user); leave it out, or use a target that applies it (cmd:)")

"""The in-process reference target: ``reference_impl`` called directly, on a real temporary directory.

Scenarios that require faults (permissions, read-only file system, disk full) run on pyfakefs,
which only an in-process target can see (see harness/faults.py).
"""

from __future__ import annotations

import traceback
from pathlib import Path
from typing import Any

import reference_impl
from harness.faults import FAKEABLE
from harness.targets.base import CallResult, Session, Target, TargetError, TargetInfo, Unsupported


class ReferenceSession(Session):
    """A reference_impl session."""

    def __init__(self, session: Any) -> None:
        self._session = session

    def call(self, tool: str, args: dict[str, Any]) -> CallResult:
        """Calls the reference directly; a crash in it is a target error with its traceback."""
        try:
            data = self._session.call(tool, args)
        except reference_impl.UnknownTool as exc:
            raise TargetError(f"unknown tool {tool!r}: {exc}") from None
        except Exception as exc:  # the reference broke: an error verdict, never a harness crash
            tail = "".join(traceback.format_exception(exc)[-6:])
            raise TargetError(f"reference crashed in {tool}: {type(exc).__name__}: {exc}", detail=tail) from None
        return CallResult.from_normal_form(data)


class ReferenceTarget(Target):
    """Runs the reference implementation in this process."""

    realises = FAKEABLE
    in_process = True  # faults are realised on pyfakefs around the whole scenario

    def start(self) -> TargetInfo:
        """Returns the reference's name, version and profiles."""
        return TargetInfo("reference", reference_impl.__version__, tuple(reference_impl.PROFILES))

    def open(self, profile: str, workspace: Path, options: dict[str, Any]) -> Session:
        """Opens a reference session of ``profile`` on ``workspace``."""
        try:
            module = reference_impl.profile_module(profile)
        except KeyError:
            raise Unsupported(f"the reference has no profile {profile!r}") from None
        except ImportError as exc:
            raise TargetError(f"cannot import the reference for {profile}: {exc}") from None
        return ReferenceSession(module.Session(str(workspace), dict(options)))

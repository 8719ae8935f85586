"""The in-process reference target: ``reference_impl`` called directly, on a real temporary directory.

Scenarios that require faults (permissions, read-only file system, disk full) have them realised
around the whole scenario, by the kernel for the runner's thread or on pyfakefs, which only an
in-process target can see (see harness/targets/faults.py).
"""

from __future__ import annotations

import contextlib
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path, PurePath
from typing import Any

import reference_impl
from harness.containment import audit_hook
from harness.targets import faults
from harness.targets.base import CallResult, Session, Target, TargetError, TargetInfo, Unsupported
from harness.targets.cmd.protocol import response_checker
from harness.targets.faults import FAKEABLE, on_pyfakefs


class ReferenceSession(Session):
    """A reference_impl session, confined to the folder around its workspace (harness/containment/audit_hook.py)."""

    links_confined = True  # os.link is refused unless both its paths are in the folder around the workspace
    acts_only_in_calls = True  # no thread or process of its own outlives a call; close is the base's no-op

    def __init__(self, session: Any, bounds: audit_hook.Confinement) -> None:
        self._session = session
        self._bounds = bounds

    @classmethod
    def opened(cls, make: Any, workspace: Path, options: dict[str, Any]) -> ReferenceSession:
        """Returns ``make(workspace, options)`` (a reference session class), made and run confined.

        The folder around the workspace is the harness's own (its canaries watch it); the rest of
        the machine is out of the reference's reach.
        """
        folder = workspace.parent if isinstance(workspace, PurePath) else Path(workspace).parent
        bounds = audit_hook.Confinement(str(folder))
        with audit_hook.confined(bounds):
            session = make(str(workspace), dict(options))
        return cls(session, bounds)

    def call(self, tool: str, args: dict[str, Any]) -> CallResult:
        """Calls the reference directly; a crash in it is a target error with its traceback."""
        try:
            with audit_hook.confined(self._bounds):
                data = self._session.call(tool, args)
        except reference_impl.UnknownTool as exc:
            raise TargetError(f"unknown tool {tool!r}: {exc}") from None
        except Exception as exc:  # the reference broke: an error verdict, never a harness crash
            tail = "".join(traceback.format_exception(exc)[-6:])
            raise TargetError(f"reference crashed in {tool}: {type(exc).__name__}: {exc}", detail=tail) from None
        # Held to the normal form a cmd: candidate must answer in (docs/cmd-protocol.md): a tool error
        # whose message is not a string, say, is a broken answer there, and is one here too.
        problem = response_checker().problem("call", {"ok": True, **data}) if isinstance(data, dict) else "not a mapping"
        if problem:
            raise TargetError(f"reference answered {tool} outside the normal form: {problem}")
        return CallResult.from_normal_form(data)

    def refused(self) -> list[str]:
        """Returns what the confinement refused the reference in this session."""
        return list(self._bounds.refused)


class ReferenceTarget(Target):
    """Runs the reference implementation in this process."""

    realises = FAKEABLE
    in_process = True  # faults are realised around the whole scenario (harness/targets/faults.py)
    lone_surrogates_refused = None  # the arguments are handed over as Python strings

    def start(self) -> TargetInfo:
        """Returns the reference's name, version and profiles."""
        # The answers' validator, made now: a scenario realising a fault fakes the file system around its calls.
        response_checker().validator("call")
        return TargetInfo("reference", reference_impl.__version__, tuple(reference_impl.PROFILES))

    def before_workers(self, scenarios: Sequence[Any], *, forking: bool = True) -> None:
        """Imports what the scenarios will use (the reference's modules for their profiles) and makes
        the answers' validator and, for the faults, the fake file system (pyfakefs' patcher, held
        paused): once, not in each worker.

        Where no worker is forked, pyfakefs is left to the first fault scenario (harness/targets/faults.py
        imports it before its first set-up): a run whose first scenarios are plain ones starts them
        without it, and one that has no fault scenario to run never loads it."""
        response_checker().validator("call")
        for profile in {scenario.profile for scenario in scenarios} & set(reference_impl.PROFILES):
            with contextlib.suppress(ImportError):  # said by each scenario's session, as in a serial run
                reference_impl.profile_module(profile)
        if forking and any(on_pyfakefs(scenario.requires, scenario.given) for scenario in scenarios):
            faults.ready()

    def open(self, profile: str, workspace: Path, options: dict[str, Any]) -> Session:
        """Opens a reference session of ``profile`` on ``workspace``."""
        # The module as imported now (pyfakefs drops the modules imported under it, so none is kept
        # here): what importlib.import_module returns for a module imported before, without its locks.
        module = sys.modules.get(reference_impl.PROFILES.get(profile, ""))
        if module is not None:
            return ReferenceSession.opened(module.Session, workspace, options)
        try:
            module = reference_impl.profile_module(profile)
        except KeyError:
            raise Unsupported(f"the reference has no profile {profile!r}") from None
        except ImportError as exc:
            raise TargetError(f"cannot import the reference for {profile}: {exc}") from None
        return ReferenceSession.opened(module.Session, workspace, options)

"""The ``cmd:`` target: any implementation, in any language, behind a JSON-lines adapter.

``cmd:<command line>`` starts the command (split like a shell would, with :func:`shlex.split`)
once per run and speaks protocol version 1 with it (``docs/cmd-protocol.md``; the messages'
JSON Schemas are ``harness/schema/cmd-protocol.schema.json`` and every response is validated
against them). A broken candidate is a verdict, never a broken harness: a hang, a crash, garbage or
an oversized line on stdout becomes a :class:`TargetError` naming what happened with the tail of the
candidate's stderr, the process is killed, and the next scenario gets a fresh one.

What's left to other modules: the process and its pipes (``harness/targets/channel.py``), the sandbox
command line (``sandbox.py``), and escape detection around the workspace (the runner).
"""

from __future__ import annotations

import json
import os
import pwd
from pathlib import Path
from typing import Any

from harness.containment.sandbox import SandboxError
from harness.targets import bindings, launch
from harness.targets.base import (
    CallResult,
    ProcessTarget,
    Session,
    TargetError,
    TargetInfo,
    Unsupported,
    bounded_name,
    name_slug,
)
from harness.targets.channel import DEFAULT_LINE_CAP, Channel, ChannelError, excerpt, split_command_line
from harness.targets.cmd.protocol import ResponseChecker, _skeleton, protocol_schema, response_checker  # noqa: F401
from harness.targets.options import TargetOptions

PROTOCOL = 1
PREFIX = "cmd:"
DEFAULT_TIMEOUT = 10.0
#: Conditions realised only when the candidate runs as an ordinary user (modes bite).
_PERMISSION_CONDITIONS = frozenset({"permissions"})


def parse_spec(spec: str) -> list[str]:
    """Returns the argv of a ``cmd:<command line>`` spec; ``python`` means this interpreter."""
    return split_command_line(spec, PREFIX, "python -m reference_impl.serve")


class CmdSession(Session):
    """One scenario's session, named ``s1``, ``s2``, ... on the candidate's side."""

    def __init__(self, target: CmdTarget, channel: Channel, name: str) -> None:
        self._target = target
        self._channel = channel
        self.name = name
        self._workspace_dirty = False
        self.workspace: Path | None = None

    def call(self, tool: str, args: dict[str, Any]) -> CallResult:
        """Sends one ``call`` and returns the tool's result in normal form."""
        if self._workspace_dirty:
            self._target._hand_over(self.workspace)
            self._workspace_dirty = False
        binding = self._target.binding
        name = binding.tool(tool)
        if self.workspace is not None:
            try:  # what a binding builds is held to the scenario's path rule before it is sent
                binding.check_paths(tool, args, str(self.workspace))
            except bindings.ArgumentMismatch as exc:
                raise TargetError(str(exc), kind="binding") from None
        response = self._target._request(
            self._channel, {"op": "call", "session": self.name, "tool": name, "args": binding.arguments(tool, args)},
            f"call {binding.describe(tool)}"
        )
        if "error" in response:
            observed = CallResult(error=response["error"], events=response.get("events"))
        else:
            observed = CallResult(output=response["output"], events=response.get("events"))
        if tool not in binding.tools:
            return observed
        # An adapter's `error` member is always a failure; a binding may find one in its output too.
        text = observed.output if isinstance(observed.output, str) else None
        try:
            output, error, extra = binding.result(tool, observed.output, observed.error, "error", text)
        except bindings.ResultTooLarge as exc:  # the binding's fault, shown as this call's error
            raise TargetError(str(exc)) from None
        return CallResult(output=output, error=error, events=observed.events, extra={"binding": extra} if extra else {})

    def before_action(self) -> None:
        """Files the harness is about to create belong to root: give them to the candidate's user before the next call."""
        if self._target.run_as is not None:
            self._workspace_dirty = True

    def close(self) -> None:
        """Sends ``close``; nothing to do when the process already died during the session."""
        if self._channel.alive:
            self._target._request(self._channel, {"op": "close", "session": self.name}, "close")


class CmdTarget(ProcessTarget):
    """A candidate reached through the cmd: protocol, version 1."""

    lone_surrogates_refused = None  # requests are ASCII JSON: a lone surrogate travels as its \\ud800 escape
    starts_on_workspace = True  # in the sandbox: started once, on the run's workspace folder
    honours = frozenset({"sandbox", "run_as"})

    @classmethod
    def from_options(cls, spec: str, options: TargetOptions) -> CmdTarget:
        """Returns the target built with the run's timeout, isolation and binding."""
        return cls(spec, timeout=options.timeout, run_as=options.run_as, sandbox=options.sandbox,
                   binding=options.binding, tool_map=options.tool_map, tool_map_file=options.tool_map_file)

    def __init__(
        self,
        spec: str,
        *,
        timeout: float | None = None,
        run_as: str | None = None,
        sandbox: bool = False,
        line_cap: int = DEFAULT_LINE_CAP,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        binding: str | Path | None = None,
        tool_map: Any = (),
        tool_map_file: str | Path | None = None,
    ) -> None:
        super().__init__(spec)
        self.argv = parse_spec(spec)
        # The profile's tools as the adapter names and shapes them (harness/targets/bindings/); raises BindingError.
        self.binding = bindings.from_options(binding, tool_map, tool_map_file)
        self.timeout = float(timeout) if timeout else DEFAULT_TIMEOUT
        self.line_cap = line_cap
        self.sandbox = bool(sandbox)
        self.cwd = cwd
        self._cwd_given: str | None = None  # the run's working folder (use_cwd)
        self.env = dict(os.environ if env is None else env)
        self._named_env = dict(env or {})  # what the spec names: all a sandboxed candidate gets but the allowlist
        self.run_as = run_as
        self._reachable: set[Path] = set()  # enclosures already opened for the candidate's user to traverse
        self._uid: int | None = None
        self._gid: int | None = None
        if run_as is not None:
            self._uid, self._gid, home = _resolve_user(run_as)
            self.env.update(HOME=home, USER=run_as, LOGNAME=run_as)
            self._named_env.update(HOME=home, USER=run_as, LOGNAME=run_as)
        if self.sandbox:
            launch.decide(True)  # ValueError (a usage error) when no sandbox can be made here
        self._slot: launch.Slot | None = None  # the workspace the sandboxed candidate was started with
        self.realises = frozenset(_PERMISSION_CONDITIONS if self._modes_bite() else ())
        self.info: TargetInfo | None = None
        self._channel: Channel | None = None
        self._failure: TargetError | None = None  # the candidate cannot be started at all
        self._unsupported: str | None = None  # the candidate declined the protocol
        self._sessions = 0

    # -- the Target interface ------------------------------------------------------------------

    def use_tmp(self, folder: str) -> bool:
        """Points the candidate's temporary folder at ``folder`` (the harness removes it after the
        run); under ``--run-as`` the folder is that user's."""
        self._give_folder(folder)
        return super().use_tmp(folder)

    def use_cwd(self, folder: str) -> bool:
        """Starts the command in ``folder`` (the run's working folder), its relative words made
        absolute first; a working folder chosen for it is kept. Under ``--run-as`` the folder is that user's."""
        if self.cwd is None:
            self._give_folder(folder)
        if not super().use_cwd(folder):
            return False
        self._cwd_given = folder
        return True

    def _give_folder(self, folder: str) -> None:
        """Gives the run's ``folder`` (not its contents) to the ``--run-as`` user (nothing without one)."""
        if self._uid is not None:
            os.chown(folder, self._uid, self._gid if self._gid is not None else -1)

    def start(self) -> TargetInfo:
        """Starts the command and shakes hands; raises TargetError when it cannot be started.

        A candidate that declines protocol version 1 is not an error: it gets a TargetInfo without
        profiles, and every scenario is skipped with the reason (see :meth:`skip_reason`).
        """
        if self.info is None and self._failure is None and self._unsupported is None:
            try:
                if self.sandbox and self._fixed is None:
                    self._probe()
                elif self.sandbox:  # in the sandbox that binds the run's workspace folder: it stays up
                    self._channel = self._spawn_and_greet(self._fixed)
                else:
                    self._channel = self._spawn_and_greet()
            except Unsupported:
                pass
        if self._failure is not None:
            raise self._failure
        if self._unsupported is not None:
            return TargetInfo(name=self.spec, profiles=())
        assert self.info is not None
        return self.info

    def open(self, profile: str, workspace: Path, options: dict[str, Any]) -> Session:
        """Opens session ``sN`` of ``profile`` on ``workspace``, restarting a dead or hung candidate first."""
        self.start()
        if self._unsupported is not None:
            raise Unsupported(self._unsupported)
        assert self.info is not None
        if profile not in self.info.profiles:
            raise Unsupported(self._profile_reason(profile))
        workspace = Path(workspace).absolute()
        if self.run_as is not None:
            self._hand_over(workspace, first=True)
        if self.sandbox:
            if (self._channel is None or not self._channel.alive or self._channel.proc.poll() is not None
                    or self._slot is None or not self._slot.fits(workspace)):
                # Its sandbox binds the workspace folder it was started with: a new folder (the first
                # scenario, a fresh enclosure after an escape) needs a new sandbox.
                self._retire(self._channel)
                self._channel = self._spawn_and_greet(workspace)
        elif self._channel is None or not self._channel.alive or self._channel.proc.poll() is not None:
            self._retire(self._channel)  # it died between scenarios: reap it, start afresh
            self._channel = self._spawn_and_greet()
        self._sessions += 1
        name = f"s{self._sessions}"
        message = {"op": "open", "session": name, "profile": profile, "workspace": str(workspace), "options": options or {}}
        try:
            self._request(self._channel, message, "open")
        except TargetError as exc:
            if exc.kind != "exited":
                raise
            # It was on its way out when the scenario began (died after its last answer): once more, afresh.
            self._channel = self._spawn_and_greet(workspace if self.sandbox else None)
            self._request(self._channel, message, "open")
        session = CmdSession(self, self._channel, name)
        session.workspace = workspace
        return session

    def skip_reason(self, scenario: Any) -> str | None:
        """Returns why this candidate cannot run ``scenario``: declined protocol, missing profile, unmet condition."""
        if self._unsupported is not None:
            return self._unsupported
        profile = _field(scenario, "profile")
        reason = self.binding.skip_reason(profile)
        if reason:
            return reason
        if self.info is not None and profile is not None and profile not in self.info.profiles:
            return self._profile_reason(profile)
        missing = [c for c in (_field(scenario, "requires") or ()) if c in _PERMISSION_CONDITIONS and c not in self.realises]
        if missing:
            return (
                f"requires {', '.join(missing)}: the harness runs as root, so file modes do not bite; "
                "run with --run-as USER to run the candidate as an ordinary user"
            )
        return None

    def stop(self) -> None:
        """Says ``bye`` and waits briefly for the exit; kills the process if it lingers."""
        self._retire(self._channel)
        self._channel = None

    @property
    def slug(self) -> str:
        """Returns ``cmd-<name>`` from the hello (the command line is no file name)."""
        name = self.info.name if self.info else Path(self.argv[-1]).name
        return name_slug("cmd", name)  # bounded: the name is the candidate's, of any length

    # -- the protocol ---------------------------------------------------------------------------

    def _spawn_and_greet(self, workspace: Path | None = None) -> Channel:
        argv = self.argv
        # The working folder the run gives the candidate (harness/run/working_folder.py) is writable in
        # the sandbox too: a relative-path write lands there and is reported as what it is.
        box = launch.confine(self.sandbox, argv, workspace=workspace, tmp=self._tmp, env=self._named_env,
                             cwd=self.cwd, writable=[self.cwd] if self.cwd else [])
        self._slot = launch.Slot.of(workspace) if self.sandbox else None
        try:
            channel = Channel(argv, env=self.env, cwd=self.cwd, user=self._uid, group=self._gid, line_cap=self.line_cap,
                              box=box)
        except (ChannelError, SandboxError) as exc:
            hint = f" (--run-as {self.run_as}: that user must be able to reach and run it)" if self.run_as else ""
            self._failure = TargetError(f"{self.spec}: {exc}{hint}")
            raise self._failure from None
        try:
            hello = self._request(channel, {"op": "hello", "protocol": PROTOCOL}, "hello")
        except TargetError as exc:
            channel.kill()
            # A candidate that cannot even greet will not do better on the next scenario.
            self._failure = TargetError(f"{self.spec} could not be started: {exc.args[0]}", detail=exc.detail)
            raise self._failure from None
        except _Declined as exc:
            # Nothing can run: an error for every scenario, so that CI cannot go green on it.
            channel.kill()
            self._failure = TargetError(str(exc), detail=channel.tail())
            raise self._failure from None
        if hello.get("protocol", PROTOCOL) != PROTOCOL:
            channel.close(b'{"op": "bye"}\n', 1.0)
            self._failure = TargetError(
                f"the candidate speaks cmd: protocol version {hello['protocol']!r}; "
                f"this harness speaks version {PROTOCOL}: nothing can run"
            )
            raise self._failure
        self.info = TargetInfo(name=bounded_name(hello["name"]), version=bounded_name(hello["version"]), profiles=tuple(hello["profiles"]))
        return channel

    def _probe(self) -> None:
        """Starts the candidate once just to learn what it offers (a sandboxed one is started again on
        the run's workspace folder, which was not given: :meth:`use_workspace`)."""
        self._retire(self._spawn_and_greet())

    def _request(self, channel: Channel, message: dict[str, Any], what: str) -> dict[str, Any]:
        """Sends one request, reads and validates its response; raises TargetError for any failure."""
        try:
            line = channel.exchange(_encode(message), self.timeout)
        except ChannelError as exc:
            raise TargetError(f"the candidate {exc} ({what})", detail=channel.tail(), kind=exc.kind) from None
        try:
            response = json.loads(line)
        except ValueError:
            channel.kill()
            raise TargetError(f"the candidate wrote a line that is not JSON ({what}): {excerpt(line)}", detail=channel.tail()) from None
        except RecursionError:
            channel.kill()
            raise TargetError(f"the candidate wrote a line that nests too deep to parse ({what}): {excerpt(line)}",
                              detail=channel.tail()) from None
        op = message["op"]
        problem = response_checker().problem(op, response)
        if problem is not None:
            channel.kill()
            raise TargetError(
                f"the candidate wrote a line that is not a protocol {op} response ({what}): {excerpt(line)}; {problem}",
                detail=channel.tail(),
            )
        if response["ok"] is False:
            if op == "hello":
                raise _Declined(f"the candidate declined cmd: protocol version {PROTOCOL}: {response['reason']}")
            raise TargetError(f"the adapter failed ({what}): {response['reason']}", detail=channel.tail())
        return response

    def _retire(self, channel: Channel | None) -> None:
        if channel is not None and channel.alive:
            channel.close(_encode({"op": "bye"}), min(self.timeout, 2.0))

    def _profile_reason(self, profile: str) -> str:
        offered = ", ".join(self.info.profiles) if self.info and self.info.profiles else "none"
        return f"the candidate does not offer profile {profile!r} (its hello lists: {offered})"

    # -- running as another user --------------------------------------------------------------

    @property
    def candidate_uid(self) -> int | None:
        """The candidate's user under ``--run-as`` (escape watching, harness/containment/outside.py), else None."""
        return self._uid

    @property
    def candidate_home(self) -> str | None:
        """The candidate's home folder under ``--run-as`` (watched for escapes), else None."""
        return self.env.get("HOME") if self._uid is not None else None

    def _modes_bite(self) -> bool:
        uid = self._uid if self._uid is not None else os.geteuid()
        return uid != 0

    def _hand_over(self, workspace: Path | None, *, first: bool = False) -> None:
        """Gives the workspace tree to the candidate's user; the first time, lets that user reach it."""
        if workspace is None or self._uid is None:
            return
        from harness.containment import cleanup
        # By descriptors: the candidate owns the tree and may swap a folder for a link meanwhile.
        cleanup.chown_tree(workspace, self._uid, self._gid if self._gid is not None else -1)
        if not first:
            return
        # The harness's own folder around the workspace is a mkdtemp (0700): open it for traversal.
        # Folders above it are the machine's: never changed, only checked.
        base = workspace.parent
        if base in self._reachable:  # one enclosure holds a run's workspaces: opened and checked once
            return
        os.chmod(base, (base.stat().st_mode & 0o7777) | 0o001)
        for parent in base.parents:
            if parent.stat().st_mode & 0o001 == 0:
                raise TargetError(f"--run-as: {parent} is not traversable by other users, so the candidate "
                                  "cannot reach its workspace; point TMPDIR at a folder others can traverse")
        self._reachable.add(base)


class _Declined(Exception):
    """The candidate answered hello with ok: false."""


def _encode(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode("ascii") + b"\n"


def _field(scenario: Any, name: str) -> Any:
    if isinstance(scenario, dict):
        return scenario.get(name)
    return getattr(scenario, name, None)


def _resolve_user(user: str) -> tuple[int, int, str]:
    try:
        entry = pwd.getpwuid(int(user)) if user.isdigit() else pwd.getpwnam(user)
    except (KeyError, ValueError):
        raise ValueError(f"--run-as: no such user {user!r}") from None
    return entry.pw_uid, entry.pw_gid, entry.pw_dir

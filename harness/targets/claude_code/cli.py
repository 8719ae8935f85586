"""Finding, asking and launching the pinned Claude Code CLI with a clean, offline environment.

Where this module's concern ends: it builds the command line and the environment and starts the
process; talking to it (the fake API, the tool calls) is `session.py`'s job.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

#: The version `tools/claude-code/package.json` pins (`make capture-claude-code` installs it).
PINNED_VERSION = "2.1.330"

#: Where `npm install --prefix tools/claude-code` puts the executable, relative to the project root.
LOCAL_CLI = Path("tools/claude-code/node_modules/.bin/claude")

#: The prefixes of a session's scratch folders (``tempfile.mkdtemp`` adds 8 random characters); the
#: CLI names them in its messages, so snapshots mask them (see `harness.targets.claude_code`).
HOME_PREFIX = "harness-claude-home-"
CWD_PREFIX = "harness-claude-cwd-"

#: The prompt of the one conversation a session is; the fake model ignores it.
PROMPT = "Run the file tool calls of this conformance scenario."

# Everything that could make the CLI reach past loopback, nag, or vary between runs is off.
_OFFLINE_ENV = {
    "ANTHROPIC_API_KEY": "sk-ant-fake-conformance-key",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_BUG_COMMAND": "1",
    "CLAUDE_CODE_DISABLE_TERMINAL_TITLE": "1",
    "NO_COLOR": "1",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "TZ": "UTC",
}

#: Permission modes that skip every permission check; as root the CLI refuses them unless IS_SANDBOX=1.
BYPASS_MODES = frozenset({"bypassPermissions"})


def project_root() -> Path:
    """Returns the checkout this package lives in (or the current directory for an installed package)."""
    here = Path(__file__).resolve().parents[3]
    return here if (here / "tools" / "claude-code" / "package.json").exists() else Path.cwd()


def default_cli() -> Path:
    """Returns the path of the locally installed, pinned CLI (which may not exist yet)."""
    return project_root() / LOCAL_CLI


def cli_available(path: Path) -> bool:
    """Returns True when ``path`` is an executable file."""
    return path.is_file() and os.access(path, os.X_OK)


#: Set to "0", it silences the system message real sessions get after every fifth tool result (the
#: turn reminder); the target's ``reminder`` option and a scenario's ``turn_reminder`` choose.
TURN_REMINDER_VARIABLE = "CLAUDE_CODE_SILENT_TURN_REMINDER"


def clean_env(home: Path, base_url: str, *, mode: str, turn_reminder: bool = False) -> dict[str, str]:
    """Returns the whole environment of a CLI process: nothing of ours leaks in but PATH.

    Without ``turn_reminder`` the turn reminder is silenced (``CLAUDE_CODE_SILENT_TURN_REMINDER=0``),
    so that a call's events do not depend on how many calls came before it.
    """
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "TMPDIR": str(home / "tmp")}
    env.update(_OFFLINE_ENV)
    if not turn_reminder:
        env[TURN_REMINDER_VARIABLE] = "0"
    env["ANTHROPIC_BASE_URL"] = base_url
    if mode in BYPASS_MODES:
        env["IS_SANDBOX"] = "1"
    return env


def command(cli: Path, *, mode: str, allowed_tools: tuple[str, ...] = ()) -> list[str]:
    """Returns the command line of one non-interactive, stream-json session.

    ``allowed_tools`` become ``--allowedTools`` (permission rules such as ``Write`` or ``Read(//tmp/**)``).
    """
    argv = [str(cli), "-p", PROMPT, "--output-format", "stream-json", "--verbose", "--permission-mode", mode]
    if allowed_tools:
        argv += ["--allowedTools", *allowed_tools]
    return argv


def hand_over(path: Path, uid: int, gid: int) -> None:
    """Gives ``path`` and everything under it (never following links) to ``uid``:``gid``."""
    os.lchown(path, uid, gid)
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            os.lchown(os.path.join(root, name), uid, gid)


def open_for_traversal(folder: Path) -> None:
    """Lets other users traverse ``folder`` (``o+x``, never read or write) so a workspace inside is reachable.

    Raises PermissionError naming the first folder above it that others cannot traverse (the
    machine's folders are checked, never changed).
    """
    os.chmod(folder, (folder.stat().st_mode & 0o7777) | 0o001)
    for parent in folder.parents:
        if parent.stat().st_mode & 0o001 == 0:
            raise PermissionError(f"{parent} is not traversable by other users")


def scratch_home() -> Path:
    """Creates an empty HOME for one CLI process (the CLI writes ~/.claude.json there itself)."""
    home = Path(tempfile.mkdtemp(prefix=HOME_PREFIX))
    (home / "tmp").mkdir()
    return home


def cli_version(cli: Path, timeout: float = 30.0) -> str:
    """Returns the version the CLI prints (``2.1.330 (Claude Code)`` gives ``2.1.330``)."""
    home = scratch_home()
    try:
        done = subprocess.run(
            [str(cli), "--version"],
            env=clean_env(home, "http://127.0.0.1:9", mode="default"),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=home,
        )
    finally:
        shutil.rmtree(home, ignore_errors=True)
    text = (done.stdout or done.stderr).strip()
    match = re.search(r"\d+\.\d+\.\d+\S*", text)
    if done.returncode != 0 or not match:
        raise RuntimeError(f"{cli} --version failed (exit {done.returncode}): {text[-500:]}")
    return match.group(0)

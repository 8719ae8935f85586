"""The agents the harness drives offline, each an `AgentSpec` (see docs/agents.md for what each does).

- ``codex``: Codex CLI (``@openai/codex``), ``codex exec`` against a model provider whose
  ``base_url`` is the fake Responses endpoint; its file tool is ``apply_patch``, a custom
  (freeform) call it offers only under a model name it knows (``gpt-5.5`` here).
- ``opencode``: OpenCode (the ``opencode-linux-x64`` binary of ``opencode-ai``), ``opencode run``
  with an ``@ai-sdk/openai-compatible`` provider whose ``baseURL`` is the fake Chat Completions
  endpoint; it asks for a title first (a side request without tools).
- ``kilo``: Kilo CLI (the ``@kilocode/cli-linux-x64`` binary of ``@kilocode/cli``), an OpenCode fork
  driven the same way (``kilo run``, its own ``KILO_*`` settings); it starts slowly offline (its
  model cache fetches fail first), so its first call gets a longer allowance.
- ``pi``: pi (``@mariozechner/pi-coding-agent``), ``pi --mode json -p`` with a custom provider in
  its ``models.json`` (``api: openai-completions``, ``baseUrl`` the fake Chat Completions endpoint)
  and ``PI_OFFLINE``.
- ``qwen-code``: Qwen Code (``@qwen-code/qwen-code``), ``qwen -p`` with ``OPENAI_BASE_URL`` at the
  fake Chat Completions endpoint.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.targets.agents.spec import PROMPT, AgentSpec, Launch, base_env

# --------------------------------------------------------------------------- Codex CLI

#: A model name Codex knows: under it Codex offers apply_patch (under an unknown name it offers none).
CODEX_MODEL = "gpt-5.5"


def _codex_launch(spec: AgentSpec, executable: Path, home: Path, workspace: Path, base_url: str) -> Launch:
    codex_home = home / ".codex"
    codex_home.mkdir()
    (codex_home / "config.toml").write_text(
        f'model = "{CODEX_MODEL}"\nmodel_provider = "harness"\n'
        "[model_providers.harness]\n"
        'name = "harness"\n'
        f'base_url = "{base_url}/v1"\n'
        'env_key = "HARNESS_FAKE_KEY"\n'
        'wire_api = "responses"\n'
        "[analytics]\nenabled = false\n",
        encoding="utf-8")
    env = base_env(home, {"CODEX_HOME": str(codex_home), "HARNESS_FAKE_KEY": "sk-fake-conformance-key"})
    argv = [str(executable), "exec", "--skip-git-repo-check", "--sandbox", "workspace-write", "--json",
            "-C", str(workspace), PROMPT]
    return Launch(argv, env)


def _codex_errored(events: list[dict[str, Any]], call_id: str, text: str) -> bool | None:
    # apply_patch's result text says how it ended: "Exit code: N" first, or a refusal without it.
    if text.startswith("Exit code: "):
        return not text.startswith("Exit code: 0\n")
    return True if text else None


CODEX = AgentSpec(
    name="codex", title="Codex CLI", package="@openai/codex", version="0.171.0", tools_dir="codex",
    executable="node_modules/.bin/codex", api="openai-responses", profile="codex-captured",
    tools={"apply_patch": "custom"}, make_target="codex", launch=_codex_launch, errored=_codex_errored,
    masks=((r"Wall time: [0-9]+(?:\.[0-9]+)? seconds", "Wall time: ${seconds} seconds"),))

# --------------------------------------------------------------------------- OpenCode


def _opencode_launch(spec: AgentSpec, executable: Path, home: Path, workspace: Path, base_url: str) -> Launch:
    return _opencode_like(executable, home, base_url, "OPENCODE")


def _kilo_launch(spec: AgentSpec, executable: Path, home: Path, workspace: Path, base_url: str) -> Launch:
    launch = _opencode_like(executable, home, base_url, "KILO")
    launch.env.update({"KILO_DISABLE_CODEBASE_INDEXING": "1", "KILO_DISABLE_PRESENCE": "1", "KILO_DISABLE_SESSION_INGEST": "1",
                       "KILO_TELEMETRY_LEVEL": "off", "KILO_DISABLE_CLAUDE_CODE": "1", "KILO_DISABLE_EXTERNAL_SKILLS": "1",
                       "KILO_DISABLE_EMBEDDED_WEB_UI": "1", "KILO_EXPERIMENTAL_DISABLE_FILEWATCHER": "1"})
    return launch


def _opencode_like(executable: Path, home: Path, base_url: str, prefix: str) -> Launch:
    """OpenCode and its fork Kilo: a config file with one openai-compatible provider, every fetch off."""
    config = {
        "autoupdate": False, "share": "disabled",
        "model": "harness/fake-model", "small_model": "harness/fake-model",
        "provider": {"harness": {"npm": "@ai-sdk/openai-compatible", "name": "harness",
                                 "options": {"baseURL": base_url + "/v1", "apiKey": "sk-fake-conformance-key"},
                                 "models": {"fake-model": {"name": "fake model", "tool_call": True}}}},
        "permission": {"edit": "allow", "bash": "deny", "webfetch": "deny", "external_directory": "allow"},
        "lsp": False, "formatter": False,
    }
    folder = home / "agent-config"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config, indent=1), encoding="utf-8")
    env = base_env(home, {f"{prefix}_{name}": value for name, value in (
        ("CONFIG", str(folder / "config.json")), ("DISABLE_MODELS_FETCH", "1"), ("DISABLE_AUTOUPDATE", "1"),
        ("DISABLE_LSP_DOWNLOAD", "1"), ("DISABLE_DEFAULT_PLUGINS", "1"), ("DISABLE_SHARE", "1"))})
    return Launch([str(executable), "run", "--format", "json", PROMPT], env)


def _tool_part(events: list[dict[str, Any]], call_id: str) -> dict[str, Any] | None:
    for event in events:
        part = event.get("part") if event.get("type") == "tool_use" else None
        if isinstance(part, dict) and part.get("callID") == call_id:
            return part
    return None


def _opencode_errored(events: list[dict[str, Any]], call_id: str, text: str) -> bool | None:
    part = _tool_part(events, call_id)
    if part is None:
        return None
    return (part.get("state") or {}).get("status") == "error"


OPENCODE = AgentSpec(
    name="opencode", title="OpenCode", package="opencode-ai (opencode-linux-x64)", version="1.18.33",
    tools_dir="opencode", executable="node_modules/opencode-linux-x64/bin/opencode", api="openai-chat",
    profile="opencode-captured", tools={"read": "function", "write": "function", "edit": "function"},
    make_target="opencode", launch=_opencode_launch, errored=_opencode_errored)

KILO = AgentSpec(
    name="kilo", title="Kilo CLI", package="@kilocode/cli (@kilocode/cli-linux-x64)", version="7.7.9",
    tools_dir="kilo", executable="node_modules/@kilocode/cli-linux-x64/bin/kilo", api="openai-chat",
    profile="kilo-captured", tools={"read": "function", "write": "function", "edit": "function"},
    make_target="kilo", launch=_kilo_launch, errored=_opencode_errored, startup=150.0)

# --------------------------------------------------------------------------- Qwen Code


def _qwen_launch(spec: AgentSpec, executable: Path, home: Path, workspace: Path, base_url: str) -> Launch:
    folder = home / ".qwen"
    folder.mkdir()
    settings = {"security": {"auth": {"selectedType": "openai"}}, "privacy": {"usageStatisticsEnabled": False},
                "telemetry": {"enabled": False}, "general": {"disableAutoUpdate": True}}
    (folder / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    env = base_env(home, {"OPENAI_BASE_URL": base_url + "/v1", "OPENAI_API_KEY": "sk-fake-conformance-key",
                          "OPENAI_MODEL": "fake-model"})
    return Launch([str(executable), "-p", PROMPT, "--approval-mode", "auto-edit", "--output-format", "stream-json"], env)


def _qwen_errored(events: list[dict[str, Any]], call_id: str, text: str) -> bool | None:
    for event in events:
        if event.get("type") != "user":
            continue
        content = (event.get("message") or {}).get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result" and block.get("tool_use_id") == call_id:
                return bool(block.get("is_error"))
    return None


QWEN_CODE = AgentSpec(
    name="qwen-code", title="Qwen Code", package="@qwen-code/qwen-code", version="0.24.4", tools_dir="qwen-code",
    executable="node_modules/.bin/qwen", api="openai-chat", profile="qwen-code-captured",
    tools={"read_file": "function", "write_file": "function", "edit": "function"}, make_target="qwen-code",
    launch=_qwen_launch, errored=_qwen_errored)

# --------------------------------------------------------------------------- pi


def _pi_launch(spec: AgentSpec, executable: Path, home: Path, workspace: Path, base_url: str) -> Launch:
    folder = home / ".pi" / "agent"
    folder.mkdir(parents=True)
    models = {"providers": {"harness": {"baseUrl": base_url + "/v1", "api": "openai-completions",
                                        "apiKey": "sk-fake-conformance-key", "models": [{"id": "fake-model"}]}}}
    (folder / "models.json").write_text(json.dumps(models), encoding="utf-8")
    env = base_env(home, {"PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1", "PI_TELEMETRY": "0",
                          "PI_CODING_AGENT_DIR": str(folder)})
    return Launch([str(executable), "--mode", "json", "--no-session", "--provider", "harness", "--model", "fake-model",
                   "-p", PROMPT], env)


def _pi_errored(events: list[dict[str, Any]], call_id: str, text: str) -> bool | None:
    for event in events:
        if event.get("type") == "tool_execution_end" and event.get("toolCallId") == call_id:
            return bool(event.get("isError"))
    return None


PI = AgentSpec(
    name="pi", title="pi", package="@mariozechner/pi-coding-agent", version="0.73.1", tools_dir="pi",
    executable="node_modules/.bin/pi", api="openai-chat", profile="pi-captured",
    tools={"read": "function", "write": "function", "edit": "function"}, make_target="pi", launch=_pi_launch,
    errored=_pi_errored)

AGENTS: dict[str, AgentSpec] = {spec.name: spec for spec in (CODEX, OPENCODE, KILO, PI, QWEN_CODE)}

"""Renaming a contract's tools and arguments to a server's: ``--tool-map`` and ``--tool-map-file``.

An entry is ``<tool>=<server tool>`` (``write_text_file=write_file``) or
``<tool>.<argument>=<server argument>`` (``write_text_file.content=text``). A map file is YAML,
either the same entries as a mapping::

    write_text_file: write_file
    write_text_file.content: content

or one mapping per tool::

    write_text_file:
      name: write_file
      args: {content: content}

Names not mentioned pass through unchanged. Command-line entries win over the file's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping


@dataclass
class ToolMap:
    """Contract tool -> server tool, and per contract tool, argument -> server argument."""

    tools: dict[str, str] = field(default_factory=dict)
    args: dict[str, dict[str, str]] = field(default_factory=dict)

    def tool(self, name: str) -> str:
        """Returns the server's name for the contract's tool ``name``."""
        return self.tools.get(name, name)

    def arguments(self, tool: str, args: Mapping[str, Any]) -> dict[str, Any]:
        """Returns ``args`` of the contract's ``tool`` with the server's argument names."""
        renames = self.args.get(tool)
        if not renames:
            return dict(args)
        return {renames.get(key, key): value for key, value in args.items()}

    def add(self, key: str, value: str) -> None:
        """Adds one entry: ``tool`` -> server tool, or ``tool.arg`` -> server argument."""
        key, value = key.strip(), str(value).strip()
        if not key or not value:
            raise ValueError(f"tool map entry {key}={value}: both sides must be names")
        tool, dot, arg = key.partition(".")
        if dot:
            if not tool or not arg:
                raise ValueError(f"tool map entry {key}={value}: expected <tool>.<argument>=<name>")
            self.args.setdefault(tool, {})[arg] = value
        else:
            self.tools[tool] = value

    @classmethod
    def parse(cls, entries: Iterable[str] = (), file: str | Path | None = None) -> "ToolMap":
        """Returns the map of a YAML file (if any) and ``tool=name`` entries; raises ValueError."""
        result = cls()
        if file:
            result._load(Path(file))
        for entry in entries or ():
            key, eq, value = str(entry).partition("=")
            if not eq:
                raise ValueError(f"--tool-map {entry!r}: expected <tool>=<server tool> or <tool>.<argument>=<name>")
            result.add(key, value)
        return result

    def _load(self, path: Path) -> None:
        import yaml
        try:
            document = yaml.safe_load(path.read_text("utf-8"))
        except OSError as exc:
            raise ValueError(f"--tool-map-file {path}: {exc.strerror or exc}") from None
        except yaml.YAMLError as exc:
            raise ValueError(f"--tool-map-file {path}: not YAML: {exc}") from None
        if document is None:
            return
        if not isinstance(document, dict):
            raise ValueError(f"--tool-map-file {path}: expected a mapping of tool names")
        for key, value in document.items():
            if isinstance(value, dict):
                unknown = set(value) - {"name", "args"}
                if unknown:
                    raise ValueError(f"--tool-map-file {path}: {key}: unknown keys {sorted(unknown)} (name, args)")
                if "name" in value:
                    self.add(str(key), value["name"])
                for arg, name in (value.get("args") or {}).items():
                    self.add(f"{key}.{arg}", name)
            elif isinstance(value, str):
                self.add(str(key), value)
            else:
                raise ValueError(f"--tool-map-file {path}: {key}: expected a name or {{name, args}}")

    def describe(self, tool: str) -> str:
        """Returns ``tool`` and, when renamed, ``(as <server name>)``."""
        mapped = self.tool(tool)
        return tool if mapped == tool else f"{tool} (as {mapped})"

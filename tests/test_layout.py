"""The layout of harness/: every module belongs to a layer of the import contract, none is over 700 lines,
and the contract itself lists the layers and ignores no import."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 700


def _contract() -> dict:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    (layers,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    return layers


def _layer_packages() -> list[str]:
    names: list[str] = []
    for layer in _contract()["layers"]:
        names += [part.strip() for part in layer.replace("|", ":").split(":")]
    return names


def _modules() -> list[Path]:
    return sorted(path for path in (ROOT / "harness").rglob("*.py")
                  if "builtin_scenarios" not in path.parts and "__pycache__" not in path.parts)


def test_no_module_of_the_harness_is_over_700_lines() -> None:
    long = {str(path.relative_to(ROOT)): n for path in _modules()
            if (n := len(path.read_text("utf-8").splitlines())) > MAX_LINES}
    assert long == {}


def test_every_module_sits_in_a_layer_of_the_contract() -> None:
    packages = _layer_packages()
    outside = []
    for path in _modules():
        dotted = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        if dotted in ("harness", "harness.__main__"):
            continue  # the package's own entry: its version and `python -m harness`
        if not any(dotted == package or dotted.startswith(package + ".") for package in packages):
            outside.append(dotted)
    assert outside == []


def test_the_contract_lists_the_layers_lowest_last_and_ignores_no_import() -> None:
    contract = _contract()
    assert _layer_packages() == ["harness.cli", "harness.pytest_plugin", "harness.drivers", "harness.report",
                                 "harness.record", "harness.run", "harness.targets", "harness.scenario",
                                 "harness.containment", "harness.util"]
    assert not contract.get("ignore_imports")


def test_the_report_stream_names_no_report_format() -> None:
    code = (ROOT / "harness" / "report" / "stream.py").read_text("utf-8").split('"""', 2)[2]  # after the docstring
    assert not [word for word in ("json", "junit", "markdown", "html", "github", "lastfailed") if word in code.lower()]

"""Keeps ``pytest`` at the repository root working, installed or not.

When the package is installed, its ``pytest11`` entry point has already loaded the plugin; from a
bare checkout this file loads it instead.
"""

import importlib.metadata

if not any(ep.value == "harness.pytest_plugin" for ep in importlib.metadata.entry_points(group="pytest11")):
    pytest_plugins = ["harness.pytest_plugin"]

"""Keeps ``pytest`` at the repository root working, installed or not.

When the package is installed, its ``pytest11`` entry point has already loaded the plugin; from a
bare checkout this file loads it instead.
"""

import importlib.metadata
import sys

if not any(ep.value == "harness.pytest_plugin" for ep in importlib.metadata.entry_points(group="pytest11")):
    pytest_plugins = ["harness.pytest_plugin"]

# What hypothesis' pytest plugin puts on a report of a hypothesis test (its statistics, its failing examples).
_HYPOTHESIS_KEYS = ("_hypothesis_stats", "_hypothesis_failing_examples")


def pytest_sessionfinish(session):
    """Leaves hypothesis' end-of-run summary out where it has nothing to say.

    That summary imports hypothesis (about 0.4 s) in every process, also in a run of the scenario
    catalog, where no hypothesis test ran, nothing was recorded and nothing is printed. It is left
    out only then: hypothesis never imported here, no report carrying its statistics or failing
    examples (with pytest-xdist they come from the workers), statistics not asked for. Runs before
    the terminal reporter calls the summary hook (it does so after every ``pytest_sessionfinish``).
    """
    manager = session.config.pluginmanager
    plugin = manager.get_plugin("hypothesispytest")
    if plugin is None or "hypothesis" in sys.modules or session.config.getoption("hypothesis_show_statistics", False):
        return
    reporter = manager.get_plugin("terminalreporter")
    reports = (report for listed in (reporter.stats.values() if reporter is not None else ()) for report in listed)
    if any(key in getattr(report, "__dict__", {}) for report in reports for key in _HYPOTHESIS_KEYS):
        return
    manager.unregister(plugin)

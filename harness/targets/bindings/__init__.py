"""Bindings: a profile's tools mapped onto a target's tools (``--binding FILE``; docs/bindings.md).

A binding file is YAML, validated against ``harness/schema/binding.schema.json``; every problem is
reported as ``file:line: [field] message``. For each profile tool it says which target tool to call
(``tool``), how to build the target's arguments from the profile's call (``args``), and how to read
the result (``output``, a JMESPath expression; ``failure``, the signals that mean the call failed).
``--tool-map`` and ``--tool-map-file`` are shorthands that produce the same :class:`Binding`.

- ``load``: reading and validating a binding file or a tool map (:func:`load`, :func:`from_options`);
- ``apply``: the :class:`Binding` itself, building arguments and reading results;
- ``signals``: bounded JMESPath and the failure signals (re2).

The targets (cmd:, mcp:, acp:) apply a binding; this package knows nothing of how they reach their tools.
Every name below is importable from ``harness.targets.bindings`` (``bindings.load`` is the function).
"""

from harness.targets.bindings.apply import ArgumentMismatch, Binding, BindingError, ToolBinding
from harness.targets.bindings.load import from_options, from_tool_map, load
from harness.targets.bindings.signals import (
                                              CHANNEL_SIGNALS,
                                              DEFAULT_SIGNALS,
                                              MAX_RESULT_TEXT,
                                              MAX_RESULT_VALUES,
                                              REGEX_ENGINE,
                                              TEXT_CAP,
                                              FailureRule,
                                              ResultTooLarge,
)

__all__ = ["CHANNEL_SIGNALS", "DEFAULT_SIGNALS", "MAX_RESULT_TEXT", "MAX_RESULT_VALUES", "REGEX_ENGINE", "TEXT_CAP",
           "ArgumentMismatch", "Binding", "BindingError", "FailureRule", "ResultTooLarge", "ToolBinding", "from_options",
           "from_tool_map", "load"]

"""The bounds the harness keeps on untrusted input: scenario files, and what candidates leave behind.

Each bound is documented in docs/security.md; the ones a large but honest catalog might need to
raise read an environment variable (bytes or counts, plain integers).
"""

from __future__ import annotations

import os


def _env_int(name: str, default: int) -> int:
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        return default


MIB = 1024 * 1024

#: Bytes of content one scenario may make (given files, action content, ``$content`` arguments,
#: expected contents), summed over the scenario; checked when the scenario is loaded.
MAX_SCENARIO_CONTENT = _env_int("HARNESS_MAX_SCENARIO_CONTENT", 256 * MIB)
#: Characters of the outputs, errors and events one scenario's steps record (the strings in them,
#: and a few per other value), summed over the scenario while it runs: each is kept until the
#: scenario ends, and 200 reads of a 2 MB file once held 1.6 GB. Past it the scenario is an error.
MAX_SCENARIO_OUTPUT = _env_int("HARNESS_MAX_SCENARIO_OUTPUT", 64 * MIB)
#: Nesting depth of a scenario file's YAML (mappings and sequences), checked before it is parsed.
MAX_YAML_DEPTH = _env_int("HARNESS_MAX_YAML_DEPTH", 64)
#: Bytes of one scenario file.
MAX_SCENARIO_FILE = _env_int("HARNESS_MAX_SCENARIO_FILE", 16 * MIB)
#: Bytes of one JSON report read back (``harness report``, ``harness diff``, ``harness show``'s last run).
MAX_REPORT_FILE = _env_int("HARNESS_MAX_REPORT_FILE", 1024 * MIB)
#: Entries one scenario lays out (``given`` files, folders and links) and steps it takes: each is
#: system calls or a call to the candidate, and a 16 MiB file holds a million of them.
MAX_GIVEN_ENTRIES = _env_int("HARNESS_MAX_GIVEN_ENTRIES", 20000)
MAX_STEPS = _env_int("HARNESS_MAX_STEPS", 10000)
#: How large one ``$regex`` may compile: the sum of its parts, each counted repeat (``{m,n}``)
#: multiplying what it repeats. The engine expands counted repeats when it compiles:
#: ``(?:a{1000}){1000}`` (a million) took 274 MB, three such levels all the memory there was.
MAX_REGEX_SIZE = _env_int("HARNESS_MAX_REGEX_SIZE", 100_000)
#: The same, summed over every ``$regex`` of one scenario file: each is compiled when it is linted.
MAX_REGEX_TOTAL = _env_int("HARNESS_MAX_REGEX_TOTAL", 1_000_000)
#: Characters of one JMESPath expression in a binding (its parser recurses on nesting).
MAX_EXPRESSION = _env_int("HARNESS_MAX_EXPRESSION", 4096)

#: Bytes read (and hashed) of one file in the workspace; a longer file records the hash of its start.
MAX_FILE_READ = _env_int("HARNESS_MAX_FILE_READ", 64 * MIB)
#: Bytes read of the whole workspace in one recording.
MAX_WORKSPACE_READ = _env_int("HARNESS_MAX_WORKSPACE_READ", 256 * MIB)
#: Entries recorded of one workspace.
MAX_ENTRIES = _env_int("HARNESS_MAX_ENTRIES", 20000)
#: Folder levels recorded below a workspace's root (a candidate can nest folders deeper than any
#: recursive walk goes); deeper entries are not recorded, and a ``<capped>`` entry says so.
MAX_DEPTH = _env_int("HARNESS_MAX_DEPTH", 256)
#: Bytes of a file shown in a mismatch when only its start was read.
MAX_SHOWN = 4096

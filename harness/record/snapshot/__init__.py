"""Snapshots: what a target did in one scenario, as a stable, human-readable YAML document.

Expectations say what the contract requires; a snapshot says what a target actually did, so that
any change of behaviour, and any difference between two targets, shows as a diff a person can
review. A snapshot holds, for every step: the call with its arguments and its output or error, the
events and the target's extra records, or the action the harness took; and the workspace after the
step (each entry's type and mode, the size and SHA-256 of files, the text of small text files). The
verdict is not part of it: the snapshot is behaviour, expectations live in the scenario. For an
open question the snapshot *is* the recorded answer.

Layout: one file per target and scenario, ``<root>/<target slug>/<scenario id>.yaml`` (ids are
path-like, so folders follow the catalog's). Only observations are stored: a ``skip`` or an
``error`` verdict has nothing stable to record and is neither written nor compared.

Masks -- what is volatile from run to run is replaced, so that two runs give byte-identical files:

=====================  =====================================================  =================
what                   recognised as                                          becomes
=====================  =====================================================  =================
workspace root         ``<any dir>/harness-<8 chars>/ws`` or ``…/ws-<n>``     ``${workspace}``
                       (the runner's temporary workspaces), anywhere in any
                       string or name
workspace base         ``<any dir>/harness-<8 chars>`` (holds the canaries)   ``${base}``
temporary file names   Python ``tempfile`` names ``tmp<8 chars>``; atomic-    ``tmp${random}``,
                       write names ``[.]<name>.<8+ hex digits>.tmp``          ``<name>.${random}.tmp``
UUIDs                  ``8-4-4-4-12`` hex digits                              ``${uuid}``
date-times             ISO 8601 ``2024-05-01T12:00:00[.fff][Z|+hh:mm]``       ``${time}``
                       and JavaScript's ``Sat Nov 28 2026 01:54:06 GMT+0000
                       (Coordinated Universal Time)``
time-valued keys       a key named ``time``, ``timestamp``, ``date``,         ``${time}``
                       ``mtime``/``atime``/``ctime`` (``*_ns`` too),
                       ``*_at``, ``*_time``, ``last_modified``
durations              a key named ``seconds``, ``elapsed``, ``duration``,    ``${duration}``
                       ``*_ms``, ``duration_*``, ``elapsed_*``
timings in text        ``in <n>ms``, ``took <n> ms`` (a tool's own timing)   ``in ${duration}``
tool homes             ``<any dir>/harness-tool-home-<8 chars>``, the HOME    ``${tool-home}``
                       a launcher in tools/ gives its tool (serve.sh)
working folder         ``<any dir>/harness-cwd-<8 chars>``, the candidate's   ``${cwd}``
                       process's working folder (run/working_folder.py)
worker folder          ``<any dir>/harness-worker-<8 chars>``, the folder of  ``${worker}``
                       one worker process (run/workers.py)
=====================  =====================================================  =================

Targets add masks of their own for volatile values only they produce (the ``snapshot_masks``
attribute of their class, handed to the :class:`Checker` by the report stream and applied before the
ones above): the ``claude-code`` target masks the scratch HOME and working directory it gives the
CLI (``${cli-home}``, ``${cli-cwd}``; harness/targets/claude_code/__init__.py).

Nothing else is masked. Version numbers (e.g. gemini-safe-patch's ``version``) are deterministic and
kept. Mapping keys inside observed values are sorted (JSON objects have no order), the document's
own keys are not. Strings longer than ``LONG_TEXT`` characters keep their first and last lines (at
most ``HEAD_CHARS``/``TAIL_CHARS`` characters) with the length and SHA-256 of the whole, so a change
anywhere still shows. File modes depend on the
umask of the machine that ran the target; snapshots are made with the usual ``022``.

Where this module's concern ends: it turns a result (``Result.as_dict()``, the JSON report's shape)
into a document, stores and compares documents. How pytest drives it lives in
``harness/pytest_plugin/syrupy.py``; what the CLI makes of a divergence lives in ``harness/cli/main.py``.

The package: ``normalise`` (masks, the document, YAML), ``store`` (the files), ``checker``
(comparing and writing); every public name is importable from ``harness.record.snapshot``.
"""

from harness.record.snapshot.checker import Check, Checker, StoredBehaviours, check, unified_diff
from harness.record.snapshot.normalise import (
                                               FORMAT,
                                               HEAD_CHARS,
                                               HEADER,
                                               LONG_TEXT,
                                               METADATA,
                                               RECORDED_VERDICTS,
                                               SUFFIX,
                                               TAIL_CHARS,
                                               Masks,
                                               behaviour,
                                               body,
                                               document,
                                               is_recordable,
                                               mask_text,
                                               normalise,
                                               parse,
                                               render,
                                               serialise,
                                               stored_behaviour,
)
from harness.record.snapshot.store import (
                                               MAX_NAME,
                                               SnapshotStore,
                                               SnapshotUnreadable,
                                               default_root,
                                               folder_ids,
                                               read_below,
)

__all__ = ["FORMAT", "HEAD_CHARS", "HEADER", "TAIL_CHARS", "LONG_TEXT", "MAX_NAME", "METADATA", "RECORDED_VERDICTS", "SUFFIX", "Check", "Checker", "Masks", "StoredBehaviours",
           "SnapshotStore", "SnapshotUnreadable", "behaviour", "body", "check", "default_root", "document", "folder_ids",
           "is_recordable", "mask_text", "normalise", "parse", "read_below", "render", "serialise", "stored_behaviour",
           "unified_diff"]

"""Scenario snapshots through syrupy, so that ``pytest --snapshot-update`` writes them.

How it fits: each scenario is a custom pytest item (harness/pytest_plugin/__init__.py), not a test function
asking for syrupy's ``snapshot`` fixture. After running its scenario, the item builds a syrupy
``SnapshotAssertion`` itself (the same object the fixture returns: same session, same
``--snapshot-update`` flag) with ``ScenarioSnapshotExtension`` and asserts the result against it.
Syrupy then does what it does for any test: reads the stored snapshot, compares, writes on update,
and counts the snapshot in its end-of-run summary.

The extension stores files where the CLI does, ``<snapshot root>/<target slug>/<scenario id>.yaml``
(harness/record/snapshot/ makes the text), instead of syrupy's ``__snapshots__`` beside a test module:
the path comes from the item (``item.scenario.id``, ``item.snapshot_root``, ``item.target_slug``).
Syrupy's location logic reads ``item.obj``; ScenarioItem provides one.

Two deliberate departures from syrupy's defaults, both because scenario items are not the
``pytest.Function`` items syrupy tracks:
- discovery returns nothing, so syrupy never calls another scenario's snapshot "unused" (it would
  not know that scenario was deselected, and ``--snapshot-update`` would delete it); snapshots that
  no scenario matches are listed by the plugin's own summary instead;
- like the CLI, a scenario without a stored snapshot is not a failure: nothing is asserted unless
  one exists or ``--snapshot-update`` is given. Only ``pass``/``fail``/``recorded`` results are
  recorded; a ``skip`` or ``error`` has no stable observation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from syrupy.data import SnapshotCollections
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from harness.record import snapshot as snap

if TYPE_CHECKING:
    from syrupy.location import PyTestLocation


def _scenario_item(test_location: PyTestLocation) -> Any | None:
    item = getattr(test_location, "item", None)  # the class is asked, not the item: its properties start the target
    return item if hasattr(item, "scenario") and hasattr(type(item), "target_slug") else None


#: The characters syrupy leaves out of a snapshot's file name (SingleFileSnapshotExtension._sanitize_filename).
_UNSAFE_IN_NAMES = str.maketrans("", "", '\\/?*:|"<>')


class ScenarioSnapshotExtension(SingleFileSnapshotExtension):
    """Stores a scenario's result as ``<root>/<target slug>/<scenario id>.yaml``."""

    _write_mode = WriteMode.TEXT
    file_extension = "yaml"
    write_immediately = True

    def serialize(self, data: Any, **kwargs: Any) -> str:
        """Returns the snapshot text of a Result (or of its JSON-shaped mapping; text already made is kept)."""
        if isinstance(data, str):
            return data
        return snap.serialise(data if isinstance(data, dict) else data.as_dict())

    def matches(self, *, serialized_data: Any, snapshot_data: Any) -> bool:
        """Returns True when the recorded behaviours agree (the scenario's own words may differ)."""
        return snap.body(str(serialized_data)) == snap.body(str(snapshot_data))

    @classmethod
    def get_snapshot_name(cls, *, test_location: PyTestLocation, index: Any = 0) -> str:
        """Returns syrupy's name of the item's snapshot, worked out once per item (syrupy asks several
        times per assertion, and cleans the name character by character each time)."""
        item = _scenario_item(test_location)
        if item is None:
            return super().get_snapshot_name(test_location=test_location, index=index)
        names = item.__dict__.setdefault("_snapshot_names", {})
        if index not in names:
            names[index] = super().get_snapshot_name(test_location=test_location, index=index)
        return names[index]

    @classmethod
    def _sanitize_filename(cls, filename: str) -> str:
        """Returns syrupy's file-name-safe form of a snapshot name: the same text, without syrupy's
        test of each character's Unicode category where no character can be a control or format
        one (printable ASCII, as a scenario id is), so only the excluded characters go."""
        if filename.isascii() and filename.isprintable():
            return filename.translate(_UNSAFE_IN_NAMES)
        return super()._sanitize_filename(filename)

    @classmethod
    def get_location(cls, *, test_location: PyTestLocation, index: Any) -> str:
        """Returns full filepath where snapshot data is stored."""
        item = _scenario_item(test_location)
        if item is None:
            return super().get_location(test_location=test_location, index=index)
        return _location(item)

    def read_snapshot_data_from_location(self, *, snapshot_location: str, snapshot_name: str,
                                         session_id: str) -> Any:
        """Returns the stored text: the one :func:`assert_result` has just read, else read from the file."""
        if snapshot_location in _JUST_READ:
            return _JUST_READ[snapshot_location]
        return super().read_snapshot_data_from_location(snapshot_location=snapshot_location,
                                                        snapshot_name=snapshot_name, session_id=session_id)

    @classmethod
    def dirname(cls, *, test_location: PyTestLocation) -> str:
        """Returns the target's snapshot folder."""
        item = _scenario_item(test_location)
        if item is None:
            return super().dirname(test_location=test_location)
        return str(_store(item).folder)

    @classmethod
    def discovery_dirname(cls, *, test_location: PyTestLocation) -> str:
        """Returns the folder scanned for snapshots (the target's folder; see discover_snapshots)."""
        return cls.dirname(test_location=test_location)

    def discover_snapshots(self, *, test_location: PyTestLocation,
                           ignore_extensions: list[str] | None = None) -> SnapshotCollections:
        """Returns no collection: unused scenario snapshots are the plugin's business (see above)."""
        return SnapshotCollections()

    @classmethod
    def matches_test_location(cls, *, test_location: PyTestLocation, snapshot_location: str) -> bool:
        """Returns True: the location is derived from the item itself."""
        return True


#: The stored snapshot text assert_result read, by location, while syrupy's assertion runs (syrupy
#: asks for it again: read once, as the same text mode read gives the same text).
_JUST_READ: dict[str, str | None] = {}


def _location(item: Any) -> str:
    """Returns the item's snapshot file (worked out once per item: syrupy asks several times per assertion)."""
    location = getattr(item, "_snapshot_location", None)
    if location is None:
        location = item._snapshot_location = str(_store(item).path(item.scenario.id))
    return location


def _store(item: Any) -> snap.SnapshotStore:
    """Returns the store of the item's snapshot folder, one per folder for the session (asked for
    several times per item: kept on the item too)."""
    store: snap.SnapshotStore | None = item.__dict__.get("_snapshot_store")
    if store is None:
        from harness.pytest_plugin import SNAPSHOT_STORES
        root, slug = item.snapshot_root, item.target_slug
        stores = item.config.stash.setdefault(SNAPSHOT_STORES, {})
        store = stores.get((root, slug))
        if store is None:
            store = stores[root, slug] = snap.SnapshotStore(root, slug)
        item._snapshot_store = store
    return store


def _stored_behaviours(config: Any, store: Any) -> Any:
    """The stored snapshots' behaviours of ``store``'s folder, kept between runs (as ``harness run``
    keeps them): one per folder for the session, kept again at its end (``pytest_sessionfinish``)."""
    from harness.pytest_plugin import STORED_BEHAVIOURS
    kept = config.stash.setdefault(STORED_BEHAVIOURS, {})
    folder = str(store.folder)
    if folder not in kept:
        kept[folder] = snap.StoredBehaviours(store)
    return kept[folder]


def assert_result(item: Any, result: Any) -> str | None:
    """Compares (or on ``--snapshot-update`` writes) ``result``'s snapshot; returns a diff on divergence.

    Returns None when the snapshot matched, was written, does not exist yet, or syrupy is not active.
    """
    shape = result.as_dict() if not isinstance(result, dict) else result
    if not snap.is_recordable(shape):
        return None
    config = item.config
    session = getattr(config, "_syrupy", None)
    if session is None:  # syrupy disabled (-p no:syrupy)
        return None
    update = bool(getattr(config.option, "update_snapshots", False))
    store = _store(item)
    try:
        stored = store.read(item.scenario.id)
    except snap.SnapshotUnreadable as exc:  # a link, a FIFO, too big: never read through (harness/record/snapshot/)
        return f"{exc}\n"
    if stored is None and not update:
        return None
    from syrupy.assertion import SnapshotAssertion
    from syrupy.location import PyTestLocation
    assertion = SnapshotAssertion(update_snapshots=update, extension_class=ScenarioSnapshotExtension,
                                  test_location=PyTestLocation(item), session=session)
    doc = snap.document(shape, getattr(item, "snapshot_masks", ()))
    if stored is not None and not update and _stored_behaviours(config, store).behaviour(stored) == snap.behaviour(doc):
        # A match decided on data, as `harness run` decides it (libyaml parses fast): the pure-Python
        # emitter runs only to write a file or to show a difference; syrupy still counts the match.
        observed = stored
    else:
        observed = snap.render(doc)  # rendered once: the assertion compares this text
    location = _location(item)
    if update:
        # Written first, by the store's walk that follows no link out of the snapshot folder: syrupy's
        # own writer makes the parents and opens the file through links. Once this has made the file
        # a regular one below the root, syrupy writes the same text there (and counts it); its
        # rewriting only a changed behaviour is why the header (title, source) is written here too.
        try:
            store.write(item.scenario.id, observed)
        except snap.SnapshotUnreadable as exc:
            return f"{exc}\n"
    _JUST_READ[location] = stored  # None too: syrupy must see what was there before the write above
    try:
        matched = assertion == observed
    finally:
        _JUST_READ.pop(location, None)
    if matched:
        return None
    where = store.path(item.scenario.id).as_posix()
    return snap.unified_diff(stored or "", observed, f"{where} (stored)", f"{where} (observed)")


class SnapshotDiverged(Exception):
    """A scenario's observation differs from its stored snapshot."""

    def __init__(self, scenario_id: str, diff: str) -> None:
        super().__init__(f"{scenario_id}: behaviour differs from the stored snapshot")
        self.scenario_id = scenario_id
        self.diff = diff

    def render(self) -> str:
        """Returns the message with the unified diff."""
        return (f"SNAPSHOT {self.scenario_id}: the observation differs from the stored snapshot\n"
                f"(re-run with --snapshot-update if the change is intended)\n{self.diff}")

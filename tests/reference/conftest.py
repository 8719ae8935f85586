"""Fixtures of the reference's tests."""

from __future__ import annotations

import tempfile

import pytest


@pytest.fixture(scope="module")
def examples_in_tmp(tmp_path_factory: pytest.TempPathFactory):
    """Makes ``tempfile``'s folders, for the module's tests, inside a folder of pytest's own.

    The property tests build a fresh tree per hypothesis example with ``tempfile.mkdtemp`` (function-
    scoped fixtures do not mix with ``@given``); this puts those trees with the other tests' temporary
    folders (a memory file system where the suite found one: tests/conftest.py).
    """
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tempfile, "tempdir", str(tmp_path_factory.mktemp("examples")))
        yield

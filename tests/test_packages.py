"""harness/util/packages.py: a package's submodules imported without its __init__, which runs on first use."""

import sys

import pytest

from harness.util.packages import deferred_init


@pytest.fixture
def package(tmp_path, monkeypatch):
    root = tmp_path / "deferredpkg"
    (root / "sub").mkdir(parents=True)
    (root / "__init__.py").write_text("import builtins\nbuiltins.deferredpkg_runs += 1\nNAME = 'init ran'\n")
    (root / "sub" / "__init__.py").write_text("import builtins\nbuiltins.deferredpkg_sub_runs += 1\n")
    (root / "sub" / "leaf.py").write_text("VALUE = 42\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import builtins
    monkeypatch.setattr(builtins, "deferredpkg_runs", 0, raising=False)
    monkeypatch.setattr(builtins, "deferredpkg_sub_runs", 0, raising=False)
    yield builtins
    for name in [n for n in sys.modules if n == "deferredpkg" or n.startswith("deferredpkg.")]:
        del sys.modules[name]


def test_a_submodule_imports_without_the_packages_init(package):
    deferred_init("deferredpkg", "deferredpkg.sub")
    from deferredpkg.sub.leaf import VALUE
    assert VALUE == 42
    assert (package.deferredpkg_runs, package.deferredpkg_sub_runs) == (0, 0)


def test_the_init_runs_once_on_first_use_of_its_names(package):
    deferred_init("deferredpkg")
    import deferredpkg.sub.leaf  # noqa: F401
    assert package.deferredpkg_sub_runs == 1  # not deferred: runs as usual
    import deferredpkg
    from deferredpkg import NAME
    assert NAME == deferredpkg.NAME == "init ran" and package.deferredpkg_runs == 1
    with pytest.raises(AttributeError):
        deferredpkg.missing  # noqa: B018


def test_a_package_already_imported_is_left_as_it_is(package):
    import deferredpkg
    deferred_init("deferredpkg")
    assert sys.modules["deferredpkg"] is deferredpkg and package.deferredpkg_runs == 1

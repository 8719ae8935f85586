"""Installing the harness as a newcomer does: from a fresh clone, into another project's .venv.

These build a wheel and a virtual environment (a minute on a quiet machine): they carry the
``install`` mark, which ``make test`` leaves out and ``make test-install`` runs.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

pytestmark = pytest.mark.install
ROOT = Path(__file__).resolve().parents[1]
# This machine's pip configuration names package folders that may be absent; pip says so for every
# package it looks up. That is the machine's, not the project's: those lines are not counted.
MACHINE_NOISE = "is ignored: it is neither a file nor a directory"
# The other project's Python sees only its .venv (never this checkout through PYTHONPATH).
ENV = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYTHONHOME")}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A fresh clone of the committed project and the wheel pip builds from it (with pip's output)."""
    work = tmp_path_factory.mktemp("install")
    clone = work / "clone"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    out = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(work / "dist"), str(clone)],
                         capture_output=True, text=True)
    wheels = sorted((work / "dist").glob("*.whl"))
    return work, out, wheels[0] if wheels else None


def test_building_and_installing_prints_no_warning(built):
    work, out, wheel = built
    assert out.returncode == 0, out.stderr
    text = out.stdout + out.stderr
    warnings = [line for line in text.splitlines() if "warn" in line.lower() and MACHINE_NOISE not in line]
    assert warnings == []
    assert "deprecated" not in text.lower()
    metadata = subprocess.run([sys.executable, "-c", f"import zipfile; z = zipfile.ZipFile({str(wheel)!r}); "
                               "print(z.read(next(n for n in z.namelist() if n.endswith('METADATA'))).decode())"],
                              capture_output=True, text=True, check=True).stdout
    requires = [line.split(":", 1)[1].strip() for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    runtime = [r for r in requires if "extra ==" not in r]
    assert not any(r.startswith(("pytest-xdist", "hypothesis")) for r in runtime), runtime
    assert any(r.startswith("pytest-xdist") and "extra == \"test\"" in r for r in requires)
    assert "License-Expression: MIT" in metadata
    names = subprocess.run([sys.executable, "-c", f"import zipfile; print(*zipfile.ZipFile({str(wheel)!r}).namelist())"],
                           capture_output=True, text=True, check=True).stdout.split()
    catalog = [n for n in names if n.startswith("harness/builtin_scenarios/") and n.endswith(".yaml")]
    assert len(catalog) == len(list((ROOT / "scenarios").rglob("*.yaml")))


def test_an_editable_install_prints_no_warning_and_runs_the_checkout(built):
    # `make` installs the clone editable: a package mapped to a folder of another name made setuptools
    # use an import hook and print its "Editable installation" warning block.
    work, _, _ = built
    clone, venv = work / "clone", work / "editable-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True, env=ENV).stdout.strip())
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")  # as below: not under test
    out = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-e", str(clone)],
                         capture_output=True, text=True, env=ENV)
    assert out.returncode == 0, out.stderr
    text = out.stdout + out.stderr
    assert [line for line in text.splitlines() if "warn" in line.lower() and MACHINE_NOISE not in line] == []
    assert "Editable installation" not in text
    where = subprocess.run([str(python), "-c", "import harness.scenario.profiles as p; print(p.__file__); print(p.builtin_dir())"],
                           cwd=work, capture_output=True, text=True, check=True, env=ENV).stdout.split()
    assert where == [str(clone / "harness" / "scenario" / "profiles.py"), str(clone / "scenarios")]


def test_pytest_harness_catalog_runs_in_another_project_with_a_venv(built):
    work, out, wheel = built
    assert wheel is not None, out.stderr
    project = work / "other-project"
    venv = project / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True, env=ENV).stdout.strip())
    # The harness's dependencies come from this environment (their installation is not under test);
    # the harness itself is the wheel, installed into the project's .venv.
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site), str(wheel)],
                   check=True, capture_output=True)
    where = subprocess.run([str(python), "-c", "import harness; print(harness.__file__)"], cwd=project,
                           capture_output=True, text=True, check=True, env=ENV).stdout
    assert where.startswith(str(site))
    (project / "tests").mkdir()
    (project / "tests" / "test_mine.py").write_text("def test_mine():\n    assert True\n")
    run = subprocess.run([str(python), "-m", "pytest", "--harness-catalog", "-q", "-p", "no:cacheprovider",
                          "-k", "mine or aptix-tul-004/catalog"], cwd=project, capture_output=True, text=True, env=ENV)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    counts = run.stdout.strip().splitlines()[-1]
    passed = int(counts.split(" passed")[0].split()[-1])
    assert passed >= 2  # the project's own test and the catalog's aptix-tul-004/catalog scenarios

"""Ships the catalog inside the wheel: the checkout's scenarios/ becomes harness/builtin_scenarios/.

The packages sit where their names say (pyproject.toml maps "" to the project folder), so an editable
install is one path entry. Mapping a package to a folder of another name (harness.builtin_scenarios
to scenarios/) would make setuptools fall back to an import hook for the editable install, with its
warning about folders named like the package. So the catalog is copied in when a wheel is built, and
an editable install reads scenarios/ in the checkout (harness.scenario.profiles.builtin_dir).
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildWithCatalog(build_py):
    """build_py, plus the catalog's YAML files copied to harness/builtin_scenarios/ (wheels only)."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return
        for source in sorted(Path("scenarios").rglob("*.yaml")):
            target = Path(self.build_lib, "harness", "builtin_scenarios", source.relative_to("scenarios"))
            self.mkpath(str(target.parent))
            self.copy_file(str(source), str(target))


setup(cmdclass={"build_py": BuildWithCatalog})

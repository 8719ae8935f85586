"""The HTML report in a real headless browser (Debian's chromium): it loads cleanly and shows the matrix.

``make report-screenshot`` installs chromium when it is missing and runs this file; elsewhere (CI
without a browser, ``make test``) the tests skip, saying why.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from harness.cli.main import main

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [pytest.mark.live,
              pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (make report-screenshot installs it)")]
PROFILES = ("aptix-tul-004", "mcp-write-text-file")


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("browser")
    args = [arg for profile in PROFILES for arg in ("--profile", profile)]
    main(["run", "-q", "--no-snapshots", "--json", str(out / "ref.json"), *args])
    assert main(["report", str(out / "ref.json"), "-q", "--html", str(out / "report.html")]) == 0
    return out / "report.html"


def load(page: Path, fragment: str = "") -> tuple[str, str]:
    """Returns the DOM after the page's scripts ran, and the browser's log."""
    done = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                           "--enable-logging=stderr", "--v=0", "--dump-dom", page.as_uri() + fragment],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, done.stderr


def test_the_report_loads_without_console_messages_and_shows_the_matrix(page):
    dom, log = load(page)
    assert not re.findall(r"CONSOLE[^\n]*", log), log  # the page logs nothing, errors included
    assert 'data-ready="1"' in dom  # the script ran to its end
    assert '<table id="matrix">' in dom
    rows = re.findall(r'<tr class="row[^"]*" data-group="[^"]+" data-profile="([^"]+)"', dom)
    assert set(rows) == set(PROFILES) and len(rows) > 20
    assert "hidden" not in " ".join(re.findall(r'<tr class="(row[^"]*)"', dom))


def test_a_profile_filter_in_the_link_hides_the_other_profiles(page):
    dom, log = load(page, "#profile=mcp-write-text-file")
    assert not re.findall(r"CONSOLE[^\n]*", log), log
    classes = dict.fromkeys(PROFILES, set())
    for css, profile in re.findall(r'<tr class="(row[^"]*)" data-group="[^"]+" data-profile="([^"]+)"', dom):
        classes[profile] = classes[profile] | {css}
    assert classes["aptix-tul-004"] == {"row hidden"}
    assert classes["mcp-write-text-file"] == {"row"}

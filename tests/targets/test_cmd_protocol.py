"""The protocol as data: the shipped JSON Schema, the reference's adapter, and the documented session.

Every message in ``docs/cmd-protocol.md``'s example session must validate against the schema, and
the reference's adapter (``python -m reference_impl.serve``) must answer the requests of that
session with responses of the same shape.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema_rs
import pytest

from harness.targets.cmd.target import ResponseChecker, _skeleton, protocol_schema
from reference_impl.serve import Server, answer, serve

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "cmd-protocol.md"


def validator(definition: str):
    schema = protocol_schema()
    return jsonschema_rs.Draft202012Validator({"$defs": schema["$defs"], "$ref": f"#/$defs/{definition}"})


def test_the_schema_is_a_valid_json_schema() -> None:
    jsonschema_rs.meta.validate(protocol_schema())


@pytest.mark.parametrize(
    ("definition", "message", "valid"),
    [
        ("request", {"op": "hello", "protocol": 1}, True),
        ("request", {"op": "open", "session": "s1", "profile": "claude-code", "workspace": "/w", "options": {}}, True),
        ("request", {"op": "open", "session": "s1", "profile": "claude-code", "workspace": "rel", "options": {}}, False),
        ("call-response", {"ok": True, "output": {"any": ["json"]}}, True),
        ("call-response", {"ok": True, "error": {"code": -32002, "message": "Permission denied: /x"}}, True),
        ("call-response", {"ok": True, "error": {"code": None, "message": "m"}, "events": [{"e": 1}]}, True),
        ("call-response", {"ok": True, "output": 1, "error": {"code": None, "message": "m"}}, False),
        ("call-response", {"ok": True}, False),
        ("call-response", {"ok": True, "error": {"code": 1.5, "message": "m"}}, False),
        ("call-response", {"ok": True, "output": 1, "extra": 2}, False),
        ("failure-response", {"ok": False, "reason": "unknown tool 'X'"}, True),
        ("hello-response", {"ok": True, "name": "x", "version": "1", "profiles": ["a"]}, True),
        ("hello-response", {"ok": True, "name": "x", "version": "1", "profiles": ["a"], "protocol": 2}, True),
        ("hello-response", {"ok": True, "name": "x", "version": "1"}, False),
        ("ack-response", {"ok": True}, True),
        ("ack-response", {"level": "info", "msg": "started"}, False),
    ],
)
def test_the_schema_pins_each_message(definition: str, message: dict, valid: bool) -> None:
    assert validator(definition).is_valid(message) is valid


def test_the_memo_is_sound_because_output_and_event_items_are_unconstrained() -> None:
    # ResponseChecker remembers verdicts per skeleton; that holds only while the schema
    # constrains nothing below the members of `error`.
    call = protocol_schema()["$defs"]["call-response"]["oneOf"]
    assert call[0]["properties"]["output"] is True
    assert protocol_schema()["$defs"]["events"] == {"description": protocol_schema()["$defs"]["events"]["description"], "type": "array"}
    checker = ResponseChecker(protocol_schema())
    assert checker.problem("call", {"ok": True, "output": "a"}) is None
    assert checker.problem("call", {"ok": True, "output": "b"}) is None  # from the memo
    assert checker.problem("call", {"ok": True, "output": "a", "x": 1}) is not None
    assert checker.problem("call", {"ok": True, "error": {"code": 1.5, "message": "m"}}) is not None
    assert checker.problem("call", {"ok": True, "error": {"code": 1.0, "message": "m"}}) is None
    assert _skeleton("call", {"ok": True, "output": 1}) != _skeleton("open", {"ok": True, "output": 1})


def test_invalid_responses_are_never_remembered_as_valid() -> None:
    checker = ResponseChecker(protocol_schema())
    for _ in range(2):
        assert checker.problem("open", {"ok": True, "output": 1}) is not None
        assert checker.problem("call", {"ok": "yes", "output": 1}) is not None



def test_a_checker_compiles_an_operations_validator_at_its_first_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    # The in-process reference answers only calls: its run compiles no other operation's validator.
    from harness.targets.cmd import protocol
    made: list[str] = []
    compile_one = protocol.schemas.validator

    def noted(schema, **kwargs):
        made.append(schema["anyOf"][0]["$ref"])
        return compile_one(schema, **kwargs)
    monkeypatch.setattr(protocol.schemas, "validator", noted)
    checker = ResponseChecker(protocol_schema())
    assert made == []
    assert checker.problem("call", {"ok": True, "output": "a"}) is None
    assert checker.problem("call", {"ok": True, "output": 1, "events": []}) is None  # another skeleton
    assert made == ["#/$defs/call-response"]
    assert checker.problem("bye", {"ok": True}) is None
    assert made == ["#/$defs/call-response", "#/$defs/ack-response"]

# -- the reference's adapter -------------------------------------------------------------------


def ask(server: Server, request: dict) -> dict:
    return json.loads(answer(server, json.dumps(request).encode()))


def test_serve_answers_the_five_ops(tmp_path: Path) -> None:
    server = Server()
    hello = ask(server, {"op": "hello", "protocol": 1})
    assert hello["ok"] and hello["name"] == "reference" and "claude-code" in hello["profiles"]
    assert ask(server, {"op": "open", "session": "s1", "profile": "claude-code", "workspace": str(tmp_path), "options": {}}) == {"ok": True}
    written = ask(server, {"op": "call", "session": "s1", "tool": "Write", "args": {"file_path": str(tmp_path / "a"), "content": "x"}})
    assert written["ok"] and "output" in written
    assert (tmp_path / "a").read_text() == "x"
    assert ask(server, {"op": "close", "session": "s1"}) == {"ok": True}
    assert ask(server, {"op": "bye"}) == {"ok": True}
    assert server.done


@pytest.mark.parametrize(
    ("request_", "reason"),
    [
        ({"op": "dance"}, "unknown op 'dance'"),
        ({"op": "hello", "protocol": 2}, "unsupported protocol version 2"),
        ({"op": "open", "session": "s1", "profile": "nope", "workspace": "/tmp", "options": {}}, "unknown profile 'nope'"),
        ({"op": "call", "session": "s9", "tool": "Read", "args": {}}, "no open session 's9'"),
        ({"op": "close", "session": "s9"}, "no open session 's9'"),
        ([1, 2], "must be a JSON object"),
    ],
)
def test_serve_reports_adapter_failures_as_ok_false(request_, reason: str) -> None:
    response = ask(Server(), request_)
    assert response["ok"] is False
    assert reason in response["reason"]


def test_serve_reports_an_unknown_tool_and_bad_json(tmp_path: Path) -> None:
    server = Server()
    ask(server, {"op": "open", "session": "s1", "profile": "claude-code", "workspace": str(tmp_path), "options": {}})
    assert "unknown tool 'Nope'" in ask(server, {"op": "call", "session": "s1", "tool": "Nope", "args": {}})["reason"]
    assert "not JSON" in json.loads(answer(server, b"{nope"))["reason"]


def test_serve_turns_an_internal_crash_into_ok_false(tmp_path: Path, monkeypatch) -> None:
    server = Server()
    ask(server, {"op": "open", "session": "s1", "profile": "claude-code", "workspace": str(tmp_path), "options": {}})

    def boom(tool, args):
        raise RuntimeError("kaput")

    monkeypatch.setattr(server.sessions["s1"], "call", boom)
    response = ask(server, {"op": "call", "session": "s1", "tool": "Read", "args": {}})
    assert response == {"ok": False, "reason": "internal error: RuntimeError: kaput"}


def test_serve_stops_at_bye_and_skips_blank_lines() -> None:
    out = io.BytesIO()
    serve(io.BytesIO(b'\n{"op": "hello", "protocol": 1}\n{"op": "bye"}\n{"op": "hello", "protocol": 1}\n'), out)
    lines = out.getvalue().splitlines()
    assert len(lines) == 2 and json.loads(lines[1]) == {"ok": True}


def test_serve_keeps_stdout_for_the_protocol_alone() -> None:
    # A stray print inside the process must land on stderr, never in the protocol stream.
    script = "import reference_impl.serve as s, sys\nold=s.Server.hello\n" \
             "def hello(self, r):\n    print('stray print from a tool')\n    return old(self, r)\n" \
             "s.Server.hello=hello\ns.Server.OPS['hello']=hello\ns.main()\n"
    done = subprocess.run([sys.executable, "-c", script], input=b'{"op": "hello", "protocol": 1}\n{"op": "bye"}\n',
                          capture_output=True, timeout=30, cwd=ROOT)
    lines = done.stdout.splitlines()
    assert [json.loads(line)["ok"] for line in lines] == [True, True]
    assert b"stray print from a tool" in done.stderr


# -- the documented example session ------------------------------------------------------------


def documented_session() -> list[tuple[str, dict]]:
    """Returns the (direction, message) pairs of the doc's example session, '->' sent, '<-' received."""
    text = DOC.read_text(encoding="utf-8")
    block = text.split("<!-- example-session -->", 2)[1]
    pairs = []
    for line in block.splitlines():
        found = re.match(r"^(->|<-) (\{.*\})\s*$", line)
        if found:
            pairs.append((found.group(1), json.loads(found.group(2))))
    return pairs


def test_the_documented_session_validates_against_the_schema() -> None:
    pairs = documented_session()
    assert {m["op"] for d, m in pairs if d == "->"} == {"hello", "open", "call", "close", "bye"}
    checker = ResponseChecker(protocol_schema())
    requests = validator("request")
    last_op = None
    for direction, message in pairs:
        if direction == "->":
            assert requests.is_valid(message), message
            last_op = message["op"]
        else:
            assert checker.problem(last_op, message) is None, message
    responses = [m for d, m in pairs if d == "<-"]
    assert any("error" in m for m in responses) and any(m.get("ok") is False for m in responses)


def test_the_reference_answers_the_documented_session_word_for_word(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    pairs = [(d, json.loads(json.dumps(m).replace("/tmp/ws", str(workspace)))) for d, m in documented_session()]
    stdin = "".join(json.dumps(m) + "\n" for d, m in pairs if d == "->").encode()
    done = subprocess.run([sys.executable, "-m", "reference_impl.serve"], input=stdin, capture_output=True,
                          timeout=60, cwd=ROOT)
    observed = [json.loads(line) for line in done.stdout.splitlines()]
    assert observed == [m for d, m in pairs if d == "<-"]
    assert done.returncode == 0

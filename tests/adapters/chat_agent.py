"""A stand-in coding agent for the agent-target tests: speaks Chat Completions to $AGENT_BASE_URL.

It sends the prompt with one tool offered (``read``, ``{"filePath"}``), runs every tool call the
model makes (reads the file; a missing file is an error it prints as a JSON line, as real agents
report tool errors on stdout), sends the result back, and exits when the model answers with text.
``AGENT_MODE=exit-early`` makes it exit without answering the first call; ``AGENT_MODE=title`` sends
a title request without tools first, as OpenCode does.
"""

import json
import os
import sys
import urllib.request

BASE = os.environ["AGENT_BASE_URL"]
MODE = os.environ.get("AGENT_MODE", "")
TOOLS = [{"type": "function", "function": {"name": "read", "parameters": {"type": "object", "properties": {"filePath": {"type": "string"}}}}}]


def ask(messages, tools=TOOLS):
    body = {"model": "fake", "messages": messages, "stream": False}
    if tools:
        body["tools"] = tools
    request = urllib.request.Request(BASE + "/v1/chat/completions", data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as answer:
        return json.loads(answer.read())["choices"][0]["message"]


if MODE == "title":
    ask([{"role": "user", "content": "Generate a title"}], tools=None)
messages = [{"role": "user", "content": sys.argv[1]}]
while True:
    message = ask(messages)
    calls = message.get("tool_calls") or []
    if not calls:
        print(json.dumps({"type": "done", "text": message.get("content")}), flush=True)
        break
    if MODE == "exit-early":
        sys.exit(3)
    messages.append({"role": "assistant", "content": None, "tool_calls": calls})
    for call in calls:
        path = json.loads(call["function"]["arguments"])["filePath"]
        try:
            with open(path, encoding="utf-8") as handle:
                text, failed = handle.read(), False
        except OSError as exc:
            text, failed = f"cannot read {path}: {exc.strerror}", True
        print(json.dumps({"type": "tool", "id": call["id"], "failed": failed}), flush=True)
        messages.append({"role": "tool", "tool_call_id": call["id"], "content": text})

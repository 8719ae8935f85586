"""A cmd: candidate that leaves a temporary file behind on every call (``tempfile.mkstemp``, never
removed, as a careless tool does) and answers with its path."""

import json
import os
import sys
import tempfile

for line in sys.stdin:
    op = json.loads(line)["op"]
    answer = {"ok": True}
    if op == "hello":
        answer.update(name="litter", version="1", profiles=["claude-code"])
    elif op == "call":
        handle, path = tempfile.mkstemp(prefix="litter-")
        os.close(handle)
        answer["output"] = path
    print(json.dumps(answer), flush=True)

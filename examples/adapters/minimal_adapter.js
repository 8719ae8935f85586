#!/usr/bin/env node
// Example: a complete cmd: adapter in Node.js, no dependencies (protocol version 1).
//
// It serves one profile, `mcp-write-text-file`, with a toy `write_text_file` standing in for your
// implementation: replace it with a call into your own code. Try it:
//
//   harness run --target "cmd:node examples/adapters/minimal_adapter.js" --profile mcp-write-text-file
//
// One JSON object per line in, exactly one per line out, in order. Nothing but protocol lines on
// stdout: log with console.error, never console.log.
"use strict";
const fs = require("fs");
const path = require("path");
const readline = require("readline");

const PROFILES = ["mcp-write-text-file"];

class ToolError extends Error {
  constructor(code, message) { super(message); this.code = code; }
}

function writeTextFile(workspace, args) {
  const p = args.path;
  if (!path.isAbsolute(p)) throw new ToolError(-32600, `Path must be absolute: ${p}`);
  const created = !fs.existsSync(p);
  try {
    fs.writeFileSync(p, args.content, "utf8");
  } catch (e) {
    if (e.code === "EACCES" || e.code === "EPERM") throw new ToolError(-32002, `Permission denied: ${p}`);
    if (e.code === "ENOENT") throw new ToolError(-32001, `Parent directory not found: ${path.dirname(p)}`);
    if (e.code === "EISDIR") throw new ToolError(-32003, `${p} is a directory`);
    throw new ToolError(-32603, e.message);
  }
  return { success: true, bytes_written: Buffer.byteLength(args.content, "utf8"), created };
}

const TOOLS = { "mcp-write-text-file": { write_text_file: writeTextFile } };
const sessions = new Map();

function handle(req) {
  switch (req.op) {
    case "hello":
      if (req.protocol !== 1) return { ok: false, reason: `unsupported protocol ${req.protocol}` };
      return { ok: true, name: "minimal-node", version: "0.1.0", profiles: PROFILES };
    case "open":
      if (!PROFILES.includes(req.profile)) return { ok: false, reason: `unknown profile ${req.profile}` };
      sessions.set(req.session, { profile: req.profile, workspace: req.workspace });
      return { ok: true };
    case "call": {
      const session = sessions.get(req.session);
      if (!session) return { ok: false, reason: `no open session ${req.session}` };
      const tool = TOOLS[session.profile][req.tool];
      if (!tool) return { ok: false, reason: `unknown tool ${req.tool}` };
      try {
        return { ok: true, output: tool(session.workspace, req.args) };
      } catch (e) {
        if (e instanceof ToolError) return { ok: true, error: { code: e.code, message: e.message } };
        throw e;
      }
    }
    case "close":
      sessions.delete(req.session);
      return { ok: true };
    case "bye":
      return { ok: true };
    default:
      return { ok: false, reason: `unknown op ${req.op}` };
  }
}

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on("line", (line) => {
  let req = {};
  let res;
  try {
    req = JSON.parse(line);
    res = handle(req);
  } catch (e) {
    console.error(`adapter error: ${e.stack}`);
    res = { ok: false, reason: `internal error: ${e.message}` };
  }
  process.stdout.write(JSON.stringify(res) + "\n");
  if (req.op === "bye") rl.close();
});

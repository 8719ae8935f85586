#!/usr/bin/env node
/**
 * gemini-cli's real file tools behind the harness's cmd: protocol (docs/cmd-protocol.md).
 *
 * The tool classes (read_file, write_file, replace, read_many_files, glob, list_directory,
 * grep_search) are constructed directly from
 * the pinned @google/gemini-cli-core package (tools/gemini-cli/package.json) with a real `Config`
 * set up non-interactively: approval mode YOLO (no confirmation prompts), no model client (the
 * LLM-based edit correction is off, as it is by default), no network, and HOME, GEMINI_CLI_HOME
 * and TMPDIR inside a scratch folder of this process that is removed at exit.
 *
 * One call = what gemini-cli's tool executor does with a model's function call: build the
 * invocation (parameter validation), execute it, and hand the model `{output: llmContent}` or
 * `{error: error.message}`. Here that is `{"output": llmContent}` or
 * `{"error": {"code": <ToolErrorType>, "message": error.message}}`.
 * `events` lists the telemetry events the call logged (which edit strategy applied, file
 * operations), read through a recorder put in place of the usage-statistics logger; nothing is
 * sent anywhere.
 *
 * Standard output belongs to the protocol: every console method writes to standard error.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';

const PROTOCOL = 1;
const TOOLS = ['read_file', 'write_file', 'replace', 'read_many_files', 'glob', 'list_directory', 'grep_search'];
const PROFILES = ['gemini-cli-captured', 'gemini-safe-patch'];

// -- the process's own surroundings, before the package is loaded ----------------------------------

const protocolOut = process.stdout.write.bind(process.stdout);
for (const name of ['log', 'info', 'debug', 'warn', 'error', 'trace', 'dir']) {
  console[name] = (...args) => process.stderr.write(args.map(String).join(' ') + '\n');
}

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'harness-gemini-'));
// Each session gets this HOME afresh (see freshHome), so its project registry and temp folder
// names do not depend on how many sessions came before.
const sessionHome = path.join(scratch, 'session', 'home');
fs.mkdirSync(path.join(scratch, 'tmp'));
process.env.HOME = sessionHome;
process.env.GEMINI_CLI_HOME = sessionHome;
process.env.TMPDIR = path.join(scratch, 'tmp');
// Nothing may reach a network: no telemetry, no update checks, no IDE companion.
process.env.GEMINI_TELEMETRY_ENABLED = 'false';
process.env.GEMINI_CLI_NO_RELAUNCH = 'true';
delete process.env.GEMINI_CLI_IDE_SERVER_PORT;
delete process.env.GEMINI_API_KEY;
delete process.env.GOOGLE_API_KEY;

function removeScratch() {
  try {
    fs.rmSync(scratch, { recursive: true, force: true });
  } catch {
    // best effort: it is under the machine's temp folder
  }
}
process.on('exit', removeScratch);

const core = await import('@google/gemini-cli-core');
const corePackage = JSON.parse(
  fs.readFileSync(new URL('./node_modules/@google/gemini-cli-core/package.json', import.meta.url), 'utf8'),
);

// -- telemetry: recorded, never sent --------------------------------------------------------------

/** Receives every `ClearcutLogger.log*Event(event)` call; keeps the event's stable fields. */
class TelemetryRecorder {
  constructor() {
    this.events = [];
    return new Proxy(this, {
      get: (target, prop) => {
        if (prop in target) return target[prop];
        if (typeof prop === 'string' && prop.startsWith('log')) {
          return (event) => target.events.push(stableFields(prop, event));
        }
        return () => undefined;
      },
    });
  }

  take() {
    const taken = this.events;
    this.events = [];
    return taken;
  }
}

function stableFields(method, event) {
  const out = { event: event?.['event.name'] ?? method };
  for (const [key, value] of Object.entries(event ?? {})) {
    if (key === 'event.name' || key === 'event.timestamp' || key.endsWith('duration_ms')) continue;
    if (value === undefined || typeof value === 'function') continue;
    if (value !== null && typeof value === 'object') continue;
    out[key] = value;
  }
  return out;
}

const telemetry = new TelemetryRecorder();
// getInstance returns the existing instance; ours never creates a network client.
core.ClearcutLogger.instance = telemetry;

// -- no model ---------------------------------------------------------------------------------------

/** Stands in for gemini-cli's BaseLlmClient: every method rejects, so a use shows as a tool error. */
const OFFLINE_LLM_CLIENT = new Proxy(
  {},
  {
    get: (_target, prop) =>
      prop === 'then'
        ? undefined
        : async () => {
            throw new Error(`offline conformance adapter: no model client (${String(prop)})`);
          },
  },
);

// -- sessions ----------------------------------------------------------------------------------------

function freshHome() {
  fs.rmSync(path.dirname(sessionHome), { recursive: true, force: true });
  fs.mkdirSync(sessionHome, { recursive: true });
}

class Session {
  constructor(name, workspace) {
    freshHome();
    this.config = new core.Config({
      sessionId: `conformance-${name}`,
      targetDir: workspace,
      cwd: workspace,
      debugMode: false,
      interactive: false,
      approvalMode: core.ApprovalMode.YOLO,
      model: core.DEFAULT_GEMINI_MODEL,
      telemetry: { enabled: false },
      usageStatisticsEnabled: true, // routes the events to the recorder above
      checkpointing: false,
      ideMode: false,
      folderTrust: false,
      mcpEnabled: false,
      extensionsEnabled: false,
      fileFiltering: { enableFileWatcher: false },
    });
    // No model client: anything that would ask a model fails loudly instead of reaching a network.
    this.config.baseLlmClient = OFFLINE_LLM_CLIENT;
    const bus = new core.MessageBus(this.config.getPolicyEngine?.() ?? undefined, false);
    this.tools = {
      read_file: new core.ReadFileTool(this.config, bus),
      write_file: new core.WriteFileTool(this.config, bus),
      replace: new core.EditTool(this.config, bus),
      read_many_files: new core.ReadManyFilesTool(this.config, bus),
      glob: new core.GlobTool(this.config, bus),
      list_directory: new core.LSTool(this.config, bus),
      // gemini-cli uses RipGrepTool when it can fetch ripgrep and GrepTool otherwise; offline, GrepTool
      // (git grep, then the system grep, then a JavaScript search).
      grep_search: new core.GrepTool(this.config, bus),
    };
  }

  async call(toolName, args) {
    const tool = this.tools[toolName];
    if (!tool) throw new AdapterFailure(`unknown tool '${toolName}'; this adapter offers ${TOOLS.join(', ')}`);
    telemetry.take();
    const controller = new AbortController();
    const result = await tool.validateBuildAndExecute(args ?? {}, controller.signal);
    const events = telemetry.take();
    const response = { ok: true };
    if (result.error) {
      response.error = { code: result.error.type ?? null, message: result.error.message };
    } else {
      response.output = result.llmContent ?? '';
    }
    if (events.length) response.events = events;
    return response;
  }
}

class AdapterFailure extends Error {}

const sessions = new Map();

async function handle(request) {
  switch (request.op) {
    case 'hello':
      return {
        ok: true,
        name: 'gemini-cli',
        version: corePackage.version,
        profiles: PROFILES,
      };
    case 'open': {
      if (!PROFILES.includes(request.profile)) {
        return { ok: false, reason: `unknown profile '${request.profile}'` };
      }
      const session = new Session(request.session, request.workspace);
      // The project registry and temp folders the tools consult (under the scratch HOME).
      await session.config.storage.initialize();
      sessions.set(request.session, session);
      return { ok: true };
    }
    case 'call': {
      const session = sessions.get(request.session);
      if (!session) return { ok: false, reason: `unknown session '${request.session}'` };
      return session.call(request.tool, request.args);
    }
    case 'close':
      sessions.delete(request.session);
      return { ok: true };
    case 'bye':
      return { ok: true };
    default:
      return { ok: false, reason: `unknown op '${request.op}'` };
  }
}

const input = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of input) {
  if (!line.trim()) continue;
  let request;
  let response;
  try {
    request = JSON.parse(line);
    response = await handle(request);
  } catch (err) {
    response = { ok: false, reason: err instanceof AdapterFailure ? err.message : String(err?.stack ?? err) };
  }
  protocolOut(JSON.stringify(response) + '\n');
  if (request?.op === 'bye') break;
}
removeScratch();
process.exit(0);

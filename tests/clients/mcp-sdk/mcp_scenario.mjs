// Drives `vigil mcp` with the official MCP TypeScript SDK's client (Client over
// StdioClientTransport), as an editor or a desktop agent would, and prints what happened as
// one JSON object on stdout. tests/integration/mcp_sdk_test.cc runs it.
//
//   node mcp_scenario.mjs VIGIL_BIN WORKSPACE STEPS_FILE [vigil mcp's own arguments...]
//
// STEPS_FILE holds a JSON array of steps, run in order; each step's outcome is one entry of
// "steps" in the output ({ok: true, ...} or {ok: false, error, code}):
//   {"op": "connect", "version": "1999-01-01"}  initialize (the SDK's own handshake; a
//        "version" is put in the client's initialize instead of the SDK's latest, as a
//        client from the future or the past would send it): the server's answer
//   {"op": "list"}                      tools/list
//   {"op": "call", "arguments": {...}, "name": "run_command",
//    "abort_when_file": PATH, "close_when_file": PATH, "progress": true,
//    "command_bytes": N, "lone_surrogate": true}
//        tools/call through client.callTool(), which checks structuredContent against the
//        tool's outputSchema; abort_when_file: aborts the call (AbortController) once PATH
//        exists, as a user pressing stop would; close_when_file: closes the client then
//        (the SDK's close(): stdin ends); command_bytes: the command is `: xxx...` of that
//        size; lone_surrogate: the command ends with U+D800 (JSON.stringify sends it as
//        the escape \ud800, which names no character); until_text: S, the call is made
//        again every 100 ms (for up to timeout_ms) until its text holds S (read_output)
//   {"op": "resources"}                 resources/list and resources/templates/list
//   {"op": "read", "uri": U}            resources/read through client.readResource()
//   {"op": "raw", "message": {...}, "wait_id": ID}  sent on the transport as is (no
//        handshake first when it is the first step); waits for the reply with wait_id
//   {"op": "await_gone", "marker": M, "timeout_ms": N}  polls /proc until no process has
//        M in its command line: the pids still there, and how long it took
//   {"op": "close"}                     the SDK's close(): stdin ends, then SIGTERM
// The server's stderr is in "stderr".
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [vigil, workspace, stepsJson, ...vigilArgs] = process.argv.slice(2);
const steps = JSON.parse(readFileSync(stepsJson, 'utf8'));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function pidsWithMarker(marker) {
  const found = [];
  for (const name of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'latin1');
      if (cmdline.includes(marker)) found.push(Number(name));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

// The transport, with what it sent and received kept, and the initialize's version
// replaced when a step asks for another.
function makeTransport(state) {
  const transport = new StdioClientTransport({
    command: vigil,
    args: ['mcp', ...vigilArgs],
    cwd: workspace,
    env: { ...process.env },
    stderr: 'pipe',
  });
  state.stderr = '';
  transport.stderr?.on('data', (d) => { state.stderr += d.toString(); });
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    if (message.method === 'initialize' && state.version !== undefined) {
      message = { ...message, params: { ...message.params, protocolVersion: state.version } };
    }
    state.sent.push(message);
    return send(message, options);
  };
  return transport;
}

async function main() {
  const state = { sent: [], received: [], stderr: '', version: undefined };
  const out = { steps: [] };
  let transport = makeTransport(state);
  let client = null;
  let rawStarted = false;
  const progress = [];
  for (const step of steps) {
    const r = { op: step.op };
    try {
      if (step.op === 'connect') {
        state.version = step.version;
        client = new Client({ name: 'vigil-sdk-test', version: '1.0.0' });
        // The initialize result as the server sent it (the Client keeps its version to
        // itself once it has checked it is one the SDK supports).
        const request = client.request.bind(client);
        client.request = async (...a) => {
          const res = await request(...a);
          if (a[0]?.method === 'initialize') r.initialize = res;
          return res;
        };
        await client.connect(transport);
        // Watched after connect (the Client set onmessage): every message the server sent.
        const inner = transport.onmessage;
        transport.onmessage = (m, extra) => { state.received.push(m); inner?.(m, extra); };
        const init = state.sent.find((m) => m.method === 'initialize');
        r.sent_version = init?.params?.protocolVersion;
        r.server = client.getServerVersion();
        r.capabilities = client.getServerCapabilities();
        r.instructions = client.getInstructions();
      } else if (step.op === 'list') {
        r.tools = (await client.listTools()).tools;
      } else if (step.op === 'call') {
        const args = { ...step.arguments };
        if (step.command_bytes) args.command = ': ' + 'x'.repeat(step.command_bytes);
        if (step.lone_surrogate) args.command = `${args.command ?? 'echo'} \ud800`;
        const ac = new AbortController();
        const options = { signal: ac.signal, timeout: step.timeout_ms ?? 120000 };
        if (step.progress) options.onprogress = (p) => progress.push(p);
        let watcher = null;
        let done = false;
        if (step.abort_when_file || step.close_when_file) {
          watcher = (async () => {
            while (!done && !existsSync(step.abort_when_file ?? step.close_when_file)) await sleep(10);
            if (done) return;
            if (step.abort_when_file) ac.abort('the user pressed stop');
            else await client.close();
          })();
        }
        const started = Date.now();
        try {
          for (;;) {
            r.result = await client.callTool(
              { name: step.name ?? 'run_command', arguments: args }, undefined, options);
            if (step.until_text === undefined) break;
            if ((r.result.content?.[0]?.text ?? '').includes(step.until_text)) break;
            if (Date.now() - started > (step.timeout_ms ?? 20000)) break;
            await sleep(100);
          }
        } finally {
          r.ms = Date.now() - started;
          done = true;
          if (watcher) await watcher;
        }
      } else if (step.op === 'resources') {
        r.resources = (await client.listResources()).resources;
        r.templates = (await client.listResourceTemplates()).resourceTemplates;
      } else if (step.op === 'read') {
        r.contents = (await client.readResource({ uri: step.uri })).contents;
      } else if (step.op === 'raw') {
        if (!client && !rawStarted) {
          transport.onmessage = (m) => state.received.push(m);
          await transport.start();
          rawStarted = true;
        }
        await transport.send(step.message);
        if (step.wait_id !== undefined) {
          const until = Date.now() + (step.timeout_ms ?? 30000);
          let reply;
          while (!(reply = state.received.find((m) => m.id === step.wait_id && !m.method))) {
            if (Date.now() > until) throw new Error(`no reply to ${JSON.stringify(step.wait_id)}`);
            await sleep(10);
          }
          r.reply = reply;
        }
      } else if (step.op === 'await_gone') {
        const started = Date.now();
        let left = pidsWithMarker(step.marker);
        while (left.length > 0 && Date.now() - started < (step.timeout_ms ?? 10000)) {
          await sleep(10);
          left = pidsWithMarker(step.marker);
        }
        r.left = left;
        r.ms = Date.now() - started;
      } else if (step.op === 'close') {
        if (client) await client.close();
        else await transport.close();
      } else {
        throw new Error(`unknown step ${step.op}`);
      }
      r.ok = true;
    } catch (e) {
      r.ok = false;
      r.error = String(e?.message ?? e);
      r.code = e?.code;
    }
    out.steps.push(r);
  }
  out.progress = progress;
  out.received = state.received;
  if (client) await client.close();
  else await transport.close();
  out.stderr = state.stderr;
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => {
  process.stdout.write(JSON.stringify({ fatal: String(e?.stack ?? e) }) + '\n');
  process.exit(1);
});

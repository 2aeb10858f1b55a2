#!/usr/bin/env node
// A vigil client for Node, standard library only: drives `vigil serve` (JSON-RPC 2.0,
// one JSON object per line; docs/protocol.md).
//
//   const { VigilSession } = require('./vigil_client.js');
//   const s = new VigilSession({ settings: 'sandbox.json', workspace: '/work' });
//   const r = await s.run(['make', 'test'], { cwd: '/work/sub', onOutput: (stream, buf) => {} });
//   r.exit_code, r.annotation, r.violations, r.command
//   await s.updatePolicy({ add: ['registry.npmjs.org'] });
//   s.onAsk = async (ask) => 'once'; // ask mode: 'once' | 'session' | 'always' | 'deny'
//   await s.close();
//
// The session's workspace (its writable root) is the directory `vigil serve` starts in:
// `workspace`, else this process's cwd. It is fixed for the session: a command's `cwd`
// (default: the workspace) must lie inside it, or the run is refused (the promise rejects).
//
// As a program it runs one command like `vigil run` does:
//   vigil_client.js [--vigil BIN] [--settings F] [--log L] [--allow DOMAIN]...
//                   [--answer once|session|always|deny|none] -- CMD ARGS...
'use strict';
const { spawn } = require('node:child_process');
const readline = require('node:readline');

// A byte string of the protocol: text, or {"b64": ...} when it is not UTF-8.
function bytes(value) {
  return typeof value === 'string' ? Buffer.from(value, 'utf8') : Buffer.from(value.b64, 'base64');
}

class VigilSession {
  constructor({ vigil = 'vigil', settings, log, extraArgs = [], workspace } = {}) {
    const argv = ['serve'];
    if (settings) argv.push('--settings', settings);
    if (log) argv.push('--log', log);
    this.proc = spawn(vigil, argv.concat(extraArgs), {
      stdio: ['pipe', 'pipe', 'inherit'],
      cwd: workspace,
    });
    this.nextId = 1;
    this.pending = new Map(); // request id -> { resolve, reject, onOutput }
    this.onEvent = null; // (command id, record) for every log record
    this.onAsk = null; // (ask params) -> answer (or a promise of one); null: no answer
    // vigil not there (or not runnable): every call rejects with what to do, never an
    // unhandled 'error' event with a stack trace.
    this.startError = null;
    this.proc.on('error', (err) => {
      this.startError = new Error(err.code === 'ENOENT'
        ? `cannot run ${vigil}: not found on PATH. Install vigil (see its README) or give its path (--vigil BIN on the command line, { vigil: '/path/to/vigil' } in code)`
        : `cannot run ${vigil}: ${err.message}`);
      for (const p of this.pending.values()) p.reject(this.startError);
      this.pending.clear();
    });
    this.exited = new Promise((resolve) => {
      this.proc.on('exit', resolve);
      this.proc.on('error', () => resolve(null));
    });
    const lines = readline.createInterface({ input: this.proc.stdout });
    lines.on('line', (line) => this.receive(JSON.parse(line)));
    lines.on('close', () => {
      for (const p of this.pending.values()) p.reject(new Error('vigil serve exited'));
      this.pending.clear();
    });
  }

  receive(msg) {
    if (msg.id !== undefined && msg.method === undefined) {
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      if (msg.error) p.reject(new Error(msg.error.message));
      else p.resolve(msg.result);
    } else if (msg.method === 'output') {
      const p = this.pending.get(msg.params.request);
      if (p && p.onOutput) p.onOutput(msg.params.stream, bytes(msg.params.data));
    } else if (msg.method === 'event' && this.onEvent) {
      this.onEvent(msg.params.command, msg.params.record);
    } else if (msg.method === 'ask') {
      Promise.resolve(this.onAsk ? this.onAsk(msg.params) : 'deny').then((answer) => {
        if (answer) this.send({ id: msg.id, result: { answer } });
      });
    }
  }

  call(method, params, onOutput) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      if (this.startError) return reject(this.startError);
      this.pending.set(id, { resolve, reject, onOutput });
      this.send({ id, method, params });
    });
  }

  send(msg) {
    if (this.proc.stdin.writable) this.proc.stdin.write(JSON.stringify({ jsonrpc: '2.0', ...msg }) + '\n');
  }

  run(argv, { cwd, env, stdin, timeout, onOutput } = {}) {
    const params = { argv };
    if (cwd !== undefined) params.cwd = cwd;
    if (env !== undefined) params.env = env;
    if (stdin !== undefined) params.stdin = stdin;
    if (timeout !== undefined) params.timeout = timeout;
    return this.call('run', params, onOutput);
  }

  // A background command: its status ({ handle: 'bg-N', ... }) at once.
  start(argv, { cwd, env, stdin, timeout } = {}) {
    const params = { argv, background: true };
    for (const [k, v] of Object.entries({ cwd, env, stdin, timeout })) if (v !== undefined) params[k] = v;
    return this.call('run', params);
  }

  // Its output from `offset` (data as a Buffer, next_offset; dropped when no longer kept).
  async output(handle, offset = 0) {
    const r = await this.call('output', { handle, offset });
    return { ...r, data: bytes(r.data) };
  }

  wait(handle, timeoutMs = 0) { return this.call('wait', { handle, timeout: timeoutMs }); }

  async kill(handle) { return (await this.call('kill', { handle })).killed; }

  async background() { return (await this.call('list', {})).commands; }

  updatePolicy({ add = [], remove = [] } = {}) {
    return this.call('policy.update', { add, remove });
  }

  async close() {
    this.proc.stdin.end();
    return this.exited;
  }
}

async function main(args) {
  const opts = { answer: 'deny' };
  const allow = [];
  while (args.length && args[0] !== '--') {
    const [flag, value] = args.splice(0, 2);
    if (flag === '--allow') allow.push(value);
    else opts[flag.slice(2)] = value;
  }
  const command = args.slice(1);
  if (!command.length) {
    process.stderr.write('usage: vigil_client.js [--vigil BIN] [--settings F] -- CMD ARGS...\n');
    return 2;
  }
  const s = new VigilSession(opts);
  s.onAsk = () => (opts.answer === 'none' ? null : opts.answer);
  if (allow.length) await s.updatePolicy({ add: allow });
  const result = await s.run(command, {
    onOutput: (stream, buf) => (stream === 'stdout' ? process.stdout : process.stderr).write(buf),
  });
  // The block is the result's (one per result), printed where `vigil run` prints it.
  if (result.annotation) process.stderr.write(result.annotation);
  await s.close();
  return result.exit_code;
}

module.exports = { VigilSession };
if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => { process.exitCode = code; },
    (err) => {
      process.stderr.write(`vigil_client: ${err.message}\n`);
      process.exitCode = /not found/.test(err.message) ? 127 : 125;
    });
}

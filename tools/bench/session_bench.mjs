// session_bench.mjs: per-command cost of an agent session, in one interleaved run.
//
//   node tools/bench/session_bench.mjs --vigil build/supervisor/vigil [--n 40] [--warm 3]
//        [--srt-pkg DIR]   (srt's package dir, e.g. node_modules/@anthropic-ai/sandbox-runtime)
//        [--vigil-before PATH]  (an earlier build: its rpc, session and alone ways join the
//                                same rounds, as rpc-before, session-before and alone-before)
//        [--no-alone]      (leave out `vigil run` without a session)
//        [--gap MS]        (a pause after each timed command, as an agent's think time:
//                           what a way leaves running in the background, a warm session's
//                           spare sandbox, is then not timed as part of the next way)
//
// Each round times `true` once per way, in a random order every round, from a throw-away
// workspace:
//   bwrap    bare bubblewrap with a minimal sandbox argv (the floor; as tools/bench/run_bench.sh)
//   rpc      a run request to a warm `vigil serve`, reply received (the JSON-RPC client's view)
//   session  `vigil run -- true` with VIGIL_SESSION set (a thin client of a warm session)
//   alone    `vigil run -- true` without a session
//   srt      srt's library, initialised once, then wrapWithSandbox + spawnSync per command
//            (session ready, as srt's README uses it); skipped without --srt-pkg
// and prints medians, p10/p90 and the ratios to bwrap and to srt.
import { execFileSync, fork, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const opt = (k, d) => { const i = args.indexOf(k); return i >= 0 ? args[i + 1] : d; };
const now = () => Number(process.hrtime.bigint()) / 1e6;

if (process.env.SESSION_BENCH_SRT) {
  // The srt worker: initialise once, then wrap + run on each request.
  const { SandboxManager } = await import(process.env.SESSION_BENCH_SRT + '/dist/index.js');
  const cfg = { network: { allowedDomains: [], deniedDomains: [] },
                filesystem: { denyRead: [], allowWrite: [process.cwd()], denyWrite: [] } };
  await SandboxManager.initialize(cfg);
  process.send({ ready: true });
  process.on('message', async (m) => {
    if (m.quit) { await SandboxManager.reset(); process.exit(0); }
    const t0 = now();
    const wrapped = await SandboxManager.wrapWithSandbox('true');
    const r = spawnSync(wrapped, { shell: true });
    SandboxManager.cleanupAfterCommand();
    process.send({ ms: now() - t0, status: r.status });
  });
} else {
  const VIGIL = opt('--vigil', 'vigil');
  const N = +opt('--n', '40');
  const WARM = +opt('--warm', '3');
  const SRT = opt('--srt-pkg', '');
  const BEFORE = opt('--vigil-before', '');
  const ALONE = !args.includes('--no-alone');
  const GAP = +opt('--gap', '0');
  const ws = mkdtempSync(tmpdir() + '/vigil-session-bench-');
  const runtime = mkdtempSync(tmpdir() + '/vigil-session-bench-rt-');
  const env = { ...process.env, XDG_RUNTIME_DIR: runtime, XDG_STATE_HOME: runtime };
  const ways = {};

  ways.bwrap = () => spawnSync('bwrap', ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc',
    '--tmpfs', '/tmp', '--bind', ws, ws, '--unshare-all', '--die-with-parent', '--new-session',
    '--cap-drop', 'ALL', '--', 'true'], { cwd: ws }).status;

  // A warm `vigil serve` and a warm `vigil session` of binary `bin`: one request at a time.
  const ends = [];
  // Each build keeps its state (logs, change stores) apart: what one leaves behind is not
  // walked by the other's accounting.
  const envOf = (tag) => {
    const state = `${runtime}/state${tag}`;
    mkdirSync(state, { recursive: true });
    return { ...env, XDG_STATE_HOME: state };
  };
  const warm = (bin, tag) => {
    const env = envOf(tag);
    const serve = spawn(bin, ['serve', '--log', `${runtime}/serve${tag}.jsonl`], { cwd: ws, env, stdio: ['pipe', 'pipe', 'ignore'] });
    const replies = new Map();
    readline.createInterface({ input: serve.stdout }).on('line', (line) => {
      const m = JSON.parse(line);
      if (m.id !== undefined && replies.has(m.id)) replies.get(m.id)(m);
    });
    let nextId = 1;
    ways['rpc' + tag] = () => new Promise((resolve) => {
      const id = nextId++;
      replies.set(id, (m) => { replies.delete(id); resolve(m.result ? m.result.exit_code : -1); });
      serve.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method: 'run', params: { argv: ['true'], cwd: ws } }) + '\n');
    });
    const started = execFileSync(bin, ['session', 'start', '--log', `${runtime}/session${tag}.jsonl`], { cwd: ws, env }).toString();
    const handle = /VIGIL_SESSION='?([^;']+)'?;/.exec(started)[1];
    const sessionEnv = { ...env, VIGIL_SESSION: handle };
    ways['session' + tag] = () => spawnSync(bin, ['run', '--', 'true'], { cwd: ws, env: sessionEnv }).status;
    ends.push({ serve, bin, handle, env });
  };
  warm(VIGIL, '');
  if (BEFORE) warm(BEFORE, '-before');
  // Whatever happens below, nothing is left running and nothing left behind.
  let srt = null;
  process.on('exit', () => {
    for (const e of ends) {
      spawnSync(e.bin, ['session', 'end', e.handle], { env: e.env });
      e.serve.kill();
    }
    if (srt) srt.kill();
    rmSync(ws, { recursive: true, force: true });
    rmSync(runtime, { recursive: true, force: true });
  });
  if (ALONE) ways.alone = () => spawnSync(VIGIL, ['run', '--', 'true'], { cwd: ws, env: envOf('') }).status;
  if (ALONE && BEFORE) ways['alone-before'] = () => spawnSync(BEFORE, ['run', '--', 'true'], { cwd: ws, env: envOf('-before') }).status;

  if (SRT) {
    srt = fork(fileURLToPath(import.meta.url), [], { cwd: ws, env: { ...process.env, SESSION_BENCH_SRT: SRT } });
    await new Promise((res) => srt.once('message', res));
    // srt's own figure: the time its worker measured (wrap + run), not the IPC around it.
    ways.srt = () => new Promise((resolve) => srt.once('message', (m) => resolve({ status: m.status, ms: m.ms })) && srt.send({}));
  }

  const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
  const loadStart = load();
  const names = Object.keys(ways);
  const times = Object.fromEntries(names.map((n) => [n, []]));
  for (let round = 0; round < WARM + N; ++round) {
    // A fresh random order every round: with a fixed rotation each way always follows the
    // same other one, and pays for what that one leaves behind (a namespace's teardown
    // runs after its process has gone) in every round.
    const order = [...names];
    for (let i = order.length - 1; i > 0; --i) {
      const j = Math.floor(Math.random() * (i + 1));
      [order[i], order[j]] = [order[j], order[i]];
    }
    for (const name of order) {
      const t0 = now();
      const r = await ways[name]();
      const ms = typeof r === 'object' ? r.ms : now() - t0;
      const status = typeof r === 'object' ? r.status : r;
      if (status !== 0) throw new Error(`${name}: exit ${status}`);
      if (round >= WARM) times[name].push(ms);
      if (GAP > 0) await new Promise((res) => setTimeout(res, GAP));
    }
  }
  const q = (a, p) => { const s = [...a].sort((x, y) => x - y); return s[Math.min(s.length - 1, Math.floor(p * s.length))]; };
  const med = Object.fromEntries(names.map((n) => [n, q(times[n], 0.5)]));
  console.log(`${N} rounds (+${WARM} warm-up), interleaved${GAP ? `, ${GAP} ms apart` : ''}; ms per command; load ${loadStart} -> ${load()} on ${cpus().length} CPUs, ${new Date().toISOString()}`);
  console.log('way              median    p10    p90   /bwrap   srt/this');
  for (const n of names) {
    const vsSrt = med.srt ? (med.srt / med[n]).toFixed(1) + 'x' : '-';
    console.log(`${n.padEnd(15)} ${med[n].toFixed(2).padStart(7)} ${q(times[n], 0.1).toFixed(2).padStart(6)} ${q(times[n], 0.9).toFixed(2).padStart(6)}  ${(med[n] / med.bwrap).toFixed(2).padStart(6)}x  ${vsSrt.padStart(8)}`);
  }
  // How many of each warm way's commands ran in a spare sandbox (session.end's counters).
  const warmCount = (log) => {
    const lines = readFileSync(log, 'utf8').trim().split('\n');
    const c = JSON.parse(lines[lines.length - 1]).counters || {};
    return `${c['commands.warm'] || 0} of ${c.commands || 0} in a spare`;
  };
  for (const [i, e] of ends.entries()) {
    const tag = i === 0 ? '' : '-before';
    e.serve.stdin.end();
    await new Promise((res) => e.serve.on('exit', res));
    spawnSync(e.bin, ['session', 'end', e.handle], { env: e.env });
    console.log(`rpc${tag}: ${warmCount(`${runtime}/serve${tag}.jsonl`)}; session${tag}: ${warmCount(`${runtime}/session${tag}.jsonl`)}`);
  }
  process.exit(0);
}

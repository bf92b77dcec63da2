// Shared helpers of the MCP tier: start `agentbox mcp` under the official TypeScript SDK
// client, make per-test fixture directories, read the audit log, scan host processes.
//
//   const fx = fixture(t);                       // temp dir with home/, state/, project/, outside/
//   const { client } = await connect(t, fx, { ceiling: { filesystem: { readwrite: [fx.project] } } });
//   const r = await client.callTool({ name: 'run_code', arguments: { argv: ['true'] } });
//
// The environment gives AGENTBOX (the executable) and MCP_NPM_DIR (where install_clients.py
// put the npm packages). Everything a test starts is closed by t.after, so nothing leaks
// into the next test.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

export const AGENTBOX = process.env.AGENTBOX ? path.resolve(process.env.AGENTBOX) : '';
export const NPM_DIR = process.env.MCP_NPM_DIR ? path.resolve(process.env.MCP_NPM_DIR) : '';
if (!AGENTBOX || !NPM_DIR) {
  throw new Error('AGENTBOX and MCP_NPM_DIR must be set; run through ctest (tests/mcp)');
}
const SDK = path.join(NPM_DIR, 'node_modules/@modelcontextprotocol/sdk/dist/esm');
const load = (relative) => import(pathToFileURL(path.join(SDK, relative)).href);

// The SDK's ESM entry points, by file (the packages live under the build tree, not beside
// this file, so bare specifiers would not resolve).
export const { Client } = await load('client/index.js');
export const { StdioClientTransport } = await load('client/stdio.js');
export const { McpError, ErrorCode, EmptyResultSchema } = await load('types.js');
export const INSPECTOR = path.join(
  NPM_DIR, 'node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js');

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Polls `predicate` (sync or async) until it is truthy or `timeoutMs` passes; returns its
// last value.
export async function waitFor(predicate, timeoutMs = 10000, intervalMs = 50) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await predicate();
    if (value || Date.now() >= deadline) return value;
    await sleep(intervalMs);
  }
}

// A unique token for argv, found later in /proc/*/cmdline.
export function unique(prefix = 'agentbox-mcp-test') {
  return `${prefix}-${process.pid}-${Math.random().toString(16).slice(2, 14)}`;
}

// A `sleep` argument no other process uses: "1000.<12 random digits>".
export function uniqueSleep(seconds = 1000) {
  let digits = '';
  while (digits.length < 12) digits += Math.floor(Math.random() * 10);
  return `${seconds}.${digits}`;
}

// Pids of host processes with `marker` in their command line.
export function processesWith(marker) {
  const found = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    let cmdline;
    try {
      cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, 'latin1');
    } catch {
      continue; // gone, or not ours to read
    }
    if (cmdline.includes(marker)) found.push(Number(entry));
  }
  return found;
}

// A per-test directory tree under /tmp, owned by the test's uid and removed after the test:
//   home/ (HOME), state/ (XDG_STATE_HOME), project/ (the server's cwd), outside/ (not granted).
// Paths are canonical (realpath), as the server reports them.
export function fixture(t) {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'agentbox-mcp-')));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  const fx = {
    root,
    home: path.join(root, 'home'),
    state: path.join(root, 'state'),
    project: path.join(root, 'project'),
    outside: path.join(root, 'outside'),
    get auditLog() {
      return path.join(this.state, 'agentbox', 'audit.jsonl');
    },
    path: (...parts) => path.join(root, ...parts),
    write(relative, content, mode = 0o644) {
      const p = path.join(root, relative);
      fs.mkdirSync(path.dirname(p), { recursive: true });
      fs.writeFileSync(p, content);
      fs.chmodSync(p, mode);
      return p;
    },
    mkdir(relative) {
      const p = path.join(root, relative);
      fs.mkdirSync(p, { recursive: true });
      return p;
    },
    symlink(relative, target) {
      const p = path.join(root, relative);
      fs.mkdirSync(path.dirname(p), { recursive: true });
      fs.symlinkSync(target, p);
      return p;
    },
  };
  for (const d of [fx.home, fx.state, fx.project, fx.outside]) fs.mkdirSync(d, { recursive: true });
  return fx;
}

// The server's environment: only what a client like Claude Code would pass, with HOME and
// XDG_STATE_HOME in the fixture (so the default audit log is the fixture's), and no
// AGENTBOX_* ceiling variables from the caller.
// A variable given as undefined in `extra` is left out.
export function serverEnv(fx, extra = {}) {
  const env = {
    HOME: fx.home,
    XDG_STATE_HOME: fx.state,
    PATH: '/usr/local/bin:/usr/bin:/bin',
    LANG: 'C.UTF-8',
    ...extra,
  };
  for (const key of Object.keys(env)) if (env[key] === undefined) delete env[key];
  return env;
}

// Starts `agentbox mcp ARGS` with the SDK client and lists the tools (which also loads the
// SDK's outputSchema validators, so every later structuredContent is checked against them).
//   opts.ceiling: an object written to a file and passed as --ceiling
//   opts.args: more arguments; opts.env: more environment; opts.cwd (default fx.project)
//   opts.auditLog: --audit-log (default: none given, so $XDG_STATE_HOME/agentbox/audit.jsonl)
export async function connect(t, fx, opts = {}) {
  const args = ['mcp'];
  if (opts.ceiling) {
    const file = fx.write(`ceiling-${Math.random().toString(16).slice(2)}.json`,
                          JSON.stringify(opts.ceiling));
    args.push('--ceiling', file);
  }
  if (opts.auditLog) args.push('--audit-log', opts.auditLog);
  args.push(...(opts.args ?? []));
  const transport = new StdioClientTransport({
    command: AGENTBOX,
    args,
    env: serverEnv(fx, opts.env),
    cwd: opts.cwd ?? fx.project,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk) => { stderr += chunk; });
  const client = new Client({ name: opts.clientName ?? 'agentbox-tests', version: '1.0.0' },
                            { capabilities: {} });
  t.after(async () => {
    await client.close().catch(() => {});
  });
  await client.connect(transport);
  const { tools } = await client.listTools();
  return { client, transport, tools, stderr: () => stderr, pid: transport.pid };
}

// The ceiling most tests use: the project read-write, network blocked.
export function projectCeiling(fx, extra = {}) {
  return { filesystem: { readwrite: [fx.project], ...(extra.filesystem ?? {}) },
           network: 'block', timeoutMs: 30000, ...extra.top };
}

export const callTool = (client, name, args, options) =>
  client.callTool({ name, arguments: args }, undefined, options);

// The one text block of an isError result.
export function errorText(result) {
  return (result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

// Audit log records, one object per line (throws on a line that is not JSON).
export function readAudit(file) {
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    if (e.code === 'ENOENT') return [];
    throw e;
  }
  return text.split('\n').filter((l) => l.length > 0).map((l) => JSON.parse(l));
}

// Runs `agentbox ARGS` to completion: {status, stdout, stderr}.
export function runAgentbox(args, { env = process.env, cwd = '/', input = '' } = {}) {
  return runProcess(AGENTBOX, args, { env, cwd, input });
}

export function runProcess(command, args, { env = process.env, cwd = '/', input = '', timeoutMs = 60000 } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout.on('data', (c) => { stdout += c; });
    child.stderr.on('data', (c) => { stderr += c; });
    child.on('error', (e) => { clearTimeout(timer); reject(e); });
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout, stderr });
    });
    child.stdin.on('error', () => {}); // EPIPE: the program exited without reading stdin
    child.stdin.end(input);
  });
}

// A raw stdio session with `agentbox mcp`, for what the SDK would not send: lines written as
// given, replies read back one JSON line at a time.
//   const s = rawServer(t, fx, ['--ceiling', f]);
//   s.send({jsonrpc: '2.0', id: 0, method: 'ping'});   s.sendLine('garbage');
//   const reply = await s.next();                        // the next message, parsed
export function rawServer(t, fx, args = [], { env = {}, cwd } = {}) {
  const child = spawn(AGENTBOX, ['mcp', ...args], {
    env: serverEnv(fx, env), cwd: cwd ?? fx.project, stdio: ['pipe', 'pipe', 'pipe'],
  });
  const queue = [];
  const waiters = [];
  const bad = [];
  let buffer = '';
  let stderr = '';
  child.stdin.on('error', () => {}); // EPIPE after the server exited
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  child.stderr.on('data', (c) => { stderr += c; });
  child.stdout.on('data', (chunk) => {
    buffer += chunk;
    let nl;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      let message;
      try {
        message = JSON.parse(line);
      } catch {
        bad.push(line); // not JSON: stdout must carry protocol messages only
        continue;
      }
      const item = { line, message };
      const w = waiters.shift();
      if (w) w(item); else queue.push(item);
    }
  });
  t.after(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL'); });
  return {
    child,
    exited,
    stderr: () => stderr,
    badLines: () => bad,
    sendLine: (line) => child.stdin.write(line + '\n'),
    send: (message) => child.stdin.write(JSON.stringify(message) + '\n'),
    end: () => child.stdin.end(),
    // The next message within timeoutMs, or null. opts.raw: return {line, message}.
    next(timeoutMs = 10000, { raw = false } = {}) {
      const pick = (item) => (raw ? item : item.message);
      if (queue.length) return Promise.resolve(pick(queue.shift()));
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          const i = waiters.indexOf(w);
          if (i >= 0) waiters.splice(i, 1);
          resolve(null);
        }, timeoutMs);
        const w = (item) => { clearTimeout(timer); resolve(pick(item)); };
        waiters.push(w);
      });
    },
    // Messages until one with `id` arrives (others, e.g. progress, are returned too).
    async until(id, timeoutMs = 20000) {
      const seen = [];
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const m = await this.next(Math.max(1, deadline - Date.now()));
        if (m === null) return { reply: null, seen };
        if (m.id === id && !('method' in m)) return { reply: m, seen };
        seen.push(m);
      }
    },
  };
}

export const INIT_PARAMS = {
  protocolVersion: '2025-06-18',
  capabilities: {},
  clientInfo: { name: 'raw-test', version: '0.0.1' },
};

// MCP bench: `run_code {"argv": ["/bin/true"]}` through the official TypeScript SDK client,
// against `agentbox mcp` over stdio, with the audit log (and its fsync) on a real file.
//
//   node bench/mcp_bench.mjs --agentbox build/agentbox --sdk bench/cache/npm/node_modules/@modelcontextprotocol/sdk
//        [--calls 300] [--throughput-calls 400] [--warmup 20] [--isolated 15] [--gap-ms 250]
//        [--json out.json] [--state-parent DIR]
//
// Prints one JSON object: latency p50/p99/min/max (ms) over sequential calls, and
// throughput (calls/s) with 1, 4 and 16 calls in flight, with the CPU each call cost the
// server (and its sandboxes) and the client. Run by bench/compare.
import { mkdtempSync, rmSync, existsSync, writeFileSync, statSync, statfsSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { performance } from "node:perf_hooks";

function parseArgs(argv) {
  const opts = {
    calls: 300, throughputCalls: 400, warmup: 20, isolated: 15, gapMs: 250,
    json: null, agentbox: null, sdk: null, stateParent: tmpdir(),
  };
  for (let i = 2; i < argv.length; i++) {
    const a = argv[i];
    const v = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === "--agentbox") opts.agentbox = resolve(v());
    else if (a === "--sdk") opts.sdk = resolve(v());
    else if (a === "--calls") opts.calls = Number(v());
    else if (a === "--throughput-calls") opts.throughputCalls = Number(v());
    else if (a === "--warmup") opts.warmup = Number(v());
    else if (a === "--json") opts.json = v();
    else if (a === "--state-parent") opts.stateParent = resolve(v());
    else if (a === "--isolated") opts.isolated = Number(v());
    else if (a === "--gap-ms") opts.gapMs = Number(v());
    else throw new Error(`unknown argument ${a}`);
  }
  if (!opts.agentbox || !opts.sdk) throw new Error("--agentbox and --sdk are required");
  return opts;
}

const opts = parseArgs(process.argv);
// The SDK lives in bench/cache, outside Node's resolution path: import its ESM build by file.
const sdkFile = (p) => {
  const f = join(opts.sdk, "dist", "esm", p);
  if (!existsSync(f)) throw new Error(`MCP SDK file not found: ${f}`);
  return pathToFileURL(f).href;
};
const { Client } = await import(sdkFile("client/index.js"));
const { StdioClientTransport } = await import(sdkFile("client/stdio.js"));

const CALL = { name: "run_code", arguments: { argv: ["/bin/true"] } };

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx];
}

async function startServer(extraArgs, stateDir, workDir) {
  const transport = new StdioClientTransport({
    command: opts.agentbox,
    args: ["mcp", ...extraArgs],
    cwd: workDir, // the default ceiling grants the working directory: a throwaway one
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? "/root",
      XDG_STATE_HOME: stateDir,
    },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (d) => {
    if (stderr.length < 8192) stderr += d.toString();
  });
  const client = new Client({ name: "agentbox-bench", version: "1.0.0" });
  try {
    await client.connect(transport);
  } catch (e) {
    throw new Error(`agentbox mcp did not start: ${e.message}\n${stderr}`);
  }
  return { client, pid: transport.pid, stderr: () => stderr };
}

// CPU time (ms) of a process and of the children it has reaped: for `agentbox mcp` that is the
// server plus every sandbox (pid 1 reaps the program, the server reaps pid 1).
function cpuMs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    return (ticks * 1000) / 100; // USER_HZ is 100 on Linux
  } catch {
    return NaN;
  }
}

async function callOnce(client) {
  const res = await client.callTool(CALL);
  if (res.isError) {
    const text = (res.content ?? []).map((c) => c.text ?? "").join(" ");
    throw new Error(`run_code failed: ${text}`);
  }
  const code = res.structuredContent?.exit_code;
  if (code !== undefined && code !== 0) throw new Error(`run_code: /bin/true exited ${code}`);
  return res;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Sequential calls; with gapMs > 0 each call follows that much idle time (isolated calls).
async function latency(client, n, gapMs = 0) {
  const ms = [];
  for (let i = 0; i < n; i++) {
    if (gapMs > 0) await sleep(gapMs);
    const t0 = performance.now();
    await callOnce(client);
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  return {
    calls: n,
    p50_ms: percentile(ms, 50),
    p90_ms: percentile(ms, 90),
    p99_ms: percentile(ms, 99),
    min_ms: ms[0],
    max_ms: ms[ms.length - 1],
    mean_ms: ms.reduce((a, b) => a + b, 0) / ms.length,
  };
}

async function throughput(server, inFlight, total) {
  const client = server.client;
  let next = 0;
  const cpu0 = cpuMs(server.pid);
  const own0 = process.cpuUsage();
  const t0 = performance.now();
  const worker = async () => {
    while (next < total) {
      next++;
      await callOnce(client);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  const seconds = (performance.now() - t0) / 1000;
  const own = process.cpuUsage(own0);
  return {
    in_flight: inFlight,
    calls: total,
    seconds,
    calls_per_s: total / seconds,
    server_cpu_ms_per_call: (cpuMs(server.pid) - cpu0) / total,
    client_cpu_ms_per_call: (own.user + own.system) / 1000 / total,
  };
}

async function main() {
  const stateDir = mkdtempSync(join(opts.stateParent, "agentbox-bench-state-"));
  const workDir = mkdtempSync(join(tmpdir(), "agentbox-bench-work-"));
  // fsync on tmpfs costs nothing: say so if the audit log landed on one.
  const TMPFS_MAGIC = 0x01021994;
  const out = {
    agentbox: opts.agentbox,
    audit_log_on_tmpfs: statfsSync(stateDir).type === TMPFS_MAGIC,
  };
  try {
    // Server 1: default --max-concurrent (8): latency, then 1 and 4 in flight.
    const s1 = await startServer([], stateDir, workDir);
    for (let i = 0; i < opts.warmup; i++) await callOnce(s1.client);
    out.latency = await latency(s1.client, opts.calls);
    if (opts.isolated > 0) {
      out.isolated = { gap_ms: opts.gapMs, ...(await latency(s1.client, opts.isolated, opts.gapMs)) };
    }
    out.throughput = [];
    out.throughput.push(await throughput(s1, 1, Math.min(opts.throughputCalls, opts.calls)));
    out.throughput.push(await throughput(s1, 4, opts.throughputCalls));
    await s1.client.close();

    // Server 2: --max-concurrent 16, 16 in flight.
    const s2 = await startServer(["--max-concurrent", "16"], stateDir, workDir);
    for (let i = 0; i < opts.warmup; i++) await callOnce(s2.client);
    out.throughput.push(await throughput(s2, 16, opts.throughputCalls));
    await s2.client.close();

    const log = join(stateDir, "agentbox", "audit.jsonl");
    out.audit_log_bytes = existsSync(log) ? statSync(log).size : 0;
    if (out.audit_log_bytes === 0) throw new Error(`no audit log was written at ${log}`);
  } finally {
    rmSync(stateDir, { recursive: true, force: true });
    rmSync(workDir, { recursive: true, force: true });
  }
  const text = JSON.stringify(out, null, 2);
  if (opts.json) writeFileSync(opts.json, text + "\n");
  process.stdout.write(text + "\n");
}

main().catch((e) => {
  process.stderr.write(`mcp_bench: ${e.stack ?? e}\n`);
  process.exit(1);
});

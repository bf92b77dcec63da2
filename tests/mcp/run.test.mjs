// run_code through the official SDK client: results, non-zero exits, invalid arguments,
// timeouts, cancellation, progress, concurrency, output capping and sanitizing. Every
// structuredContent is validated by the SDK against the tool's outputSchema (connect() lists
// the tools first, which loads the validators).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import {
  callTool, connect, errorText, fixture, processesWith, projectCeiling, sleep,
  uniqueSleep, waitFor,
} from './lib.mjs';

async function setup(t, opts = {}) {
  const fx = fixture(t);
  const { client, stderr } = await connect(t, fx, { ceiling: projectCeiling(fx), ...opts });
  return { fx, client, stderr };
}

test('run_code: output, exit code, policy and audit id', async (t) => {
  const { fx, client } = await setup(t);
  const r = await callTool(client, 'run_code', { argv: ['sh', '-c', 'echo out; echo err >&2; pwd'] });
  assert.ok(!r.isError, errorText(r));
  const s = r.structuredContent;
  assert.equal(s.exit_code, 0);
  assert.equal(s.signal, null);
  assert.equal(s.timed_out, false);
  assert.equal(s.stdout, `out\n${fx.project}\n`);
  assert.equal(s.stderr, 'err\n');
  assert.equal(s.stdout_truncated, false);
  assert.equal(s.stderr_truncated, false);
  assert.ok(Number.isInteger(s.duration_ms) && s.duration_ms >= 0);
  assert.deepEqual(s.policy.filesystem.readwrite, [fx.project]);
  assert.equal(s.policy.network, 'block');
  assert.ok(Array.isArray(s.decisions));
  assert.match(s.audit_id, /^[0-9a-f]{32}$/);
  assert.deepEqual(JSON.parse(r.content[0].text), s);
});

test('run_code: a non-zero exit is a normal result, not isError', async (t) => {
  const { client } = await setup(t);
  const r = await callTool(client, 'run_code', { argv: ['sh', '-c', 'echo failing >&2; exit 3'] });
  assert.notEqual(r.isError, true, JSON.stringify(r));
  assert.equal(r.structuredContent.exit_code, 3);
  assert.equal(r.structuredContent.stderr, 'failing\n');
  const f = await callTool(client, 'run_code', { argv: ['false'] });
  assert.notEqual(f.isError, true);
  assert.equal(f.structuredContent.exit_code, 1);
});

test('run_code: a program killed by a signal reports the signal', async (t) => {
  const { client } = await setup(t);
  const r = await callTool(client, 'run_code', { argv: ['sh', '-c', 'kill -TERM $$'] });
  assert.notEqual(r.isError, true, JSON.stringify(r));
  assert.equal(r.structuredContent.signal, 15);
  assert.equal(r.structuredContent.exit_code, 128 + 15);
});

test('run_code: a program that does not exist is reported, not a protocol error', async (t) => {
  const { client } = await setup(t);
  const r = await callTool(client, 'run_code', { argv: ['/nonexistent/program-xyz'] });
  // Either form is honest: an isError result, or exit 127 with the reason on stderr.
  if (r.isError) {
    assert.match(errorText(r), /program-xyz|not found|No such file/i);
  } else {
    assert.equal(r.structuredContent.exit_code, 127);
    assert.match(r.structuredContent.stderr, /program-xyz|not found|No such file/i);
  }
});

test('run_code: argv is not run through a shell', async (t) => {
  const { fx, client } = await setup(t);
  const r = await callTool(client, 'run_code', { argv: ['echo', '$HOME', '`id`', ';', 'touch', 'x'] });
  assert.ok(!r.isError, errorText(r));
  assert.equal(r.structuredContent.stdout, '$HOME `id` ; touch x\n');
  assert.equal(fs.existsSync(path.join(fx.project, 'x')), false);
});

test('run_code: stdin, env, and no inherited host environment', async (t) => {
  const { client } = await setup(t, { env: { HOST_ONLY_VARIABLE: 'leaked' } });
  const r = await callTool(client, 'run_code', {
    argv: ['sh', '-c', 'cat; echo "[$GREETING]"; echo "[$HOST_ONLY_VARIABLE]"'],
    stdin: 'from stdin\n',
    env: { GREETING: 'hello' },
  });
  assert.ok(!r.isError, errorText(r));
  assert.equal(r.structuredContent.stdout, 'from stdin\n[hello]\n[]\n');
});

test('run_code: writes in the project persist, writes outside do not happen', async (t) => {
  const { fx, client } = await setup(t);
  const outside = path.join(fx.outside, 'escaped');
  const r = await callTool(client, 'run_code', {
    argv: ['sh', '-c', `echo kept > made.txt; echo x > ${outside}; echo "rc=$?"`],
  });
  assert.ok(!r.isError, errorText(r));
  assert.equal(fs.readFileSync(path.join(fx.project, 'made.txt'), 'utf8'), 'kept\n');
  assert.equal(fs.existsSync(outside), false);
  assert.match(r.structuredContent.stdout, /rc=[1-9]/);
});

test('run_code: asking for more than the ceiling is narrowed, with decisions', async (t) => {
  const { fx, client } = await setup(t);
  const r = await callTool(client, 'run_code', {
    argv: ['true'],
    readwrite_paths: [fx.project, fx.outside],
    network: 'allow',
    timeout_ms: 10 * 60 * 1000,
  });
  assert.ok(!r.isError, errorText(r));
  const s = r.structuredContent;
  assert.equal(s.policy.network, 'block');
  assert.ok(s.policy.timeoutMs <= 30000, JSON.stringify(s.policy));
  assert.ok(!JSON.stringify(s.policy.filesystem).includes(fx.outside), JSON.stringify(s.policy));
  const text = JSON.stringify(s.decisions);
  assert.ok(s.decisions.length >= 2, text);
  assert.ok(text.includes(fx.outside), text);
  assert.match(text, /network/);
});

test('run_code: terminal control sequences are stripped, newline and tab kept', async (t) => {
  const { client } = await setup(t);
  const r = await callTool(client, 'run_code', {
    argv: ['printf', '\\033[31mred\\033[0m\\t\\033]0;title\\007ok\\033[2J\\r\\nnext\\n'],
  });
  assert.ok(!r.isError, errorText(r));
  assert.equal(r.structuredContent.stdout, 'red\tok\nnext\n');
});

test('run_code: 100 KiB of output is capped, head and tail kept, flag set', async (t) => {
  const { client } = await setup(t);
  const r = await callTool(client, 'run_code', {
    argv: ['sh', '-c', 'echo FIRST-LINE; yes 0123456789abcdef | head -c 102400; echo; echo LAST-LINE'],
  });
  assert.ok(!r.isError, errorText(r));
  const s = r.structuredContent;
  assert.equal(s.stdout_truncated, true);
  assert.equal(s.stderr_truncated, false);
  assert.ok(Buffer.byteLength(s.stdout) <= 10 * 1024 + 128, `${Buffer.byteLength(s.stdout)} bytes`);
  assert.ok(s.stdout.startsWith('FIRST-LINE\n'));
  assert.ok(s.stdout.endsWith('LAST-LINE\n'));
  assert.match(s.stdout, /omitted/);
  assert.equal(s.exit_code, 0);
});

test('run_code: --max-output changes the cap; stderr is capped on its own', async (t) => {
  const { client } = await setup(t, { args: ['--max-output', '1024'] });
  const r = await callTool(client, 'run_code', {
    argv: ['sh', '-c', 'head -c 5000 /dev/zero | tr "\\0" e >&2; echo small'],
  });
  assert.ok(!r.isError, errorText(r));
  assert.equal(r.structuredContent.stderr_truncated, true);
  assert.ok(Buffer.byteLength(r.structuredContent.stderr) <= 1024 + 128);
  assert.equal(r.structuredContent.stdout, 'small\n');
  assert.equal(r.structuredContent.stdout_truncated, false);
});

test('run_code: invalid arguments are isError results naming the field', async (t) => {
  const { client } = await setup(t);
  const cases = [
    [{}, /argv/],
    [{ argv: [] }, /argv/],
    [{ argv: 'ls -l' }, /argv/],
    [{ argv: ['ls', 1] }, /argv/],
    [{ argv: ['true'], shell: true }, /unknown field/],
    [{ argv: ['true'], timeout_ms: 0 }, /timeout_ms/],
    [{ argv: ['true'], timeout_ms: 'soon' }, /timeout_ms/],
    [{ argv: ['true'], env: { 'BAD-NAME': 'x' } }, /env/],
    [{ argv: ['true'], env: { OK: 5 } }, /env/],
    [{ argv: ['true'], network: 'sometimes' }, /network/],
    [{ argv: ['true'], cwd: '/nonexistent/dir' }, /nonexistent/],
  ];
  for (const [args, pattern] of cases) {
    const r = await callTool(client, 'run_code', args);
    assert.equal(r.isError, true, JSON.stringify(args));
    assert.match(errorText(r), pattern, JSON.stringify(args));
    assert.equal(r.structuredContent, undefined);
  }
});

test('run_code: timeout sets timed_out and leaves no process behind', async (t) => {
  const { client } = await setup(t);
  const marker = uniqueSleep();
  const started = Date.now();
  const r = await callTool(client, 'run_code', {
    argv: ['sh', '-c', `sleep ${marker} & sleep ${marker}`],
    timeout_ms: 700,
  });
  const elapsed = Date.now() - started;
  assert.notEqual(r.isError, true, JSON.stringify(r));
  assert.equal(r.structuredContent.timed_out, true);
  assert.equal(r.structuredContent.exit_code, 124);
  assert.ok(elapsed < 15000, `took ${elapsed} ms`);
  const left = await waitFor(() => processesWith(marker).length === 0, 5000);
  assert.ok(left, `processes left: ${processesWith(marker)}`);
});

test('run_code: the ceiling timeout bounds a longer request', async (t) => {
  const fx = fixture(t);
  const ceiling = projectCeiling(fx, { top: { timeoutMs: 800 } });
  const { client } = await connect(t, fx, { ceiling });
  const r = await callTool(client, 'run_code', { argv: ['sleep', '20'], timeout_ms: 60000 });
  assert.notEqual(r.isError, true, JSON.stringify(r));
  assert.equal(r.structuredContent.timed_out, true);
  assert.equal(r.structuredContent.policy.timeoutMs, 800);
  assert.match(JSON.stringify(r.structuredContent.decisions), /timeout/i);
});

test('run_code: cancelling the request (AbortSignal) kills the sandbox', async (t) => {
  const { client } = await setup(t);
  const marker = uniqueSleep();
  const controller = new AbortController();
  const call = callTool(client, 'run_code', { argv: ['sh', '-c', `sleep ${marker} & sleep ${marker}`] },
                        { signal: controller.signal, timeout: 120000 });
  const seen = await waitFor(() => processesWith(marker).length >= 2, 10000);
  assert.ok(seen, 'the sandboxed processes never appeared');
  controller.abort('test cancels');
  await assert.rejects(call);
  const gone = await waitFor(() => processesWith(marker).length === 0, 5000);
  assert.ok(gone, `still running after cancel: ${processesWith(marker)}`);
  // The server keeps serving.
  const r = await callTool(client, 'run_code', { argv: ['echo', 'after'] });
  assert.equal(r.structuredContent.stdout, 'after\n');
});

test('run_code: a long run sends progress notifications about once a second', async (t) => {
  const { client } = await setup(t);
  const progress = [];
  const r = await callTool(client, 'run_code', { argv: ['sleep', '3.2'] },
                           { onprogress: (p) => progress.push(p), timeout: 60000 });
  assert.ok(!r.isError, errorText(r));
  assert.ok(progress.length >= 2 && progress.length <= 6, JSON.stringify(progress));
  for (let i = 1; i < progress.length; ++i) {
    assert.ok(progress[i].progress > progress[i - 1].progress, JSON.stringify(progress));
  }
});

test('run_code: progress resets the client timeout (resetTimeoutOnProgress)', async (t) => {
  const { client } = await setup(t);
  // More than twice the client's timeout, with a second of slack either side of each
  // progress notification (about one a second) for a loaded machine.
  const r = await callTool(client, 'run_code', { argv: ['sleep', '4.5'] },
                           { onprogress: () => {}, timeout: 2000, resetTimeoutOnProgress: true });
  assert.ok(!r.isError, errorText(r));
  assert.equal(r.structuredContent.exit_code, 0);
});

test('run_code: 16 calls with --max-concurrent 4 all complete, overlapping, at most 4 at once',
     async (t) => {
  const { client } = await setup(t, { args: ['--max-concurrent', '4'] });
  const script = 'date +%s.%N; sleep 0.3; date +%s.%N';
  const started = Date.now();
  const results = await Promise.all(Array.from({ length: 16 }, () =>
    callTool(client, 'run_code', { argv: ['sh', '-c', script] }, { timeout: 120000 })));
  const wall = Date.now() - started;
  const intervals = results.map((r) => {
    assert.ok(!r.isError, errorText(r));
    assert.equal(r.structuredContent.exit_code, 0);
    const [a, b] = r.structuredContent.stdout.trim().split('\n').map(Number);
    return [a, b];
  });
  // Run one after another, the calls would take at least the sum of their own durations.
  const serial = results.reduce((sum, r) => sum + r.structuredContent.duration_ms, 0);
  assert.ok(serial >= 16 * 300, `durations ${serial} ms`);
  assert.ok(wall < serial, `wall time ${wall} ms is not less than serial (${serial} ms)`);
  let most = 0;
  for (const [start] of intervals) {
    const running = intervals.filter(([a, b]) => a <= start && start < b).length;
    most = Math.max(most, running);
  }
  assert.ok(most >= 2, `no two runs overlapped: ${JSON.stringify(intervals)}`);
  assert.ok(most <= 4, `${most} runs at once with --max-concurrent 4`);
});

// Was a bug, now fixed: a call cancelled while it waits for a slot still runs later. Server::RunCall
// (src/mcp/server.cc) registers the call's cancel eventfd in cancel_fds_ only after
// slot_free_ lets it run, so notifications/cancelled for a queued request finds nothing and
// is dropped; when a slot frees, the cancelled program runs anyway.
test('run_code: a call cancelled while queued never runs', {
}, async (t) => {
  const { fx, client } = await setup(t, { args: ['--max-concurrent', '1'] });
  const blocker = callTool(client, 'run_code', { argv: ['sleep', '1.5'] });
  await sleep(300); // the blocker holds the only slot
  const controller = new AbortController();
  const queued = callTool(client, 'run_code', { argv: ['touch', 'cancelled-but-ran'] },
                          { signal: controller.signal });
  await sleep(200);
  controller.abort('cancel while queued');
  await assert.rejects(queued);
  await blocker;
  // Give a wrongly resumed call time to run.
  const ran = await waitFor(() => fs.existsSync(path.join(fx.project, 'cancelled-but-ran')), 2000);
  assert.equal(ran, false, 'the cancelled call ran once a slot was free');
  const after = await callTool(client, 'run_code', { argv: ['true'] });
  assert.equal(after.structuredContent.exit_code, 0);
});

test('run_code: output that is not UTF-8 still gives a valid result', async (t) => {
  const { client } = await setup(t);
  const r = await callTool(client, 'run_code', { argv: ['printf', 'a\\377\\376b\\n'] });
  assert.ok(!r.isError, errorText(r));
  assert.match(r.structuredContent.stdout, /^a.*b\n$/u);
  assert.ok(!r.structuredContent.stdout.includes('\u001b'));
});

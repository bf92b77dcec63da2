// Where the operator ceiling comes from: --ceiling FILE, else the AGENTBOX_* variables, else
// the default (the server's working directory read-write, network blocked, 30 s). The tool
// descriptions show the ceiling in force, and requests are clamped to it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { AGENTBOX, callTool, connect, errorText, fixture, runProcess, serverEnv } from './lib.mjs';

test('default ceiling: the working directory read-write, network blocked, 30 s', async (t) => {
  const fx = fixture(t);
  const { client, tools } = await connect(t, fx); // no --ceiling, no AGENTBOX_* variables
  for (const tool of tools) assert.ok(tool.description.includes(fx.project), tool.description);
  const r = await callTool(client, 'run_code', { argv: ['sh', '-c', 'echo hi > here.txt'] });
  assert.ok(!r.isError, errorText(r));
  const s = r.structuredContent;
  assert.deepEqual(s.policy.filesystem.readwrite, [fx.project]);
  assert.equal(s.policy.network, 'block');
  assert.equal(s.policy.timeoutMs, 30000);
  assert.equal(fs.readFileSync(path.join(fx.project, 'here.txt'), 'utf8'), 'hi\n');
  const w = await callTool(client, 'write_local_file',
                           { path: path.join(fx.outside, 'no.txt'), content: 'x' });
  assert.equal(w.isError, true);
  assert.equal(fs.existsSync(path.join(fx.outside, 'no.txt')), false);
});

test('AGENTBOX_* variables replace the default ceiling', async (t) => {
  const fx = fixture(t);
  const ro = fx.mkdir('ro');
  fx.write('ro/data.txt', 'data\n');
  const { client, tools } = await connect(t, fx, {
    env: {
      AGENTBOX_READWRITE_PATHS: fx.outside,
      AGENTBOX_READONLY_PATHS: ro,
      AGENTBOX_TIMEOUT_MS: '5000',
      AGENTBOX_NETWORK: 'block',
    },
  });
  const desc = tools[0].description;
  assert.ok(desc.includes(fx.outside) && desc.includes(ro), desc);
  // The listed read-write path is writable ...
  let r = await callTool(client, 'write_local_file',
                         { path: path.join(fx.outside, 'ok.txt'), content: 'ok' });
  assert.ok(!r.isError, errorText(r));
  assert.equal(fs.readFileSync(path.join(fx.outside, 'ok.txt'), 'utf8'), 'ok');
  // ... the read-only one readable, not writable ...
  r = await callTool(client, 'read_local_file', { path: path.join(ro, 'data.txt') });
  assert.ok(!r.isError, errorText(r));
  r = await callTool(client, 'write_local_file', { path: path.join(ro, 'x.txt'), content: 'x' });
  assert.equal(r.isError, true);
  assert.equal(fs.existsSync(path.join(ro, 'x.txt')), false);
  // ... and the working directory is no longer granted by default.
  r = await callTool(client, 'write_local_file',
                     { path: path.join(fx.project, 'cwd.txt'), content: 'x' });
  assert.equal(r.isError, true);
  assert.equal(fs.existsSync(path.join(fx.project, 'cwd.txt')), false);
  r = await callTool(client, 'run_code', { argv: ['true'], timeout_ms: 600000 });
  assert.ok(!r.isError, errorText(r));
  assert.equal(r.structuredContent.policy.timeoutMs, 5000);
});

test('--ceiling FILE wins over the AGENTBOX_* variables', async (t) => {
  const fx = fixture(t);
  const { client } = await connect(t, fx, {
    ceiling: { filesystem: { readwrite: [fx.project] }, timeoutMs: 4000 },
    env: { AGENTBOX_READWRITE_PATHS: fx.outside, AGENTBOX_TIMEOUT_MS: '9000' },
  });
  const r = await callTool(client, 'run_code', { argv: ['true'] });
  assert.ok(!r.isError, errorText(r));
  assert.deepEqual(r.structuredContent.policy.filesystem.readwrite, [fx.project]);
  assert.equal(r.structuredContent.policy.timeoutMs, 4000);
});

test('the agent cannot widen the ceiling: paths outside are dropped with a decision', async (t) => {
  const fx = fixture(t);
  fx.write('outside/secret.txt', 'SECRET\n');
  const { client } = await connect(t, fx, { ceiling: { filesystem: { readwrite: [fx.project] } } });
  const r = await callTool(client, 'run_code', {
    argv: ['cat', path.join(fx.outside, 'secret.txt')],
    readonly_paths: [fx.outside],
  });
  assert.notEqual(r.isError, true, JSON.stringify(r));
  assert.notEqual(r.structuredContent.exit_code, 0);
  assert.doesNotMatch(r.structuredContent.stdout, /SECRET/);
  assert.ok(JSON.stringify(r.structuredContent.decisions).includes(fx.outside));
});

test('an invalid ceiling file stops the server with exit 125 and a reason', async (t) => {
  const fx = fixture(t);
  const bad = fx.write('bad.json', '{"filesystem": {"readwrite": 5}}');
  const r = await runProcess(AGENTBOX, ['mcp', '--ceiling', bad],
                             { env: serverEnv(fx), cwd: fx.project, input: '' });
  assert.equal(r.status, 125, JSON.stringify(r));
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /readwrite/);
  const missing = await runProcess(AGENTBOX, ['mcp', '--ceiling', path.join(fx.root, 'nope.json')],
                                   { env: serverEnv(fx), cwd: fx.project });
  assert.equal(missing.status, 125);
  assert.match(missing.stderr, /nope\.json/);
});

test('bad flags are refused before serving', async (t) => {
  const fx = fixture(t);
  for (const args of [['--max-concurrent', '0'], ['--max-output', '10'], ['--bogus']]) {
    const r = await runProcess(AGENTBOX, ['mcp', ...args], { env: serverEnv(fx), cwd: fx.project });
    assert.notEqual(r.status, 0, args.join(' '));
    assert.equal(r.stdout, '', args.join(' '));
  }
});

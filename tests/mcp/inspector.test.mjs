// The MCP Inspector CLI (@modelcontextprotocol/inspector 2.12.0) against `agentbox mcp`: an
// independent client that validates the tool schemas (--strict) and calls the tools.
//   inspector --cli <agentbox> mcp [server args] --method tools/list --strict
// Exit codes used: 0 ok, 5 the tool returned isError, 6 a schema problem of error severity.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { AGENTBOX, INSPECTOR, fixture, projectCeiling, readAudit, runProcess } from './lib.mjs';

// Runs the Inspector CLI against agentbox with the fixture's ceiling and audit log.
async function inspector(t, fx, methodArgs) {
  const ceiling = fx.write('ceiling.json', JSON.stringify(projectCeiling(fx)));
  const log = fx.path('logs/audit.jsonl');
  const env = {
    HOME: fx.home,
    PATH: '/usr/local/bin:/usr/bin:/bin',
    LANG: 'C.UTF-8',
    MCP_CATALOG_PATH: fx.path('inspector-catalog.json'),
    MCP_CLIENT_CONFIG_PATH: fx.path('inspector-client.json'),
  };
  const r = await runProcess(process.execPath,
    [INSPECTOR, '--cli', AGENTBOX, 'mcp', '--ceiling', ceiling, '--audit-log', log, ...methodArgs],
    { env, cwd: fx.project, timeoutMs: 120000 });
  return { ...r, log };
}

test('inspector: tools/list passes --strict schema validation', async (t) => {
  const fx = fixture(t);
  const r = await inspector(t, fx, ['--method', 'tools/list', '--strict', '--format', 'json']);
  assert.equal(r.status, 0, `exit ${r.status}\n${r.stdout}\n${r.stderr}`);
  assert.match(r.stderr, /\b0 errors\b/);
  const listed = JSON.parse(r.stdout);
  const tools = listed.tools ?? listed.result?.tools;
  assert.deepEqual(tools.map((x) => x.name), ['run_code', 'read_local_file', 'write_local_file']);
  for (const tool of tools) assert.equal(tool.inputSchema.type, 'object');
});

test('inspector: --protocol-era auto falls back from server/discover to initialize',
     async (t) => {
  const fx = fixture(t);
  const started = Date.now();
  const r = await inspector(t, fx, ['--method', 'tools/list', '--protocol-era', 'auto',
                                    '--format', 'json']);
  assert.equal(r.status, 0, `exit ${r.status}\n${r.stdout}\n${r.stderr}`);
  assert.ok(r.stdout.includes('run_code'));
  // No multi-second wait for a server/discover answer (the CLI's own start-up aside).
  assert.ok(Date.now() - started < 30000);
});

test('inspector: tools/call run_code returns structuredContent and is audited', async (t) => {
  const fx = fixture(t);
  const r = await inspector(t, fx, ['--method', 'tools/call', '--tool-name', 'run_code',
                                    '--tool-args-json', '{"argv": ["sh", "-c", "echo via-inspector; exit 2"]}',
                                    '--format', 'json']);
  assert.equal(r.status, 0, `exit ${r.status}\n${r.stdout}\n${r.stderr}`);
  const out = JSON.parse(r.stdout);
  const result = out.result ?? out;
  assert.notEqual(result.isError, true);
  assert.equal(result.structuredContent.stdout, 'via-inspector\n');
  assert.equal(result.structuredContent.exit_code, 2);
  const records = readAudit(r.log);
  assert.deepEqual(records.map((x) => x.type), ['pending', 'completed']);
  assert.equal(records[0].agent.client.name.length > 0, true);
});

test('inspector: a refused write is a tool error (exit 5), and nothing is written', async (t) => {
  const fx = fixture(t);
  const target = path.join(fx.outside, 'x.txt');
  const r = await inspector(t, fx, ['--method', 'tools/call', '--tool-name', 'write_local_file',
                                    '--tool-args-json', JSON.stringify({ path: target, content: 'x' }),
                                    '--format', 'json']);
  assert.equal(r.status, 5, `exit ${r.status}\n${r.stdout}\n${r.stderr}`);
  assert.equal(fs.existsSync(target), false);
});

test('inspector: write_local_file into the project works', async (t) => {
  const fx = fixture(t);
  const r = await inspector(t, fx, ['--method', 'tools/call', '--tool-name', 'write_local_file',
                                    '--tool-args-json', '{"path": "from-inspector.txt", "content": "ok\\n"}',
                                    '--format', 'json']);
  assert.equal(r.status, 0, `exit ${r.status}\n${r.stdout}\n${r.stderr}`);
  assert.equal(fs.readFileSync(path.join(fx.project, 'from-inspector.txt'), 'utf8'), 'ok\n');
});

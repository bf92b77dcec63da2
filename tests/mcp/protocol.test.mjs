// The MCP lifecycle and JSON-RPC framing of `agentbox mcp`: through the SDK client where it
// can say it, and over raw stdio for what a well-behaved client would never send (malformed
// lines, batches, requests before initialize, EOF and signals mid-run).
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';
import { test } from 'node:test';

import {
  callTool, connect, EmptyResultSchema, ErrorCode, fixture, INIT_PARAMS, McpError, NPM_DIR,
  processesWith, projectCeiling, rawServer, readAudit, uniqueSleep, waitFor,
} from './lib.mjs';

const ceilingArgs = (fx) => {
  const file = fx.write('ceiling.json', JSON.stringify(projectCeiling(fx)));
  return ['--ceiling', file];
};

// ---- Through the SDK client ----------------------------------------------------------------

test('sdk: initialize negotiates, ping works, the server says who it is', async (t) => {
  const fx = fixture(t);
  const { client } = await connect(t, fx, { ceiling: projectCeiling(fx) });
  const info = client.getServerVersion();
  assert.equal(info.name, 'agentbox');
  assert.equal(typeof info.version, 'string');
  assert.deepEqual(client.getServerCapabilities().tools, { listChanged: false });
  const instructions = client.getInstructions();
  assert.match(instructions, /run_code/);
  assert.match(instructions, /sandbox/);
  assert.deepEqual(await client.ping(), {});
});

test('sdk: tools/list gives three tools with titles, object schemas and honest annotations',
     async (t) => {
  const fx = fixture(t);
  const { tools } = await connect(t, fx, { ceiling: projectCeiling(fx) });
  assert.deepEqual(tools.map((x) => x.name), ['run_code', 'read_local_file', 'write_local_file']);
  for (const tool of tools) {
    assert.match(tool.name, /^[A-Za-z0-9_.-]+$/);
    assert.equal(typeof tool.title, 'string');
    assert.equal(tool.inputSchema.type, 'object');
    assert.equal(tool.outputSchema.type, 'object');
    // Descriptions say these are the tools for the local machine, and show the ceiling.
    assert.match(tool.description, /local/i);
    assert.ok(tool.description.includes(fx.project), tool.description);
    assert.match(tool.description, /let the sandbox decide/);
  }
  const byName = Object.fromEntries(tools.map((x) => [x.name, x]));
  assert.equal(byName.read_local_file.annotations.readOnlyHint, true);
  assert.equal(byName.read_local_file.annotations.destructiveHint, false);
  assert.equal(byName.write_local_file.annotations.readOnlyHint, false);
  assert.equal(byName.write_local_file.annotations.destructiveHint, true);
  assert.equal(byName.run_code.annotations.readOnlyHint, false);
  assert.equal(byName.run_code.annotations.destructiveHint, true);
  assert.deepEqual(byName.run_code.inputSchema.required, ['argv']);
});

test('sdk: server/discover is answered at once with -32601', async (t) => {
  const fx = fixture(t);
  const { client } = await connect(t, fx, { ceiling: projectCeiling(fx) });
  const started = Date.now();
  await assert.rejects(
    client.request({ method: 'server/discover', params: {} }, EmptyResultSchema,
                   { timeout: 10000 }),
    (e) => e instanceof McpError && e.code === ErrorCode.MethodNotFound);
  assert.ok(Date.now() - started < 2000, `took ${Date.now() - started} ms`);
  assert.deepEqual(await client.ping(), {}); // still serving
});

test('sdk: an unknown tool is a JSON-RPC -32602 error', async (t) => {
  const fx = fixture(t);
  const { client } = await connect(t, fx, { ceiling: projectCeiling(fx) });
  await assert.rejects(callTool(client, 'rm_rf', {}),
                       (e) => e instanceof McpError && e.code === ErrorCode.InvalidParams);
});

test('sdk: every tool result matches the tool\'s outputSchema', async (t) => {
  const fx = fixture(t);
  const { client, tools } = await connect(t, fx, { ceiling: projectCeiling(fx) });
  // The SDK validates structuredContent itself once the tools are listed (connect() does);
  // check again with Ajv directly, so a lax SDK could not hide a mismatch.
  const Ajv = createRequire(path.join(NPM_DIR, 'package.json'))('ajv').default;
  const ajv = new Ajv({ strict: false, allErrors: true });
  const validators = Object.fromEntries(tools.map((x) => [x.name, ajv.compile(x.outputSchema)]));
  fx.write('project/in.txt', 'input\n');
  const results = {
    run_code: await callTool(client, 'run_code', { argv: ['sh', '-c', 'echo x; kill -9 $$'] }),
    read_local_file: await callTool(client, 'read_local_file', { path: 'in.txt' }),
    write_local_file: await callTool(client, 'write_local_file', { path: 'out.txt', content: 'y' }),
  };
  results.run_code_timeout = await callTool(client, 'run_code',
                                            { argv: ['sleep', '5'], timeout_ms: 200 });
  for (const [name, r] of Object.entries(results)) {
    assert.notEqual(r.isError, true, `${name}: ${JSON.stringify(r)}`);
    const validate = validators[name.replace('_timeout', '')];
    assert.ok(validate(r.structuredContent), `${name}: ${JSON.stringify(validate.errors)}`);
  }
});

// ---- Raw stdio ------------------------------------------------------------------------------

test('raw: request id 0 is echoed, before and after initialize', async (t) => {
  const fx = fixture(t);
  const s = rawServer(t, fx, ceilingArgs(fx));
  s.send({ jsonrpc: '2.0', id: 0, method: 'ping' });
  assert.deepEqual(await s.next(), { jsonrpc: '2.0', id: 0, result: {} });
  s.send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: INIT_PARAMS });
  const init = await s.next();
  assert.equal(init.id, 0);
  assert.equal(init.result.protocolVersion, '2025-06-18');
  s.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  s.send({ jsonrpc: '2.0', id: 0, method: 'tools/call',
           params: { name: 'run_code', arguments: { argv: ['echo', 'zero'] } } });
  const call = await s.next(20000);
  assert.equal(call.id, 0);
  assert.equal(call.result.structuredContent.stdout, 'zero\n');
});

test('raw: string ids are echoed as strings', async (t) => {
  const fx = fixture(t);
  const s = rawServer(t, fx, ceilingArgs(fx));
  for (const id of ['abc', '0', '']) {
    s.send({ jsonrpc: '2.0', id, method: 'ping' });
    const r = await s.next();
    assert.equal(r.id, id);
  }
});

test('raw: protocol versions are negotiated', async (t) => {
  const fx = fixture(t);
  for (const [asked, expected] of [['2025-11-25', '2025-11-25'], ['2025-06-18', '2025-06-18'],
                                    ['2024-11-05', '2025-11-25'], ['1999-01-01', '2025-11-25']]) {
    const s = rawServer(t, fx, ceilingArgs(fx));
    s.send({ jsonrpc: '2.0', id: 1, method: 'initialize',
             params: { ...INIT_PARAMS, protocolVersion: asked } });
    const r = await s.next();
    assert.equal(r.result.protocolVersion, expected, asked);
    assert.equal(r.result.serverInfo.name, 'agentbox');
    assert.deepEqual(r.result.capabilities.tools, { listChanged: false });
    assert.equal(typeof r.result.instructions, 'string');
    s.end();
  }
});

test('raw: server/discover before initialize is answered with -32601 at once', async (t) => {
  const fx = fixture(t);
  const s = rawServer(t, fx, ceilingArgs(fx));
  s.send({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: {} });
  // Answered before initialize is sent: not held back until the session starts.
  const r = await s.next(5000);
  assert.ok(r, 'no answer to server/discover');
  assert.equal(r.id, 1);
  assert.equal(r.error.code, -32601);
  s.send({ jsonrpc: '2.0', id: 2, method: 'initialize', params: INIT_PARAMS });
  assert.equal((await s.next()).id, 2);
});

test('raw: tools/list without params', async (t) => {
  const fx = fixture(t);
  const s = rawServer(t, fx, ceilingArgs(fx));
  s.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: INIT_PARAMS });
  await s.next();
  s.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
  const r = await s.next();
  assert.equal(r.result.tools.length, 3);
});

test('raw: a malformed line gets -32700 without an id, and the server keeps serving', async (t) => {
  const fx = fixture(t);
  const s = rawServer(t, fx, ceilingArgs(fx));
  for (const line of ['{"jsonrpc": "2.0", "id": 1, "method": ', 'not json', '\u0001\u0002']) {
    s.sendLine(line);
    const r = await s.next();
    assert.equal(r.error.code, -32700, line);
    assert.equal('id' in r, false, JSON.stringify(r));
  }
  s.send({ jsonrpc: '2.0', id: 9, method: 'ping' });
  assert.deepEqual(await s.next(), { jsonrpc: '2.0', id: 9, result: {} });
});

test('raw: batches, bad versions and bad ids are -32600', async (t) => {
  const fx = fixture(t);
  const s = rawServer(t, fx, ceilingArgs(fx));
  s.sendLine('[{"jsonrpc":"2.0","id":1,"method":"ping"}]');
  assert.equal((await s.next()).error.code, -32600);
  s.sendLine('{"jsonrpc":"1.0","id":2,"method":"ping"}');
  const v = await s.next();
  assert.equal(v.error.code, -32600);
  assert.equal(v.id, 2);
  s.sendLine('{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}');
  assert.equal((await s.next()).error.code, -32600);
  s.sendLine('{"jsonrpc":"2.0","id":3,"method":"tools/list","params":[1]}');
  const p = await s.next();
  assert.equal(p.error.code, -32602);
  assert.equal(p.id, 3);
});

test('raw: notifications and client responses get no reply', async (t) => {
  const fx = fixture(t);
  const s = rawServer(t, fx, ceilingArgs(fx));
  s.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  s.send({ jsonrpc: '2.0', method: 'notifications/unknown-thing', params: { a: 1 } });
  s.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 12345 } });
  s.send({ jsonrpc: '2.0', id: 77, result: {} });
  s.send({ jsonrpc: '2.0', id: 5, method: 'ping' });
  const r = await s.next();
  assert.equal(r.id, 5, `a notification or response was answered: ${JSON.stringify(r)}`);
  assert.equal(await s.next(500), null);
});

test('raw: unknown methods after initialize get -32601; CRLF and blank lines are fine',
     async (t) => {
  const fx = fixture(t);
  const s = rawServer(t, fx, ceilingArgs(fx));
  s.child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize',
                                       params: INIT_PARAMS }) + '\r\n\r\n   \n');
  assert.equal((await s.next()).id, 1);
  for (const method of ['resources/list', 'prompts/list', 'server/discover', 'tools/remove']) {
    s.send({ jsonrpc: '2.0', id: method, method });
    const r = await s.next();
    assert.equal(r.id, method);
    assert.equal(r.error.code, -32601, method);
  }
});

test('raw: tools/call errors: unknown tool and non-object arguments are -32602', async (t) => {
  const fx = fixture(t);
  const s = rawServer(t, fx, ceilingArgs(fx));
  s.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'nope', arguments: {} } });
  assert.equal((await s.next()).error.code, -32602);
  s.send({ jsonrpc: '2.0', id: 2, method: 'tools/call',
           params: { name: 'run_code', arguments: ['echo'] } });
  assert.equal((await s.next()).error.code, -32602);
  s.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: {} });
  assert.equal((await s.next()).error.code, -32602);
  // Invalid arguments to a known tool are a tool result with isError, not a protocol error.
  s.send({ jsonrpc: '2.0', id: 4, method: 'tools/call',
           params: { name: 'run_code', arguments: { argv: [] } } });
  const r = await s.next(20000);
  assert.equal(r.id, 4);
  assert.equal(r.result.isError, true);
});

test('raw: stdout carries only JSON-RPC lines, logs go to stderr', async (t) => {
  const fx = fixture(t);
  // An unwritable audit log makes the server log an error (to stderr).
  const file = fx.write('not-a-dir', 'x');
  const s = rawServer(t, fx, [...ceilingArgs(fx), '--audit-log', `${file}/audit.jsonl`]);
  s.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: INIT_PARAMS });
  s.send({ jsonrpc: '2.0', id: 2, method: 'tools/call',
           params: { name: 'run_code', arguments: { argv: ['echo', 'hi'] } } });
  const init = await s.next(10000);
  assert.equal(init.id, 1);
  const call = await s.next(20000);
  assert.equal(call.id, 2);
  assert.equal(call.result.isError, true);
  s.end();
  await s.exited;
  assert.deepEqual(s.badLines(), []);
  assert.match(s.stderr(), /audit/);
});

test('raw: stdin EOF stops the server promptly', async (t) => {
  const fx = fixture(t);
  const s = rawServer(t, fx, ceilingArgs(fx));
  s.send({ jsonrpc: '2.0', id: 1, method: 'ping' });
  await s.next();
  const started = Date.now();
  s.end();
  const { code } = await s.exited;
  assert.equal(code, 0);
  assert.ok(Date.now() - started < 5000);
});

for (const how of ['EOF', 'SIGTERM', 'SIGINT']) {
  test(`raw: ${how} during a run kills the sandbox, audits the call, and exits`, async (t) => {
    const fx = fixture(t);
    const s = rawServer(t, fx, ceilingArgs(fx));
    const marker = uniqueSleep();
    s.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: INIT_PARAMS });
    await s.next();
    s.send({ jsonrpc: '2.0', id: 2, method: 'tools/call',
             params: { name: 'run_code',
                       arguments: { argv: ['sh', '-c', `sleep ${marker} & sleep ${marker}`] } } });
    assert.ok(await waitFor(() => processesWith(marker).length >= 2, 10000), 'never started');
    const started = Date.now();
    if (how === 'EOF') s.end(); else s.child.kill(how);
    const { code, signal } = await s.exited;
    assert.ok(Date.now() - started < 10000, `exit took ${Date.now() - started} ms`);
    assert.ok(code === 0 || (how !== 'EOF' && signal === null), `code ${code} signal ${signal}`);
    assert.ok(await waitFor(() => processesWith(marker).length === 0, 5000),
              `left running: ${processesWith(marker)}`);
    // The call's pending record has its outcome record: the log was flushed.
    const records = readAudit(fx.auditLog);
    const pending = records.find((r) => r.type === 'pending' && JSON.stringify(r.request).includes(marker));
    assert.ok(pending, JSON.stringify(records));
    assert.ok(records.some((r) => r.id === pending.id && r.type !== 'pending'), JSON.stringify(records));
  });
}

test('raw: a line over 8 MiB is refused with -32600 and the next line is served', async (t) => {
  const fx = fixture(t);
  const s = rawServer(t, fx, ceilingArgs(fx));
  const huge = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping',
                                params: { pad: 'x'.repeat(9 * 1024 * 1024) } });
  s.sendLine(huge);
  const r = await s.next(20000);
  assert.ok(r, 'no answer to the oversized line');
  assert.equal(r.error.code, -32600);
  s.send({ jsonrpc: '2.0', id: 2, method: 'ping' });
  assert.deepEqual(await s.next(20000), { jsonrpc: '2.0', id: 2, result: {} });
  assert.equal(await s.next(300), null, 'the rest of the long line was answered too');
});

// Was a bug, now fixed: a notification whose params are not an object is answered with an error
// (no id). JSON-RPC 2.0 says a server MUST NOT reply to a notification, and MCP-NOTES.md
// repeats it ("not even an error"). ParseMessage (src/mcp/jsonrpc.cc) returns kInvalid with
// a null id for it, and Server::Handle replies to every kInvalid.
test('raw: a notification with non-object params gets no reply', {
}, async (t) => {
  const fx = fixture(t);
  const s = rawServer(t, fx, ceilingArgs(fx));
  s.send({ jsonrpc: '2.0', method: 'notifications/progress', params: [1, 2] });
  s.send({ jsonrpc: '2.0', id: 5, method: 'ping' });
  const r = await s.next();
  assert.equal(r.id, 5, `the notification was answered: ${JSON.stringify(r)}`);
});

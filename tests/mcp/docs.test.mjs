// docs/mcp.md says how to register agentbox with Claude Code; these tests start the server
// exactly the way the documented `.mcp.json` says (command + args, the command found on
// PATH), do an initialize, and list the tools.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { AGENTBOX, Client, StdioClientTransport, fixture, readAudit } from './lib.mjs';

const DOC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../docs/mcp.md');

// The ```json blocks of the doc that configure MCP servers, parsed.
function mcpJsonExamples() {
  const text = fs.readFileSync(DOC, 'utf8');
  const blocks = [...text.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => m[1]);
  return blocks.filter((b) => b.includes('"mcpServers"')).map((b) => JSON.parse(b));
}

// A directory holding `agentbox` (a link to the binary under test), to put first on PATH, as
// an installed agentbox would be.
function binDir(fx) {
  const bin = fx.mkdir('bin');
  fs.symlinkSync(AGENTBOX, path.join(bin, 'agentbox'));
  return bin;
}

async function startAsConfigured(t, fx, server) {
  const transport = new StdioClientTransport({
    command: server.command,
    args: server.args,
    env: { ...(server.env ?? {}), HOME: fx.home, XDG_STATE_HOME: fx.state,
           PATH: `${binDir(fx)}:/usr/bin:/bin` },
    cwd: fx.project,
    stderr: 'pipe',
  });
  const client = new Client({ name: 'claude-code', version: 'docs-test' }, { capabilities: {} });
  t.after(() => client.close().catch(() => {}));
  await client.connect(transport);
  return client;
}

test('docs: the minimal .mcp.json example starts the server and answers initialize',
     async (t) => {
  const examples = mcpJsonExamples();
  assert.ok(examples.length >= 1, 'no .mcp.json example in docs/mcp.md');
  const server = examples[0].mcpServers.agentbox;
  assert.deepEqual(server, { type: 'stdio', command: 'agentbox', args: ['mcp'] });
  const fx = fixture(t);
  const client = await startAsConfigured(t, fx, server);
  assert.equal(client.getServerVersion().name, 'agentbox');
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((x) => x.name), ['run_code', 'read_local_file', 'write_local_file']);
  const r = await client.callTool({ name: 'run_code', arguments: { argv: ['pwd'] } });
  assert.equal(r.structuredContent.stdout, `${fx.project}\n`);
  // The default ceiling (the working directory) and the default audit log.
  assert.deepEqual(r.structuredContent.policy.filesystem.readwrite, [fx.project]);
  assert.equal(readAudit(fx.auditLog).length, 2);
});

test('docs: `claude mcp add` runs the same command as the .mcp.json example', () => {
  const text = fs.readFileSync(DOC, 'utf8');
  const line = text.split('\n').find((l) => l.startsWith('claude mcp add agentbox'));
  assert.ok(line, 'no `claude mcp add` line');
  const command = line.split(' -- ')[1].trim().split(/\s+/);
  const server = mcpJsonExamples()[0].mcpServers.agentbox;
  assert.deepEqual(command, [server.command, ...server.args]);
});

test('docs: the .mcp.json example with a ceiling and env uses flags the server accepts',
     async (t) => {
  const examples = mcpJsonExamples();
  assert.ok(examples.length >= 2);
  const server = structuredClone(examples[1].mcpServers.agentbox);
  const fx = fixture(t);
  // The same arguments, with the example's ceiling path pointing at a real file.
  const i = server.args.indexOf('--ceiling');
  assert.ok(i > 0, JSON.stringify(server.args));
  server.args[i + 1] = fx.write('ceiling.json', JSON.stringify({
    filesystem: { readwrite: [fx.project] }, network: 'block', timeoutMs: 60000,
  }));
  const client = await startAsConfigured(t, fx, server);
  const r = await client.callTool({ name: 'run_code', arguments: { argv: ['true'] } });
  assert.equal(r.structuredContent.policy.timeoutMs, 60000);
  const [pending] = readAudit(fx.auditLog);
  assert.equal(pending.agent.id, server.env.AGENTBOX_AGENT_ID);
  assert.equal(pending.agent.client.name, 'claude-code');
});

test('docs: the ceiling file example is a valid ceiling', async (t) => {
  const text = fs.readFileSync(DOC, 'utf8');
  const block = [...text.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => m[1])
    .find((b) => b.includes('"filesystem"') && !b.includes('mcpServers'));
  assert.ok(block, 'no ceiling example');
  const doc = JSON.parse(block.replace(/^ {3}/gm, ''));
  // The example's paths are illustrations; swap them for real ones and start a server on it.
  const fx = fixture(t);
  const real = (list) => list.map((_, k) => fx.mkdir(`p${Math.random().toString(16).slice(2)}-${k}`));
  doc.filesystem.readonly = real(doc.filesystem.readonly);
  doc.filesystem.readwrite = real(doc.filesystem.readwrite);
  doc.filesystem.denied = [path.join(doc.filesystem.readwrite[0], 'secrets')];
  const server = { type: 'stdio', command: 'agentbox',
                   args: ['mcp', '--ceiling', fx.write('ceiling.json', JSON.stringify(doc))] };
  const client = await startAsConfigured(t, fx, server);
  const r = await client.callTool({ name: 'run_code', arguments: { argv: ['true'] } });
  assert.ok(!r.isError, JSON.stringify(r));
  assert.equal(r.structuredContent.policy.timeoutMs, doc.timeoutMs);
});

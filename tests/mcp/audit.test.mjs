// The audit log that `agentbox mcp` writes, seen from outside: a pending record before
// anything runs, fail-closed when the log cannot be written, the hash chain that
// `agentbox audit verify` checks, redaction of secrets, and digests instead of contents.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import {
  callTool, connect, errorText, fixture, processesWith, projectCeiling, readAudit, runAgentbox,
  serverEnv, uniqueSleep, waitFor,
} from './lib.mjs';

const sha256 = (data) => createHash('sha256').update(data).digest('hex');

// Checks the chain from the client side, independently of `agentbox audit verify`.
function assertChain(file) {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  assert.equal(lines.pop(), '', 'the log must end with a newline');
  let prev = '0'.repeat(64);
  lines.forEach((line, i) => {
    const record = JSON.parse(line);
    assert.equal(record.seq, i + 1, `line ${i + 1}`);
    assert.equal(record.prev, prev, `line ${i + 1}`);
    prev = sha256(line);
  });
  return lines.length;
}

test('audit: the pending record is in the log before the program runs', async (t) => {
  const fx = fixture(t);
  const { client } = await connect(t, fx, { ceiling: projectCeiling(fx) });
  const marker = uniqueSleep(30);
  const call = callTool(client, 'run_code', { argv: ['sleep', marker] }, { timeout: 60000 });
  assert.ok(await waitFor(() => processesWith(marker).length > 0, 10000), 'never started');
  // The program is running: its pending record is already there, its outcome is not.
  const during = readAudit(fx.auditLog);
  const pending = during.filter((r) => r.type === 'pending' && r.request.argv?.[1] === marker);
  assert.equal(pending.length, 1, JSON.stringify(during));
  const id = pending[0].id;
  assert.match(id, /^[0-9a-f]{32}$/);
  assert.equal(during.filter((r) => r.id === id && r.type !== 'pending').length, 0);
  // Stop it (a timeout would take 30 s): the outcome record follows with the same id.
  for (const pid of processesWith(marker)) {
    try { process.kill(pid, 'SIGKILL'); } catch { /* gone already */ }
  }
  const r = await call;
  assert.equal(r.structuredContent.audit_id, id);
  const after = readAudit(fx.auditLog);
  const done = after.filter((x) => x.id === id && x.type !== 'pending');
  assert.equal(done.length, 1, JSON.stringify(after));
  assert.equal(done[0].type, 'completed');
  assert.ok(done[0].seq > pending[0].seq);
});

test('audit: each call has pending then completed records with who, what, policy and outcome',
     async (t) => {
  const fx = fixture(t);
  const { client } = await connect(t, fx, {
    ceiling: projectCeiling(fx), clientName: 'audit-client', env: { AGENTBOX_AGENT_ID: 'agent-42' },
  });
  const r = await callTool(client, 'run_code', { argv: ['sh', '-c', 'echo hello; exit 4'] });
  const id = r.structuredContent.audit_id;
  const records = readAudit(fx.auditLog).filter((x) => x.id === id);
  assert.deepEqual(records.map((x) => x.type), ['pending', 'completed']);
  const [pending, completed] = records;
  for (const rec of records) {
    assert.match(rec.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.match(rec.session, /^[0-9a-f]{32}$/);
    assert.equal(rec.agent.client.name, 'audit-client');
    assert.equal(rec.agent.client.version, '1.0.0');
    assert.equal(rec.agent.id, 'agent-42');
    assert.equal(rec.tool, 'run_code');
  }
  assert.equal(pending.session, completed.session);
  assert.deepEqual(pending.request.argv, ['sh', '-c', 'echo hello; exit 4']);
  assert.deepEqual(pending.policy, r.structuredContent.policy);
  assert.deepEqual(pending.decisions, r.structuredContent.decisions);
  assert.equal(completed.outcome.exit_code, 4);
  assert.equal(completed.outcome.stdout.bytes, 6);
  assert.equal(typeof completed.outcome.duration_ms, 'number');
  // Output is never logged itself.
  assert.ok(!JSON.stringify(completed).includes('hello'));
});

// Was a bug, now fixed: the outcome of run_code carries byte counts but no SHA-256 of stdout/stderr, though
// the issue asks for "byte counts and SHA-256 of outputs". RunFacts (src/mcp/tools.cc) only
// records stdout_bytes / stderr_bytes; the executor (CapturedStream) keeps no digest.
test('audit: run_code outcome carries the SHA-256 of the outputs', {
}, async (t) => {
  const fx = fixture(t);
  const { client } = await connect(t, fx, { ceiling: projectCeiling(fx) });
  const r = await callTool(client, 'run_code', { argv: ['echo', 'digest me'] });
  const completed = readAudit(fx.auditLog).find(
    (x) => x.id === r.structuredContent.audit_id && x.type === 'completed');
  assert.ok(JSON.stringify(completed.outcome).includes(sha256('digest me\n')),
            JSON.stringify(completed.outcome));
});

test('audit: outcomes of file tools carry size and SHA-256 of the content', async (t) => {
  const fx = fixture(t);
  const { client } = await connect(t, fx, { ceiling: projectCeiling(fx) });
  const content = 'PRIVATE-FILE-CONTENT-' + 'x'.repeat(100);
  const w = await callTool(client, 'write_local_file', { path: 'private.txt', content });
  assert.ok(!w.isError, errorText(w));
  const rd = await callTool(client, 'read_local_file', { path: 'private.txt' });
  assert.ok(!rd.isError, errorText(rd));
  const records = readAudit(fx.auditLog);
  for (const id of [w.structuredContent.audit_id, rd.structuredContent.audit_id]) {
    const done = records.find((x) => x.id === id && x.type === 'completed');
    assert.ok(done, JSON.stringify(records));
    assert.deepEqual(done.outcome.content,
                     { bytes: Buffer.byteLength(content), sha256: sha256(content) });
  }
  // What was read is never logged.
  const readRecords = records.filter((x) => x.id === rd.structuredContent.audit_id);
  assert.ok(!JSON.stringify(readRecords).includes('PRIVATE-FILE-CONTENT'));
});

// Was a bug, now fixed: write_local_file's `pending` record logs the whole file content: Server::RunCall
// (src/mcp/server.cc) records `request = RedactJson(arguments)` for every tool, and for
// write_local_file the arguments hold `content`. The issue and DESIGN.md §5 say file contents
// are recorded as size + SHA-256 only (the `completed` record does that right).
test('audit: write_local_file content never appears in the log', {
}, async (t) => {
  const fx = fixture(t);
  const { client } = await connect(t, fx, { ceiling: projectCeiling(fx) });
  const content = 'PRIVATE-FILE-CONTENT-' + 'x'.repeat(100);
  const w = await callTool(client, 'write_local_file', { path: 'private.txt', content });
  assert.ok(!w.isError, errorText(w));
  const log = fs.readFileSync(fx.auditLog, 'utf8');
  assert.ok(!log.includes('PRIVATE-FILE-CONTENT'), 'file content in the audit log');
});

test('audit: secrets in argv, env and URLs are redacted', async (t) => {
  const fx = fixture(t);
  const { client } = await connect(t, fx, { ceiling: projectCeiling(fx) });
  const secrets = {
    github: 'ghp_' + 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8',
    openai: 'sk-proj-' + 'Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp',
    apiKey: 'plainvalue-of-an-api-key-0123456789',
    password: 'hunter2-Sup3r-S3cret',
    bearer: 'bearertokenvalue0123456789abcdef',
  };
  const r = await callTool(client, 'run_code', {
    argv: ['sh', '-c', 'echo "$GITHUB_TOKEN" | wc -c', secrets.openai,
           `https://deploy:${secrets.password}@git.example.com/repo.git`,
           `Authorization: Bearer ${secrets.bearer}`],
    env: { GITHUB_TOKEN: secrets.github, MY_API_KEY: secrets.apiKey, HARMLESS: 'visible-value' },
  });
  assert.ok(!r.isError, errorText(r));
  assert.equal(r.structuredContent.stdout.trim(), String(secrets.github.length + 1));
  const log = fs.readFileSync(fx.auditLog, 'utf8');
  assert.match(log, /\[REDACTED\]/);
  for (const [name, value] of Object.entries(secrets)) {
    assert.ok(!log.includes(value), `${name} secret is in the audit log`);
  }
  // What is not secret stays, so the record is still useful.
  assert.match(log, /visible-value/);
  assert.match(log, /GITHUB_TOKEN/);
  assert.match(log, /git\.example\.com/);
});

test('audit: fail closed when the log cannot be written: refused, nothing runs', async (t) => {
  const fx = fixture(t);
  const notADir = fx.write('state-is-a-file', 'x');
  const log = path.join(notADir, 'audit.jsonl');
  const { client } = await connect(t, fx, { ceiling: projectCeiling(fx), auditLog: log });
  const ran = path.join(fx.project, 'ran');
  let r = await callTool(client, 'run_code', { argv: ['touch', ran] });
  assert.equal(r.isError, true, JSON.stringify(r));
  assert.match(errorText(r), /audit log/);
  assert.equal(fs.existsSync(ran), false, 'the program ran without an audit record');
  r = await callTool(client, 'write_local_file', { path: 'written.txt', content: 'x' });
  assert.equal(r.isError, true);
  assert.equal(fs.existsSync(path.join(fx.project, 'written.txt')), false);
  fx.write('project/readable.txt', 'SHOULD-NOT-BE-RETURNED');
  r = await callTool(client, 'read_local_file', { path: 'readable.txt' });
  assert.equal(r.isError, true);
  assert.ok(!errorText(r).includes('SHOULD-NOT-BE-RETURNED'));
  // Once the operator fixes the path, the same server audits and runs again.
  fs.rmSync(notADir);
  r = await callTool(client, 'run_code', { argv: ['touch', ran] });
  assert.ok(!r.isError, errorText(r));
  assert.equal(fs.existsSync(ran), true);
  assert.equal(readAudit(log).length, 2);
});

test('audit: a log directory open to others is refused (fail closed)', async (t) => {
  const fx = fixture(t);
  const dir = fx.mkdir('shared-logs');
  fs.chmodSync(dir, 0o755);
  const { client } = await connect(t, fx, {
    ceiling: projectCeiling(fx), auditLog: path.join(dir, 'audit.jsonl'),
  });
  const r = await callTool(client, 'run_code', { argv: ['touch', 'ran'] });
  assert.equal(r.isError, true);
  assert.match(errorText(r), /0700|group or others/);
  assert.equal(fs.existsSync(path.join(fx.project, 'ran')), false);
});

test('audit: default location $XDG_STATE_HOME/agentbox/audit.jsonl, 0600 in a 0700 dir',
     async (t) => {
  const fx = fixture(t);
  const { client } = await connect(t, fx, { ceiling: projectCeiling(fx) });
  await callTool(client, 'run_code', { argv: ['true'] });
  assert.equal(fs.statSync(fx.auditLog).mode & 0o777, 0o600);
  assert.equal(fs.statSync(path.dirname(fx.auditLog)).mode & 0o777, 0o700);
  assert.equal(readAudit(fx.auditLog).length, 2);
});

test('audit: without XDG_STATE_HOME the log is under ~/.local/state', async (t) => {
  const fx = fixture(t);
  const { client } = await connect(t, fx, {
    ceiling: projectCeiling(fx), env: { XDG_STATE_HOME: undefined },
  });
  await callTool(client, 'run_code', { argv: ['true'] });
  const log = path.join(fx.home, '.local/state/agentbox/audit.jsonl');
  assert.equal(readAudit(log).length, 2);
  assert.equal(fs.existsSync(fx.auditLog), false);
});

test('audit: refused calls are audited with the reason', async (t) => {
  const fx = fixture(t);
  const { client } = await connect(t, fx, { ceiling: projectCeiling(fx) });
  const r = await callTool(client, 'run_code', { argv: [], GITHUB_TOKEN: 'ghp_' + 'q'.repeat(36) });
  assert.equal(r.isError, true);
  const records = readAudit(fx.auditLog);
  assert.equal(records.length, 1, JSON.stringify(records));
  assert.equal(records[0].type, 'refused');
  assert.equal(records[0].tool, 'run_code');
  assert.match(records[0].reason, /argv|unknown field/);
  assert.ok(!JSON.stringify(records).includes('q'.repeat(36)));
});

test('audit: the hash chain holds, and `agentbox audit verify` says intact', async (t) => {
  const fx = fixture(t);
  const { client } = await connect(t, fx, { ceiling: projectCeiling(fx) });
  for (const word of ['one', 'two', 'three']) {
    await callTool(client, 'run_code', { argv: ['echo', word] });
  }
  assert.equal(assertChain(fx.auditLog), 6);
  const v = await runAgentbox(['audit', 'verify', '--audit-log', fx.auditLog], { env: serverEnv(fx) });
  assert.equal(v.status, 0, v.stdout + v.stderr);
  assert.match(v.stdout + v.stderr, /intact/);
  // The default path is found the same way the server found it.
  const d = await runAgentbox(['audit', 'verify'], { env: serverEnv(fx) });
  assert.equal(d.status, 0, d.stdout + d.stderr);
});

test('audit: `agentbox audit verify` catches an edited line', async (t) => {
  const fx = fixture(t);
  const { client } = await connect(t, fx, { ceiling: projectCeiling(fx) });
  for (const word of ['one', 'two']) await callTool(client, 'run_code', { argv: ['echo', word] });
  const lines = fs.readFileSync(fx.auditLog, 'utf8').split('\n');
  assert.match(lines[1], /"exit_code":0/);
  lines[1] = lines[1].replace('"exit_code":0', '"exit_code":1'); // history rewritten
  const edited = fx.path('edited.jsonl');
  fs.writeFileSync(edited, lines.join('\n'), { mode: 0o600 });
  const v = await runAgentbox(['audit', 'verify', '--audit-log', edited], { env: serverEnv(fx) });
  assert.notEqual(v.status, 0, v.stdout + v.stderr);
  assert.match(v.stdout + v.stderr, /line 3/);
  assert.match(v.stdout + v.stderr, /edited|prev/);
});

test('audit: `agentbox audit verify` catches a deleted line', async (t) => {
  const fx = fixture(t);
  const { client } = await connect(t, fx, { ceiling: projectCeiling(fx) });
  for (const word of ['one', 'two']) await callTool(client, 'run_code', { argv: ['echo', word] });
  const lines = fs.readFileSync(fx.auditLog, 'utf8').split('\n');
  lines.splice(1, 1); // the first call's outcome disappears
  const cut = fx.path('deleted.jsonl');
  fs.writeFileSync(cut, lines.join('\n'), { mode: 0o600 });
  const v = await runAgentbox(['audit', 'verify', '--audit-log', cut], { env: serverEnv(fx) });
  assert.notEqual(v.status, 0, v.stdout + v.stderr);
  assert.match(v.stdout + v.stderr, /line 2/);
  assert.match(v.stdout + v.stderr, /delete/);
});

test('audit: `agentbox audit tail` shows the last records', async (t) => {
  const fx = fixture(t);
  const { client } = await connect(t, fx, { ceiling: projectCeiling(fx) });
  const r = await callTool(client, 'run_code', { argv: ['echo', 'tail'] });
  const id = r.structuredContent.audit_id;
  const json = await runAgentbox(['audit', 'tail', '-n', '2', '--json', '--audit-log', fx.auditLog],
                                 { env: serverEnv(fx) });
  assert.equal(json.status, 0, json.stderr);
  const shown = json.stdout.trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(shown.map((x) => [x.type, x.id]), [['pending', id], ['completed', id]]);
  const text = await runAgentbox(['audit', 'tail', '-n', '1', '--audit-log', fx.auditLog],
                                 { env: serverEnv(fx) });
  assert.equal(text.status, 0, text.stderr);
  assert.match(text.stdout, new RegExp(`completed.*run_code.*${id}`));
});

test('audit: two servers sharing one log keep one intact chain', async (t) => {
  const fx = fixture(t);
  const log = fx.path('shared/audit.jsonl');
  const a = await connect(t, fx, { ceiling: projectCeiling(fx), auditLog: log });
  const b = await connect(t, fx, { ceiling: projectCeiling(fx), auditLog: log });
  const calls = [];
  for (let i = 0; i < 6; ++i) {
    for (const { client } of [a, b]) calls.push(callTool(client, 'run_code', { argv: ['echo', `${i}`] }));
  }
  const results = await Promise.all(calls);
  for (const r of results) assert.ok(!r.isError, errorText(r));
  assert.equal(assertChain(log), 24);
  const sessions = new Set(readAudit(log).map((x) => x.session));
  assert.equal(sessions.size, 2);
  const v = await runAgentbox(['audit', 'verify', '--audit-log', log], { env: serverEnv(fx) });
  assert.equal(v.status, 0, v.stdout + v.stderr);
});

// Was a bug, now fixed: when the audit log lies inside a read-write grant (--audit-log or XDG_STATE_HOME
// pointing into the project), sandboxed code can read it and append to or rewrite it; with
// unkeyed hashes it can even rewrite the whole chain so that `audit verify` passes. Only
// `.local/state/agentbox` under a granted root or $HOME is protected (policy/protected_paths);
// the log path actually in use is not. Expected: the server hides the log's directory from
// every sandbox (e.g. adds it to the ceiling's denied list in cmd_mcp.cc / ToolContext), or
// refuses to start with a log inside the ceiling's writable paths.
test('audit: sandboxed code cannot read or change the log, even inside a granted directory', {
}, async (t) => {
  const fx = fixture(t);
  const log = path.join(fx.project, 'logs/audit.jsonl');
  const { client } = await connect(t, fx, { ceiling: projectCeiling(fx), auditLog: log });
  const r = await callTool(client, 'run_code', {
    argv: ['sh', '-c', 'cat logs/audit.jsonl; echo forged >> logs/audit.jsonl; echo "rc=$?"'],
  });
  // Refusing the call outright would also be acceptable; running it with the log exposed is not.
  if (!r.isError) {
    assert.doesNotMatch(r.structuredContent.stdout, /"type":"pending"/, 'the log was readable');
  }
  // The request itself (with the word in its argv) is audited; a forged LINE must not be.
  assert.ok(!fs.readFileSync(log, 'utf8').split('\n').includes('forged'), 'the log was writable');
  const read = await callTool(client, 'read_local_file', { path: 'logs/audit.jsonl' });
  assert.equal(read.isError, true, 'read_local_file returned the audit log');
});

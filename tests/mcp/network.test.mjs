// run_code's network {"allow_domains": [...]} (issue 7, docs/network.md): clamped to the
// operator's ceiling like every other grant, with a decision for each domain dropped, and the
// egress proxy's decisions in the result and in the audit record (network.connections).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { callTool, connect, errorText, fixture, readAudit } from './lib.mjs';

// Inside the sandbox: one request through HTTP_PROXY (the proxy variables are set in proxy
// mode), printing the status the proxy answered.
const CLIENT = [
  'import sys, urllib.request, urllib.error',
  'try:',
  '    urllib.request.urlopen(sys.argv[1], timeout=10)',
  'except urllib.error.HTTPError as e:',
  '    print(e.code, e.read().decode())',
].join('\n');

test('run_code allow_domains is clamped to the ceiling; refused requests are reported',
     async (t) => {
  const fx = fixture(t);
  const { client } = await connect(t, fx, {
    ceiling: {
      filesystem: { readwrite: [fx.project] },
      network: { proxy: { allowDomains: ['web.test:8080'], denyDomains: ['bad.web.test'] } },
    },
  });
  const r = await callTool(client, 'run_code', {
    argv: ['python3', '-c', CLIENT, 'http://other.test:8080/x'],
    network: { allow_domains: ['web.test:8080', 'other.test:8080', '*.test'] },
  });
  assert.ok(!r.isError, errorText(r));
  const s = r.structuredContent;
  // The clamp: only the ceiling's domain is kept, each dropped one comes back as a decision,
  // and the ceiling's deny list comes along.
  assert.deepEqual(s.policy.network, {
    proxy: { allowDomains: ['web.test:8080'], denyDomains: ['bad.web.test'] },
  });
  const dropped = s.decisions.map((d) => [d.kind, d.path, d.asked, d.granted]);
  assert.deepEqual(dropped, [['domain', 'other.test:8080', 'allow', 'none'],
                             ['domain', '*.test', 'allow', 'none']]);
  // The program asked for the dropped domain: the proxy refused it (403 naming the rule),
  // and the refusal is in the result ...
  assert.equal(s.exit_code, 0, s.stderr);
  assert.match(s.stdout,
               /^403 agentbox egress proxy: other\.test:8080 refused: .*not on the allowlist/);
  const refused = {
    protocol: 'http', host: 'other.test', port: 8080, allowed: false,
    reason: 'other.test:8080 is not on the allowlist (--allow-domain)',
  };
  assert.deepEqual(s.network, { connections: [refused] });
  // ... and in the audit record of the call.
  const done = readAudit(fx.auditLog).filter((x) => x.id === s.audit_id && x.type !== 'pending');
  assert.equal(done.length, 1);
  assert.deepEqual(done[0].outcome.network, { connections: [refused] }, JSON.stringify(done[0]));
  // Control: without network the same program gets no proxy at all (and no report).
  const blocked = await callTool(client, 'run_code', {
    argv: ['python3', '-c', CLIENT, 'http://other.test:8080/x'],
  });
  assert.ok(!blocked.isError, errorText(blocked));
  assert.notEqual(blocked.structuredContent.exit_code, 0);
  assert.equal(blocked.structuredContent.network, undefined);
  assert.equal(blocked.structuredContent.policy.network, 'block');
});

// Host setups chant's push and fetch must work with: a remote added with --mirror=push, and the
// settings a host passes to git through the environment (docs/design.md, "Git processes", says
// which): GIT_CONFIG_GLOBAL, GIT_CONFIG_COUNT/KEY/VALUE, GIT_SSL_CAINFO, a GIT_ASKPASS credential
// broker, GIT_SSH_COMMAND. Each is tried end to end over a real server on 127.0.0.1.
import assert from 'node:assert/strict';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { PolicyDocument } from '../lib/documents/replication.js';
import { Replicator } from '../lib/replication/replicator.js';
import { git, makeRepo, tempDir } from './helpers.js';
import { bareRemote, missingProgram, runnerPasses, startLighttpd, startSshd, withEnvironment } from './remotes.js';

const POLICY: PolicyDocument = { box: 'app', remote: 'origin', refs: ['work', 'kept', 'wip', 'ledger'], on: ['save', 'release'], every: null };
const REFS = ['refs/chant/wip/chant/work/W-001', 'refs/heads/chant/work/W-001'];
const USER = 'broker';
const PASSWORD = 'Brokered-5a1e';

/** A checkout with a work branch and a wip snapshot; the remote is added by `addRemote`. */
function checkout(addRemote: (dir: string) => void): string {
  const dir = makeRepo();
  const work = git(dir, ['commit-tree', 'HEAD^{tree}', '-p', 'HEAD', '-m', 'work 1']).trim();
  git(dir, ['update-ref', 'refs/heads/chant/work/W-001', work]);
  git(dir, ['update-ref', 'refs/chant/wip/chant/work/W-001', git(dir, ['commit-tree', 'HEAD^{tree}', '-p', work, '-m', 'wip 1']).trim()]);
  addRemote(dir);
  return dir;
}

/** Push then fetch on a replacement box, both in the same environment; every ref must go and come back. */
async function roundTrip(dir: string, url: string, env: Record<string, string>, configureBox: (box: string) => void = () => undefined): Promise<void> {
  await withEnvironment(env, async () => {
    const pushed = await new Replicator({ cwd: dir, policy: POLICY }).push();
    assert.deepEqual(pushed.replication.rejected, []);
    assert.deepEqual(pushed.replication.pushed.map((ref) => ref.ref), REFS);
    const box = makeRepo();
    git(box, ['remote', 'add', 'origin', url]);
    configureBox(box);
    const fetched = await new Replicator({ cwd: box, policy: POLICY }).fetch();
    assert.equal(fetched.failed, null);
    assert.deepEqual(fetched.refs.map((ref) => [ref.ref, ref.result]), REFS.map((ref) => [ref, 'created']));
  });
}

const HELPER = `!f() { test "$1" = get && printf 'username=${USER}\\npassword=${PASSWORD}\\n'; }; f`;

test('a remote added with --mirror=push takes chant\'s push, and fetch works from it', async () => {
  const remote = bareRemote();
  const dir = checkout((d) => git(d, ['remote', 'add', '--mirror=push', 'origin', remote]));
  await roundTrip(dir, remote, {});
  // Only the policy's refs went: a mirror push would have sent main too.
  assert.equal(git(remote, ['for-each-ref', '--format=%(refname)', 'refs/heads/main']), '');
});

test('GIT_CONFIG_GLOBAL naming the host\'s config, holding its credential helper, is used', async (t) => {
  const missing = missingProgram('lighttpd');
  if (missing !== null) return t.skip(missing);
  const server = await startLighttpd({ auth: { user: USER, password: PASSWORD } });
  const url = server.repository('global.git');
  const global = join(tempDir(), 'host.gitconfig');
  writeFileSync(global, `[user]\n\tname = Host\n\temail = host@example.com\n[credential]\n\thelper = "${HELPER.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"\n`);
  const dir = checkout((d) => git(d, ['remote', 'add', 'origin', url]));
  await runnerPasses(t, { GIT_CONFIG_GLOBAL: global });
  await roundTrip(dir, url, { GIT_CONFIG_GLOBAL: global });
});

test('GIT_CONFIG_COUNT, GIT_CONFIG_KEY_n and GIT_CONFIG_VALUE_n set by the host are used', async (t) => {
  const missing = missingProgram('lighttpd');
  if (missing !== null) return t.skip(missing);
  const server = await startLighttpd({ auth: { user: USER, password: PASSWORD } });
  const url = server.repository('count.git');
  const dir = checkout((d) => git(d, ['remote', 'add', 'origin', url]));
  const env = { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'credential.helper', GIT_CONFIG_VALUE_0: HELPER };
  await runnerPasses(t, env);
  await roundTrip(dir, url, env);
});

test('GIT_SSL_CAINFO naming the certificate of an https remote is used', async (t) => {
  const missing = missingProgram('lighttpd') ?? missingProgram('openssl');
  if (missing !== null) return t.skip(missing);
  const server = await startLighttpd({ tls: true });
  const url = server.repository('tls.git');
  const dir = checkout((d) => git(d, ['remote', 'add', 'origin', url]));
  const untrusted = await new Replicator({ cwd: dir, policy: POLICY }).push();
  assert.equal(untrusted.replication.rejected.length, REFS.length);
  assert.match(untrusted.replication.rejected[0]?.reason ?? '', /certificate/i);
  await runnerPasses(t, { GIT_SSL_CAINFO: server.caFile ?? '' });
  await roundTrip(dir, url, { GIT_SSL_CAINFO: server.caFile ?? '' });
});

test('a GIT_ASKPASS credential broker answers for the host, and nothing prompts', async (t) => {
  const missing = missingProgram('lighttpd');
  if (missing !== null) return t.skip(missing);
  const server = await startLighttpd({ auth: { user: USER, password: PASSWORD } });
  const url = server.repository('askpass.git');
  const broker = join(tempDir(), 'broker.sh');
  writeFileSync(broker, `#!/bin/sh\ncase "$1" in Username*) echo ${USER} ;; *) echo ${PASSWORD} ;; esac\n`);
  chmodSync(broker, 0o755);
  const dir = checkout((d) => git(d, ['remote', 'add', 'origin', url]));
  await runnerPasses(t, { GIT_ASKPASS: broker });
  await roundTrip(dir, url, { GIT_ASKPASS: broker });
});

test('GIT_SSH_COMMAND naming the host\'s key reaches sshd, in batch mode', async (t) => {
  const missing = missingProgram('sshd');
  if (missing !== null) return t.skip(missing);
  const server = await startSshd();
  const url = server.repository('ssh.git');
  const dir = checkout((d) => git(d, ['remote', 'add', 'origin', url]));
  await runnerPasses(t, { GIT_SSH_COMMAND: server.sshCommand });
  await roundTrip(dir, url, { GIT_SSH_COMMAND: server.sshCommand });
});

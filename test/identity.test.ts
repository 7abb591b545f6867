import { git, makeRepo, tempDir, writeFiles, assertRefusal } from './helpers.js';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { SimpleGitRunner } from '../lib/git/runner.js';
import type { GitRunner } from '../lib/git/runner.js';
import { checkPrincipal, isForgeIdentity, normalizePrincipal } from '../lib/workspace/identity.js';

const IDENTIFIED = JSON.stringify({
  identity: { attribution: 'identified' },
  agents: [{ name: 'hud-turns', principals: ['hud-bot@example.com'] }, { name: 'broken', principals: 'not a list' }, 'not an agent'],
});
const ANY = JSON.stringify({ identity: { attribution: 'any' } });

/** A git runner that counts the processes it starts. */
function counting(cwd: string): GitRunner & { calls: string[][] } {
  const inner = new SimpleGitRunner(cwd);
  const calls: string[][] = [];
  return { calls, run: (args, options) => (calls.push([...args]), inner.run(args, options)) };
}

function commitAll(dir: string, message = 'change'): void {
  git(dir, ['add', '-A']);
  git(dir, ['commit', '-q', '--allow-empty', '-m', message]);
}

/** A checkout on main whose base commit holds `files`. */
function based(files: Readonly<Record<string, string>>): string {
  return makeRepo({ 'README.md': 'hello\n', ...files });
}

async function check(top: string, by: string | null, options: { cwd?: string; env?: Record<string, string | undefined> } = {}): Promise<void> {
  await checkPrincipal({ git: new SimpleGitRunner(top), cwd: options.cwd ?? top, top, by, env: options.env ?? {} });
}

const refuses = assertRefusal;

describe('forge identities', () => {
  test('each accepted forge form is a forge identity', () => {
    for (const value of [
      'github:alex', 'gitlab:alex', 'github:a', 'github:a.b-c_', 'github:x_', 'github:0',
      'GitHub:Alex', '  github:alex  ', '\uFF47\uFF49\uFF54\uFF48\uFF55\uFF42:alex',
      'forgejo@codeberg.org:alex', 'gitea@git.example.com:alex', 'github@github.example:a', 'gitlab@localhost:alex', 'gitea@10.0.0.7:ops',
      `github:a${'b'.repeat(98)}`,
    ]) {
      assert.equal(isForgeIdentity(value), true, value);
    }
  });

  test('refused forms are not forge identities', () => {
    for (const value of [
      'alex', 'github:alex-', 'github:_x', 'github:.x', 'github:', 'forgejo:x', 'gitea:x', 'bitbucket:alex',
      'forgejo@:x', 'forgejo@-bad.example:x', 'forgejo@host..example:x', 'gitea@host:8080:x', 'github @github.com:x',
      'github:al ex', 'github:alex@example.com', `github:a${'b'.repeat(99)}`, 'alex@example.com',
    ]) {
      assert.equal(isForgeIdentity(value), false, value);
    }
  });

  test('principals compare after NFKC, trimming and lower-casing', () => {
    assert.equal(normalizePrincipal('  GitHub:\uFF21lex '), 'github:alex');
    assert.equal(normalizePrincipal('ﬁle'), 'file');
  });
});

describe('the identity rule for --by', () => {
  test('with attribution identified, a forge identity is accepted without running git', async () => {
    const top = based({ 'chant.workspace.json': IDENTIFIED });
    const runner = counting(top);
    await checkPrincipal({ git: runner, cwd: top, top, by: 'github:alex', env: {} });
    assert.deepEqual(runner.calls, []);
  });

  test('with attribution identified, an unidentified principal is principal-unidentified, listing the accepted forms', async () => {
    const top = based({ 'chant.workspace.json': IDENTIFIED });
    for (const by of ['alex', 'github:alex-', 'github:_x', 'forgejo:x']) {
      const message = await refuses(() => check(top, by), 'principal-unidentified');
      for (const form of ['github:<login>', 'gitlab:<login>', '<forge>@<host>:<login>', '.chant/allowed_signers', 'agents[].principals', '.chant/trust.json', 'agent, runner or service']) {
        assert.ok(message.includes(form), `${form} in: ${message}`);
      }
      assert.ok(message.includes(JSON.stringify(by)), message);
      assert.ok(message.includes('main:chant.workspace.json'), message);
    }
  });

  test('no --by is never judged', async () => {
    const top = based({ 'chant.workspace.json': IDENTIFIED });
    const runner = counting(top);
    await checkPrincipal({ git: runner, cwd: top, top, by: null, env: {} });
    assert.deepEqual(runner.calls, []);
  });

  test('attribution any, an absent identity block and no declaration judge nothing', async () => {
    const cases: Record<string, string>[] = [{ 'chant.workspace.json': ANY }, { 'chant.workspace.json': '{"members": []}' }, {}];
    for (const files of cases) {
      const top = based(files);
      await assert.doesNotReject(check(top, 'alex'));
    }
  });

  test('the declaration at base wins over an edited working-tree declaration', async () => {
    const strict = based({ 'chant.workspace.json': IDENTIFIED });
    writeFiles(strict, { 'chant.workspace.json': ANY });
    await refuses(() => check(strict, 'alex'), 'principal-unidentified');

    const lax = based({ 'chant.workspace.json': ANY });
    writeFiles(lax, { 'chant.workspace.json': IDENTIFIED });
    await assert.doesNotReject(check(lax, 'alex'));
  });

  test('origin/HEAD is the base before a local main', async () => {
    const upstream = based({ 'chant.workspace.json': IDENTIFIED });
    const clone = tempDir();
    git(clone, ['clone', '-q', upstream, '.']);
    writeFiles(clone, { 'chant.workspace.json': ANY });
    commitAll(clone, 'relax identity locally');
    await refuses(() => check(clone, 'alex'), 'principal-unidentified', /origin\/HEAD:chant\.workspace\.json/);
  });

  test('master is the base when there is no main', async () => {
    const top = makeRepo({ 'chant.workspace.json': IDENTIFIED }, { initArgs: ['-b', 'master'] });
    git(top, ['checkout', '-q', '-b', 'chant/work/W-001']);
    writeFiles(top, { 'chant.workspace.json': ANY });
    commitAll(top);
    await refuses(() => check(top, 'alex'), 'principal-unidentified', /master:chant\.workspace\.json/);
  });

  test('with no base the working tree declaration is used', async () => {
    const strict = makeRepo({ 'README.md': 'x\n' }, { initArgs: ['-b', 'trunk'] });
    writeFiles(strict, { 'chant.workspace.json': IDENTIFIED });
    await refuses(() => check(strict, 'alex'), 'principal-unidentified');
    const lax = makeRepo({ 'chant.workspace.json': ANY }, { initArgs: ['-b', 'trunk'] });
    await assert.doesNotReject(check(lax, 'alex'));
  });

  test('a base without a declaration falls back to the working tree declaration', async () => {
    const top = based({});
    writeFiles(top, { 'chant.workspace.json': IDENTIFIED });
    await refuses(() => check(top, 'alex'), 'principal-unidentified', /\/chant\.workspace\.json requires one/);
  });

  test('the declaration at base is the nearest to the working directory, as in the working tree', async () => {
    const top = based({ 'chant.workspace.json': ANY, 'team/chant.workspace.jsonc': `// team rules\n${IDENTIFIED}`, 'team/svc/a.txt': 'a\n' });
    await refuses(() => check(top, 'alex', { cwd: join(top, 'team', 'svc') }), 'principal-unidentified', /main:team\/chant\.workspace\.jsonc/);
    await assert.doesNotReject(check(top, 'alex', { cwd: top }));
  });

  test('both declaration names in one folder at base is declaration-ambiguous', async () => {
    const top = based({ 'chant.workspace.json': ANY, 'chant.workspace.jsonc': IDENTIFIED });
    await refuses(() => check(top, 'alex'), 'declaration-ambiguous', /main:chant\.workspace\.json and main:chant\.workspace\.jsonc/);
  });

  test('a declaration at base that is not JSON is declaration-unparseable, located at base', async () => {
    const top = based({ 'chant.workspace.json': '{"identity": ' });
    await refuses(() => check(top, 'alex'), 'declaration-unparseable', /^main:chant\.workspace\.json:1:14: /);
  });

  test('CHANT_AGENT naming an agent session declared at base skips the check', async () => {
    const top = based({ 'chant.workspace.json': IDENTIFIED });
    await assert.doesNotReject(check(top, 'alex', { env: { CHANT_AGENT: 'hud-turns' } }));
  });

  test('CHANT_AGENT naming an undeclared session, or empty, does not skip the check', async () => {
    const top = based({ 'chant.workspace.json': IDENTIFIED });
    for (const agent of ['someone-else', '', '   ', 'broken-session']) {
      await refuses(() => check(top, 'alex', { env: { CHANT_AGENT: agent } }), 'principal-unidentified');
    }
  });

  test('CHANT_AGENT declared only in the working tree does not skip the check', async () => {
    const top = based({ 'chant.workspace.json': IDENTIFIED });
    writeFiles(top, { 'chant.workspace.json': JSON.stringify({ identity: { attribution: 'identified' }, agents: [{ name: 'sneaky' }] }) });
    await refuses(() => check(top, 'alex', { env: { CHANT_AGENT: 'sneaky' } }), 'principal-unidentified');
  });

  test('CHANT_AGENT is read from the process environment when no env is given', async () => {
    const top = based({ 'chant.workspace.json': IDENTIFIED });
    const before = process.env.CHANT_AGENT;
    process.env.CHANT_AGENT = 'hud-turns';
    try {
      await assert.doesNotReject(checkPrincipal({ git: new SimpleGitRunner(top), cwd: top, top, by: 'alex' }));
    } finally {
      if (before === undefined) delete process.env.CHANT_AGENT;
      else process.env.CHANT_AGENT = before;
    }
  });

  test('a principal of an agent session declared at base is accepted', async () => {
    const top = based({ 'chant.workspace.json': IDENTIFIED });
    await assert.doesNotReject(check(top, 'hud-bot@example.com'));
    await assert.doesNotReject(check(top, ' HUD-bot@Example.com'));
  });

  test('a principal listed in .chant/allowed_signers at base is accepted', async () => {
    const top = based({
      'chant.workspace.json': IDENTIFIED,
      '.chant/allowed_signers': [
        '# who may sign',
        'alice@example.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA alice',
        'bob@example.com,carol@example.com namespaces="git" ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB',
        '"dave@example.com" ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIC',
        '*@example.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAID',
        '',
      ].join('\n'),
    });
    for (const by of ['alice@example.com', 'bob@example.com', 'carol@example.com', 'dave@example.com']) await assert.doesNotReject(check(top, by), by);
    for (const by of ['#', 'who', 'ssh-ed25519', 'erin@example.com', '*@example.com']) await refuses(() => check(top, by), 'principal-unidentified');
  });

  test('a signers file only in the working tree does not identify anyone when there is a base', async () => {
    const top = based({ 'chant.workspace.json': IDENTIFIED });
    writeFiles(top, { '.chant/allowed_signers': 'mallory@example.com ssh-ed25519 AAAA\n' });
    await refuses(() => check(top, 'mallory@example.com'), 'principal-unidentified');
  });

  test('with no base the signers file of the working tree is read', async () => {
    const top = makeRepo({ 'chant.workspace.json': IDENTIFIED, '.chant/allowed_signers': 'alice@example.com ssh-ed25519 AAAA\n' }, { initArgs: ['-b', 'trunk'] });
    await assert.doesNotReject(check(top, 'alice@example.com'));
    await refuses(() => check(top, 'bob@example.com'), 'principal-unidentified', /in the working tree/);
  });

  test('the agent, runner and service roles of .chant/trust.json at base are accepted, as a map or a list', async () => {
    const mapped = based({
      'chant.workspace.json': IDENTIFIED,
      '.chant/trust.json': JSON.stringify({ roles: { 'ci-runner': 'runner', 'deployer': ['reviewer', 'service'], 'turn-bot': 'Agent', 'alex': 'maintainer' } }),
    });
    for (const by of ['ci-runner', 'deployer', 'turn-bot']) await assert.doesNotReject(check(mapped, by), by);
    await refuses(() => check(mapped, 'alex'), 'principal-unidentified');

    const listed = based({
      'chant.workspace.json': IDENTIFIED,
      '.chant/trust.json': JSON.stringify({ roles: [{ principal: 'ci-runner', role: 'runner' }, { principal: 'bot', roles: ['agent'] }, { principal: 'alex', roles: ['human'] }, 'junk'] }),
    });
    for (const by of ['ci-runner', 'bot']) await assert.doesNotReject(check(listed, by), by);
    await refuses(() => check(listed, 'alex'), 'principal-unidentified');
  });

  test('a trust.json that is not JSON grants no roles, and the refusal says so', async () => {
    const top = based({ 'chant.workspace.json': IDENTIFIED, '.chant/trust.json': '{ roles: ' });
    await refuses(() => check(top, 'ci-runner'), 'principal-unidentified', /\.chant\/trust\.json at main is not JSON/);
  });

  test('a refused principal costs a handful of git processes', async () => {
    const top = based({ 'chant.workspace.json': IDENTIFIED, '.chant/allowed_signers': 'a@b k\n', '.chant/trust.json': '{}' });
    const runner = counting(top);
    await refuses(() => checkPrincipal({ git: runner, cwd: top, top, by: 'alex', env: {} }), 'principal-unidentified');
    assert.deepEqual(runner.calls.map((args) => args.slice(0, 2).join(' ')), ['for-each-ref --format=%(refname)%00%(objectname)%00%(objecttype)', 'cat-file --batch-check=%(objectname) %(objecttype)', 'cat-file blob', 'cat-file blob', 'cat-file blob']);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { git, makeRepo, runCli, stateOf, tempDir, writeFiles } from './helpers.js';

const IDENTIFIED = `${JSON.stringify({ identity: { attribution: 'identified' }, members: [{ name: 'app', box: {} }] }, null, 2)}\n`;

/** A repository whose declaration at base demands identified principals. */
function identifiedRepo(): string {
  return makeRepo({ 'README.md': 'x\n', 'chant.workspace.json': IDENTIFIED });
}

/** Runs the CLI and asserts it refused with `code`, exit 1, and wrote nothing. */
async function refusedWith(dir: string, args: readonly string[], code: string, env?: NodeJS.ProcessEnv): Promise<string> {
  const before = stateOf(dir);
  const run = await runCli(dir, args, env);
  assert.equal(run.code, 1, run.stdout);
  assert.equal(run.doc.error.code, code, run.doc.error.message);
  assert.deepEqual(stateOf(dir), before, 'nothing was written');
  return run.doc.error.message;
}

describe('the order checks run in', () => {
  it('save: a bad label before a bad --by', async () => {
    const dir = makeRepo();
    assert.match(await refusedWith(dir, ['workspace', 'wip', 'save', '--label', '', '--by', 'a\nb'], 'write-usage-invalid'), /--label/);
  });

  it('save: a bad --by before not being in a repository', async () => {
    const outside = tempDir();
    const run = await runCli(outside, ['workspace', 'wip', 'save', '--by', 'x'.repeat(201)]);
    assert.equal(run.doc.error.code, 'write-usage-invalid');
    assert.match(run.doc.error.message, /--by/);
  });

  it('save: not a repository before anything about a declaration', async () => {
    const outside = tempDir();
    writeFiles(outside, { 'chant.workspace.json': '{ nope' });
    const run = await runCli(outside, ['workspace', 'wip', 'save']);
    assert.equal(run.doc.error.code, 'not-a-git-repository');
  });

  it('save: a bad declaration before a detached HEAD', async () => {
    const dir = makeRepo();
    git(dir, ['checkout', '-q', '--detach']);
    writeFiles(dir, { 'chant.workspace.json': '{ "members": [ }' });
    await refusedWith(dir, ['workspace', 'wip', 'save'], 'declaration-unparseable');
    writeFiles(dir, { 'chant.workspace.json': JSON.stringify({ members: [{ name: 'app', box: { replicate: { refs: [] } } }] }) });
    assert.match(await refusedWith(dir, ['workspace', 'wip', 'save'], 'declaration-invalid'), /chant\.workspace\.json:1:\d+/);
  });

  it('save: a detached HEAD before an unidentified principal', async () => {
    const dir = identifiedRepo();
    git(dir, ['checkout', '-q', '--detach']);
    await refusedWith(dir, ['workspace', 'wip', 'save', '--by', 'alex'], 'wip-no-branch');
  });

  it('save: an unidentified principal is refused and nothing is written; an identified one saves', async () => {
    const dir = identifiedRepo();
    writeFiles(dir, { 'work.txt': 'w\n' });
    const message = await refusedWith(dir, ['workspace', 'wip', 'save', '--by', 'alex'], 'principal-unidentified');
    assert.match(message, /github:<login>/);
    const ok = await runCli(dir, ['workspace', 'wip', 'save', '--by', 'github:alex']);
    assert.equal(ok.code, 0, ok.stdout);
  });

  it('save: CHANT_AGENT naming a declared agent session skips the identity check', async () => {
    const declared = `${JSON.stringify({ identity: { attribution: 'identified' }, agents: [{ name: 'hud-7' }], members: [] })}\n`;
    const dir = makeRepo({ 'README.md': 'x\n', 'chant.workspace.json': declared });
    const ok = await runCli(dir, ['workspace', 'wip', 'save', '--by', 'alex'], { ...process.env, CHANT_AGENT: 'hud-7' });
    assert.equal(ok.code, 0, ok.stdout);
    await refusedWith(dir, ['workspace', 'wip', 'save', '--by', 'alex', '--label', 'x'], 'principal-unidentified', { ...process.env, CHANT_AGENT: 'someone-else' });
  });

  it('restore: a bad --by before not being in a repository, and that before anything else', async () => {
    const outside = tempDir();
    const bad = await runCli(outside, ['workspace', 'wip', 'restore', '--by', '\u202e']);
    assert.equal(bad.doc.error.code, 'write-usage-invalid');
    const plain = await runCli(outside, ['workspace', 'wip', 'restore', 'nothing']);
    assert.equal(plain.doc.error.code, 'not-a-git-repository');
  });

  it('restore: no branch before the target, the target before the branch, the branch before the identity', async () => {
    const dir = identifiedRepo();
    git(dir, ['checkout', '-q', '--detach']);
    await refusedWith(dir, ['workspace', 'wip', 'restore', 'no-such', '--by', 'alex'], 'wip-no-branch');
    git(dir, ['checkout', '-q', 'main']);
    await refusedWith(dir, ['workspace', 'wip', 'restore', '--by', 'alex'], 'wip-none');
    await refusedWith(dir, ['workspace', 'wip', 'restore', 'no-such', '--by', 'alex'], 'wip-snapshot-unknown');
    const saved = await runCli(dir, ['workspace', 'wip', 'save', '--by', 'github:alex']);
    git(dir, ['checkout', '-q', '-b', 'other']);
    await refusedWith(dir, ['workspace', 'wip', 'restore', saved.doc.snapshot.commit, '--by', 'alex'], 'wip-branch-other');
    git(dir, ['checkout', '-q', 'main']);
    writeFiles(dir, { 'changed.txt': 'c\n' });
    await refusedWith(dir, ['workspace', 'wip', 'restore', '--by', 'alex'], 'principal-unidentified');
  });

  it('restore: does not read the policy, so a broken declaration does not stop it', async () => {
    const dir = makeRepo();
    const saved = await runCli(dir, ['workspace', 'wip', 'save']);
    writeFiles(dir, { 'chant.workspace.json': '{ broken', 'x.txt': 'x\n' });
    const restored = await runCli(dir, ['workspace', 'wip', 'restore', saved.doc.snapshot.commit]);
    assert.equal(restored.code, 0, restored.stdout);
  });

  it('the read: a bad declaration is its refusal, with the read document', async () => {
    const dir = makeRepo();
    writeFiles(dir, { 'chant.workspace.json': '[1,', 'chant.workspace.jsonc': '{}' });
    const run = await runCli(dir, ['workspace', 'wip', '--json']);
    assert.equal(run.code, 1);
    assert.equal(run.doc.error.code, 'declaration-ambiguous');
    assert.equal(run.doc.$schema, 'https://intentius.io/chant/schemas/workspace/wip/v1/wip.schema.json');
  });
});

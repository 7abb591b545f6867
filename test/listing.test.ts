import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { shown } from '../cli/listing.js';
import { assertValidDocument, git, makeRepo, runCli, tempDir, writeFiles } from './helpers.js';

const EPOCH = 1796195807;

interface Crafted {
  branch: string;
  /** What Chant-Wip-Branch says, when not the branch of the ref. */
  trailerBranch?: string;
  label?: string;
  by?: string;
  count: number;
}

/**
 * Writes snapshot chains with git fast-import, as a remote could have sent them: trailers as the
 * contract states, labels and principals whatever their writer put there. Fast: 500 commits in
 * one process.
 */
function craftChains(dir: string, chains: readonly Crafted[]): void {
  const head = git(dir, ['rev-parse', 'HEAD']).trim();
  const parts: string[] = [];
  let mark = 0;
  for (const chain of chains) {
    let previous: number | null = null;
    for (let index = 0; index < chain.count; index += 1) {
      mark += 1;
      const label = chain.label === undefined ? `turn:${index + 1}` : chain.label;
      const trailers = [`Chant-Wip-Branch: ${chain.trailerBranch ?? chain.branch}`, `Chant-Wip-Head: ${head}`, 'Chant-Wip-Kind: save', `Chant-Wip-Label: ${label}`];
      if (chain.by !== undefined) trailers.push(`Chant-Wip-By: ${chain.by}`);
      const message = Buffer.from(`chant wip: ${chain.branch}\n\n${trailers.join('\n')}\n`);
      parts.push(
        `commit refs/chant/wip/${chain.branch}`,
        `mark :${mark}`,
        `committer Crafter <crafter@example.com> ${EPOCH + mark} +0000`,
        `data ${message.length}`,
        message.toString('utf8'),
        previous === null ? `from ${head}` : `from :${previous}\nmerge ${head}`,
        '',
      );
      previous = mark;
    }
  }
  git(dir, ['fast-import', '--quiet'], { input: `${parts.join('\n')}\n` });
}

describe('the listing for people', () => {
  it('shows escape sequences and control characters from any snapshot field escaped', async () => {
    const dir = makeRepo();
    const osc52 = '\u001b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\u0007';
    const hyperlink = '\u001b]8;;https://evil.example\u001b\\click\u001b]8;;\u001b\\';
    craftChains(dir, [
      { branch: 'main', label: `turn:1${osc52}\u001b[2J\rfake`, by: `github:alex${hyperlink}\u202e`, count: 1 },
      { branch: 'other', trailerBranch: 'other\u001b[31m', count: 1 },
    ]);
    const run = await runCli(dir, ['workspace', 'wip']);
    assert.equal(run.code, 0, run.stdout);
    assert.doesNotMatch(run.stdout, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/, 'nothing but newlines among the control characters');
    assert.match(run.stdout, /turn:1\\e\]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\\x07\\e\[2J\\rfake/);
    assert.match(run.stdout, /by github:alex\\e\]8;;https:\/\/evil\.example\\e\\\\click/);
    assert.match(run.stdout, /\\u202e/);
    assert.match(run.stdout, /\(taken on other\\e\[31m\)/);
    // The document keeps the values as they are: escaping is the listing's business.
    const read = await runCli(dir, ['workspace', 'wip', '--json']);
    assert.ok(read.doc.branches.some((entry: { snapshots: Array<{ label: string }> }) => entry.snapshots.some((snapshot) => snapshot.label?.includes('\u001b]52;'))));
  });

  it('escapes unambiguously: a backslash is doubled', () => {
    assert.equal(shown('a\\e'), 'a\\\\e');
    assert.equal(shown('\u001b'), '\\e');
    assert.equal(shown('\u0085x\u2028'), '\\x85x\\u2028');
    assert.equal(shown('naïve 日本'), 'naïve 日本');
  });

  it('shows 10 snapshots by default, more with --limit, all with --all, and the document with --json --limit', async () => {
    const dir = makeRepo();
    craftChains(dir, [{ branch: 'main', count: 25 }]);
    const shownTurns = (stdout: string) => [...stdout.matchAll(/turn:(\d+)/g)].map((match) => Number(match[1]));
    const plain = await runCli(dir, ['workspace', 'wip']);
    assert.deepEqual(shownTurns(plain.stdout), [25, 24, 23, 22, 21, 20, 19, 18, 17, 16]);
    assert.match(plain.stdout, /… and 15 older \(--limit <n> or --all shows them/);
    const twenty = await runCli(dir, ['workspace', 'wip', '--limit', '20']);
    assert.equal(shownTurns(twenty.stdout).length, 20);
    assert.match(twenty.stdout, /… and 5 older/);
    const all = await runCli(dir, ['workspace', 'wip', '--all']);
    assert.equal(shownTurns(all.stdout).length, 25);
    assert.doesNotMatch(all.stdout, /older/);
    const limited = await runCli(dir, ['workspace', 'wip', '--json', '--limit', '3']);
    assert.equal(limited.code, 0);
    assert.deepEqual(limited.doc.branches[0].snapshots.map((snapshot: { label: string }) => snapshot.label), ['turn:25', 'turn:24', 'turn:23']);
    await assertValidDocument(limited.doc);
    const whole = await runCli(dir, ['workspace', 'wip', '--json']);
    assert.equal(whole.doc.branches[0].snapshots.length, 25);
    for (const bad of [['--limit', '0'], ['--limit', 'ten'], ['--limit', '-1'], ['--limit', '5', '--all']]) {
      const run = await runCli(dir, ['workspace', 'wip', ...bad]);
      assert.equal(run.code, 1, bad.join(' '));
      assert.equal(run.doc.error.code, 'write-usage-invalid');
      await assertValidDocument(run.doc, { oursOnly: true });
    }
  });

  it('takes --branch as refs/heads/<b> and says when a name matches no branch, naming those that have snapshots', async () => {
    const dir = makeRepo();
    craftChains(dir, [{ branch: 'chant/work/W-001', count: 3 }, { branch: 'main', count: 1 }]);
    const full = await runCli(dir, ['workspace', 'wip', '--branch', 'refs/heads/chant/work/W-001']);
    assert.match(full.stdout, /chant\/work\/W-001: 3 snapshots/);
    const json = await runCli(dir, ['workspace', 'wip', '--branch', 'refs/heads/chant/work/W-001', '--json']);
    assert.deepEqual(json.doc.branches.map((entry: { branch: string }) => entry.branch), ['chant/work/W-001']);
    const unknown = await runCli(dir, ['workspace', 'wip', '--branch', 'W-001']);
    assert.equal(unknown.code, 0);
    assert.match(unknown.stdout, /No snapshots on a branch named W-001\./);
    assert.match(unknown.stdout, /Branches with snapshots: chant\/work\/W-001, main\./);
    assert.doesNotMatch(unknown.stdout, /No snapshots yet/);
  });

  it('stays safe and useful with 500 snapshots and 300 unpushed refs', async () => {
    const dir = makeRepo();
    const remote = tempDir();
    git(remote, ['init', '-q', '--bare', '.']);
    git(dir, ['remote', 'add', 'origin', remote]);
    writeFiles(dir, { 'chant.workspace.json': `${JSON.stringify({ members: [{ name: 'app', box: { replicate: { remote: 'origin', refs: ['wip'], on: [] } } }] })}\n` });
    git(dir, ['add', '-A']);
    git(dir, ['commit', '-q', '-m', 'declare']);
    craftChains(dir, [
      { branch: 'main', count: 500 },
      ...Array.from({ length: 299 }, (_, index) => ({ branch: `chant/work/W-${String(index).padStart(3, '0')}`, count: 1 })),
    ]);
    const run = await runCli(dir, ['workspace', 'wip']);
    assert.equal(run.code, 0, run.stdout);
    const lines = run.stdout.split('\n');
    assert.ok(lines.length < 300 * 4 + 60, `${lines.length} lines`);
    assert.match(run.stdout, /main: 500 snapshots/);
    assert.match(run.stdout, /… and 490 older/);
    assert.match(run.stdout, /Replication: 300 of 300 refs not yet on origin \(300 wip\):/);
    const replicationLines = lines.slice(lines.findIndex((line) => line.startsWith('Replication:')));
    assert.ok(replicationLines.length <= 8, replicationLines.join('\n'));
    assert.match(run.stdout, /… and 295 more \(--json lists them all/);
    const one = await runCli(dir, ['workspace', 'wip', '--json', '--limit', '1']);
    assert.equal(one.doc.branches.length, 300);
    assert.ok(one.doc.branches.every((entry: { snapshots: unknown[] }) => entry.snapshots.length === 1));
    assert.equal(one.doc.replication.refs.length, 300, 'the document keeps every ref');
    await assertValidDocument(one.doc);
  });

  it('caps the paths a refusal names in its message, keeping every one in error.paths', async () => {
    const dir = makeRepo({ '.gitignore': 'build/\n', 'README.md': 'hello\n' });
    const files: Record<string, string> = {};
    for (let index = 0; index < 40; index += 1) files[`build/out-${String(index).padStart(2, '0')}.o`] = 'tracked once\n';
    writeFiles(dir, files);
    // Saved while not yet ignored: a snapshot holding build/, then build/ becomes ignored.
    writeFiles(dir, { '.gitignore': '' });
    const saved = await runCli(dir, ['workspace', 'wip', 'save']);
    assert.equal(saved.code, 0, saved.stdout);
    writeFiles(dir, { '.gitignore': 'build/\n' });
    for (const name of Object.keys(files)) writeFiles(dir, { [name]: 'changed, and ignored now\n' });
    const run = await runCli(dir, ['workspace', 'wip', 'restore', saved.doc.snapshot.commit]);
    assert.equal(run.code, 1, run.stdout);
    assert.equal(run.doc.error.code, 'wip-restore-blocked');
    assert.equal(run.doc.error.paths.length, 40);
    assert.match(run.doc.error.message, /; and \d+ more \(all in error\.paths\)$/);
    assert.ok(run.doc.error.message.length < 1000, run.doc.error.message);
    await assertValidDocument(run.doc, { oursOnly: true });
  });
});

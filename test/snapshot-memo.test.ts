import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { git, makeRepo, numstat, tempDir, writeFiles } from './helpers.js';
import { SimpleGitRunner } from '../lib/git/runner.js';
import type { GitRunner } from '../lib/git/runner.js';
import { SNAPSHOT_MEMO_FILE } from '../lib/managers/snapshot-memo.js';
import { WipStore } from '../lib/store/wip-store.js';
import { isWipError } from '../lib/errors.js';
import type { ListOptions } from '../lib/store/wip-store.js';
import type { ListResult } from '../lib/documents/wip-read.js';

/** A store whose git calls are counted by subcommand. */
function countingStore(dir: string): { store: WipStore; calls: string[] } {
  const calls: string[] = [];
  const runner = new SimpleGitRunner(dir);
  const counting: GitRunner = { run: (args, options) => (calls.push(args[0] as string), runner.run(args, options)) };
  return { store: new WipStore({ cwd: dir, policy: null, git: counting }), calls };
}

/** What the read says with no memo at all; the memo there before is put back afterwards. */
async function withoutMemo(dir: string, options: ListOptions = {}): Promise<ListResult> {
  const memo = join(dir, '.git', SNAPSHOT_MEMO_FILE);
  const kept = `${memo}.kept`;
  if (existsSync(memo)) cpSync(memo, kept);
  rmSync(memo, { force: true });
  try {
    return await new WipStore({ cwd: dir, policy: null }).list(options);
  } finally {
    rmSync(memo, { force: true });
    if (existsSync(kept)) {
      cpSync(kept, memo);
      rmSync(kept);
    }
  }
}

/**
 * Every entry the memo file holds, line by line, a line that is not JSON (an unfinished append)
 * left out, as `{commit, label}` (a line names its strings by position in its first list).
 */
function memoEntries(dir: string): Array<{ commit: string; label: string | null }> {
  const [, ...lines] = readFileSync(join(dir, '.git', SNAPSHOT_MEMO_FILE), 'utf8').split('\n');
  return lines.flatMap((line) => {
    try {
      const [strings, entries] = JSON.parse(line) as [string[], unknown[][]];
      return entries.map((entry) => ({ commit: entry[0] as string, label: typeof entry[6] === 'number' ? (strings[entry[6]] as string) : null }));
    } catch {
      return [];
    }
  });
}

/**
 * A chain of `count` snapshots on `refs/chant/wip/<branch>` over HEAD, written by one git
 * fast-import (plain git, as the bench builds its chains), each labelled `<branch>:<i>`.
 */
function importChain(dir: string, branch: string, count: number): void {
  const head = git(dir, ['rev-parse', 'HEAD']).trim();
  const parts: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const message = `chant wip: ${branch} (${branch}:${i})\n\nChant-Wip-Branch: ${branch}\nChant-Wip-Head: ${head}\nChant-Wip-Kind: save\nChant-Wip-Label: ${branch}:${i}\n`;
    parts.push(`commit refs/chant/wip/${branch}\nmark :${i + 1}\ncommitter T <t@example.com> ${1790000000 + i} +0000\ndata ${Buffer.byteLength(message)}\n${message}`);
    parts.push(i === 0 ? `from ${head}\n\n` : `from :${i}\nmerge ${head}\n\n`);
  }
  git(dir, ['fast-import', '--quiet', '--force'], { input: parts.join('') });
}

/** Asserts each snapshot listed carries git's counts against the one before it on its chain (its head for the chain's first). */
function countsAreGits(dir: string, read: ListResult, step: string): void {
  for (const branch of read.branches) {
    for (const [index, snapshot] of branch.snapshots.entries()) {
      const below = (branch.older ?? 0) > 0 ? git(dir, ['rev-parse', `${snapshot.commit}^1`]).trim() : snapshot.head;
      const against = branch.snapshots[index + 1]?.commit ?? below;
      assert.deepEqual(snapshot.changes, { against, ...numstat(dir, against, snapshot.commit) }, `${step}: ${snapshot.label ?? snapshot.commit}`);
    }
  }
}


/**
 * Packs the wip chains' refs and objects (HEAD's stay loose, so that the checkout is still read
 * from its files): a read then asks git for them, where loose ones are read from their files.
 */
function packChains(dir: string): void {
  git(dir, ['pack-refs', '--all']);
  const objects = git(dir, ['rev-list', '--objects', '--branches=*', '--glob=refs/chant/*', '--not', 'HEAD']).split('\n').map((line) => line.split(' ')[0]).filter((oid) => oid !== '').join('\n');
  git(dir, ['pack-objects', '-q', join(dir, '.git', 'objects', 'pack', 'pack')], { input: `${objects}\n` });
  git(dir, ['prune-packed']);
}
describe('the snapshot memo', () => {
  it('gives the read the answer git gives, through saves, restores, branches and refs moved by hand', async () => {
    const dir = makeRepo({ 'a.txt': '0\n' });
    const store = new WipStore({ cwd: dir, policy: null });
    const same = async (step: string, options: ListOptions = {}): Promise<void> => {
      const fresh = await withoutMemo(dir, options);
      assert.deepEqual(await store.list(options), fresh, step);
      assert.deepEqual(await store.list(options), fresh, `${step}, read again`);
    };
    await same('no snapshot yet');
    for (let i = 0; i < 3; i += 1) {
      writeFiles(dir, { 'a.txt': `main ${i}\n` });
      await store.save({ label: `main ${i}`, by: 'github:alex' });
      await same(`save ${i}`);
    }
    const second = git(dir, ['rev-parse', 'refs/chant/wip/main~1']).trim();
    await store.restore({ snapshot: second });
    await same('a restore (its pre-restore snapshot on top)');
    git(dir, ['checkout', '-q', '-b', 'side']);
    writeFiles(dir, { 'b.txt': 'side\n' });
    await store.save({ label: 'side 0' });
    await same('a second branch');
    await same('one branch read alone', { branch: 'side' });
    git(dir, ['update-ref', 'refs/chant/wip/main', second]);
    await same('a ref moved back by hand');
    writeFiles(dir, { 'a.txt': 'side 1\n' });
    await store.save({ label: 'side 1' });
    git(dir, ['update-ref', 'refs/chant/wip/main', 'HEAD']);
    await same('a tip that is no snapshot');
    git(dir, ['update-ref', '-d', 'refs/chant/wip/side']);
    await same('a branch deleted');
    git(dir, ['update-ref', 'refs/chant/wip/main', second]);
    await same('a ref moved back onto a chain the memo forgot');
  });

  it('is appended to by each read that learns, and written anew, with only what the tips reach, once it holds more than twice that', async () => {
    const dir = makeRepo({ 'a.txt': '0\n' });
    const store = new WipStore({ cwd: dir, policy: null });
    for (let i = 0; i < 2; i += 1) {
      writeFiles(dir, { 'a.txt': `main ${i}\n` });
      await store.save({ label: `main ${i}` });
    }
    git(dir, ['checkout', '-q', '-b', 'side']);
    for (let i = 0; i < 30; i += 1) {
      writeFiles(dir, { 'a.txt': `side ${i}\n` });
      await store.save({ label: `side ${i}` });
    }
    await store.list();
    const file = join(dir, '.git', SNAPSHOT_MEMO_FILE);
    assert.equal(readFileSync(file, 'utf8').split('\n').length, 2, 'a header and the first read\'s line');
    writeFiles(dir, { 'a.txt': 'side 30\n' });
    await store.save({ label: 'side 30' });
    await store.list();
    assert.equal(readFileSync(file, 'utf8').split('\n').length, 3, 'the next read appended a line');
    assert.equal(memoEntries(dir).length, 33);
    git(dir, ['checkout', '-q', 'main']);
    git(dir, ['update-ref', '-d', 'refs/chant/wip/side']);
    writeFiles(dir, { 'a.txt': 'main 2\n' });
    await store.save({ label: 'main 2' });
    const listed = await store.list();
    const walked = listed.branches.flatMap((entry) => entry.snapshots.map((snapshot) => snapshot.commit));
    assert.equal(walked.length, 3);
    assert.deepEqual(memoEntries(dir).map((entry) => entry.commit).sort(), walked.sort(), 'the deleted branch is forgotten');
    assert.equal(readFileSync(file, 'utf8').split('\n').length, 2);
  });

  it('spares the read its git log once the memo knows the chain, and asks git only for what is new', async () => {
    const dir = makeRepo({ 'a.txt': '0\n' });
    const { store, calls } = countingStore(dir);
    for (let i = 0; i < 3; i += 1) {
      writeFiles(dir, { 'a.txt': `${i}\n` });
      await store.save({ label: `${i}` });
    }
    // Packed: the refs and commits are git's to read (a read reads loose ones from their files).
    packChains(dir);
    calls.length = 0;
    await store.list();
    assert.ok(calls.includes('log'), 'the first read walks the chain with git log');
    calls.length = 0;
    const warm = await store.list();
    assert.deepEqual(calls, ['for-each-ref'], 'a read the memo answers asks git for the tips only (the checkout is read from its files)');
    assert.deepEqual(warm.branches[0]?.snapshots.map((snapshot) => snapshot.label), ['2', '1', '0']);
    writeFiles(dir, { 'a.txt': '3\n' });
    await store.save({ label: '3' });
    calls.length = 0;
    const after = await store.list();
    // The new tip, its ref and commit loose as the save wrote them, is read from its files, and
    // the walk stops at its parent, which the memo knows: no process.
    assert.deepEqual(calls, []);
    assert.deepEqual(after.branches[0]?.snapshots.map((snapshot) => snapshot.label), ['3', '2', '1', '0']);
    assert.deepEqual(memoEntries(dir).map((entry) => entry.label).sort(), ['0', '1', '2', '3'], 'the memo holds the new tip too');
  });

  it('asks git log only for the commits the memo does not know', async () => {
    const dir = makeRepo({ 'a.txt': '0\n' });
    const { store, calls } = countingStore(dir);
    writeFiles(dir, { 'a.txt': '1\n' });
    await store.save({ label: '1' });
    await store.list();
    const log: string[][] = [];
    const runner = new SimpleGitRunner(dir);
    const watching = new WipStore({ cwd: dir, policy: null, git: { run: (args, options) => (args[0] === 'log' && log.push([...args]), runner.run(args, options)) } });
    for (const label of ['2', '3', '4']) {
      writeFiles(dir, { 'a.txt': `${label}\n` });
      await store.save({ label });
    }
    // Packed, so that git log reads them (loose, a read takes them from their files).
    packChains(dir);
    calls.length = 0;
    const read = await watching.list();
    assert.deepEqual(read.branches[0]?.snapshots.map((snapshot) => snapshot.label), ['4', '3', '2', '1']);
    assert.equal(log.length, 1);
    assert.ok(log[0]?.includes(git(dir, ['rev-parse', 'refs/chant/wip/main']).trim()), 'git log starts at the tip');
    calls.length = 0;
    await watching.list();
    assert.equal(log.length, 1, 'and the read after it needs none');
  });

  it('gives a page from the end of the memo what the read without it gives, and reads back only as far as the page needs', async () => {
    const dir = makeRepo({ 'a.txt': '0\n' });
    importChain(dir, 'main', 1500);
    importChain(dir, 'side', 40);
    const { store, calls } = countingStore(dir);
    await store.list();
    const file = join(dir, '.git', SNAPSHOT_MEMO_FILE);
    assert.ok(readFileSync(file).length > 128 * 1024, 'a memo longer than the first read from its end');
    writeFiles(dir, { 'a.txt': 'new\n' });
    await store.save({ label: 'new' });
    const main = git(dir, ['rev-parse', 'refs/chant/wip/main']).trim();
    const deep = git(dir, ['rev-parse', 'refs/chant/wip/main~1200']).trim();
    const pages: ListOptions[] = [
      { limit: 1 }, { limit: 50 }, { limit: 50, branch: 'side' }, { limit: 1499 }, { limit: 1501 }, { limit: 5000 },
      { limit: 20, before: deep }, { limit: 500, before: deep }, { limit: 3, before: main }, { before: deep },
    ];
    calls.length = 0;
    const first = await store.list({ limit: 50 });
    assert.deepEqual(calls, [], 'the new tip is read from its loose file alone, with no process');
    assert.equal(first.branches[0]?.older, 1451);
    for (const options of pages) assert.deepEqual(await store.list(options), await withoutMemo(dir, options), JSON.stringify(options));
    // A cursor no chain holds is refused, with the memo and without.
    await assert.rejects(store.list({ limit: 3, before: 'f'.repeat(40) }), (error) => isWipError(error, 'write-usage-invalid'));
    await assert.rejects(withoutMemo(dir, { limit: 3, before: 'f'.repeat(40) }), (error) => isWipError(error, 'write-usage-invalid'));
    // A line at the start of the memo that no read could have written: a page is given from the
    // end without reading it; the whole read finds it and writes the memo anew.
    const lines = readFileSync(file, 'utf8').split('\n');
    const [strings, entries] = JSON.parse(lines[1] as string) as [unknown[], unknown[][]];
    (entries[0] as unknown[])[5] = 'merge';
    writeFileSync(file, [lines[0], JSON.stringify([strings, entries]), ...lines.slice(2)].join('\n'));
    calls.length = 0;
    assert.deepEqual(await store.list({ limit: 50 }), first);
    assert.deepEqual(calls, [], 'the page is read from the end alone (no git log; the tips from their files)');
    calls.length = 0;
    assert.deepEqual(await store.list(), await withoutMemo(dir));
    assert.ok(calls.includes('log'), 'the whole read found the line and read the chains from git');
    assert.doesNotMatch(readFileSync(file, 'utf8'), /"merge"/, 'and wrote the memo anew');
  });

  it('gives a page the right answer from a memo whose end is garbage, cut short, or holds depths that disagree', async () => {
    const dir = makeRepo({ 'a.txt': '0\n' });
    importChain(dir, 'main', 1200);
    const store = new WipStore({ cwd: dir, policy: null });
    await store.list();
    const file = join(dir, '.git', SNAPSHOT_MEMO_FILE);
    const good = readFileSync(file, 'utf8');
    const lines = good.split('\n');
    const last = lines.length - 1;
    const changed = (change: (entries: unknown[][], strings: unknown[]) => void): string => {
      const [strings, entries] = JSON.parse(lines[last] as string) as [unknown[], unknown[][]];
      change(entries, strings);
      return [...lines.slice(0, last), JSON.stringify([strings, entries])].join('\n');
    };
    const newest = (entries: unknown[][]): unknown[] => entries[entries.length - 1] as unknown[];
    const bad: Record<string, string> = {
      'a last line that is JSON but no list': `${good}\n{"links":[]}`,
      'an unknown kind in the last line': changed((entries) => (newest(entries)[5] = 'merge')),
      'a depth that is no count': changed((entries) => (newest(entries)[newest(entries).length - 1] = 'deep')),
      'a depth one too many': changed((entries) => (newest(entries)[newest(entries).length - 1] = 1201)),
      'a depth that says the chain ends': changed((entries) => (newest(entries)[newest(entries).length - 1] = 1)),
      'a next that skips a snapshot': changed((entries) => (newest(entries)[1] = entries.length - 3)),
      'cut in the middle of a line': good.slice(0, Math.floor(good.length * 0.6)),
      'cut just past the header': good.slice(0, good.indexOf('\n') + 10),
      'the header alone': good.slice(0, good.indexOf('\n')),
      'another chant version': good.replace(/"chant":"[^"]*"/, '"chant":"0.0.0-other"'),
    };
    for (const options of [{ limit: 30 }, { limit: 1200 }, { limit: 10, before: git(dir, ['rev-parse', 'refs/chant/wip/main~5']).trim() }]) {
      const expected = await withoutMemo(dir, options);
      for (const [name, text] of Object.entries(bad)) {
        writeFileSync(file, text);
        assert.deepEqual(await store.list(options), expected, `${name}, ${JSON.stringify(options)}`);
        assert.deepEqual(await store.list(options), expected, `${name}, ${JSON.stringify(options)}, read again`);
      }
    }
    writeFileSync(file, good);
    assert.deepEqual(await store.list(), await withoutMemo(dir));
  });

  it('is not trusted unless whole, and a memo that cannot be written costs only time', async () => {
    const dir = makeRepo({ 'a.txt': '0\n' });
    const store = new WipStore({ cwd: dir, policy: null });
    for (let i = 0; i < 3; i += 1) {
      writeFiles(dir, { 'a.txt': `${i}\n` });
      await store.save({ label: `${i}` });
    }
    const expected = await withoutMemo(dir);
    const file = join(dir, '.git', SNAPSHOT_MEMO_FILE);
    await store.list();
    const good = readFileSync(file, 'utf8');
    const [header, batch, ...more] = good.split('\n') as [string, string];
    assert.equal(more.length, 0);
    const forged = (change: (memo: { chant: string; revision: number; objectFormat: string }, links: unknown[][], strings: unknown[]) => void): string => {
      const [memo, [strings, links]] = [JSON.parse(header), JSON.parse(batch)];
      change(memo, links, strings);
      return `${JSON.stringify(memo)}\n${JSON.stringify([strings, links])}`;
    };
    const bad: Record<string, string> = {
      'garbage': 'not json at all',
      'another chant version': forged((memo) => (memo.chant = '0.0.0-other')),
      'an earlier revision': forged((memo) => (memo.revision = 1)),
      'another object format': forged((memo) => (memo.objectFormat = 'sha256')),
      'a line that is JSON but no list': forged(() => undefined).replace(batch, '{"links":[]}'),
      'a label that is not text': forged((_, links, strings) => ((links[1] as unknown[])[6] = strings.push(7) - 1)),
      'a string named past the list': forged((_, links, strings) => ((links[1] as unknown[])[2] = strings.length)),
      'a tree that is no id': forged((_, links, strings) => ((links[1] as unknown[])[2] = strings.push('../HEAD') - 1)),
      'a next past the line': forged((_, links) => ((links[0] as unknown[])[1] = links.length)),
      'an unknown kind': forged((_, links) => ((links[1] as unknown[])[5] = 'merge')),
      'an entry of the wrong length': forged((_, links) => (links[2] as unknown[]).push('extra')),
      'a next that is no id': forged((_, links) => ((links[0] as unknown[])[1] = '../../HEAD')),
    };
    for (const [name, text] of Object.entries(bad)) {
      writeFileSync(file, text);
      assert.deepEqual(await store.list(), expected, name);
      assert.equal(readFileSync(file, 'utf8'), good, `${name}: the read wrote the memo anew`);
    }
    // A read killed while appending leaves an unfinished line: only that line is left out.
    const { store: counted, calls } = countingStore(dir);
    // Packed, so that a read the memo did not answer would ask git log.
    packChains(dir);
    writeFileSync(file, `${good}\n[["${'a'.repeat(40)}",nu`);
    assert.deepEqual(await counted.list(), expected, 'an unfinished last line');
    assert.deepEqual(calls, ['for-each-ref'], 'the lines before it are used');
    writeFiles(dir, { 'a.txt': 'after\n' });
    await store.save({ label: 'after' });
    const after = await withoutMemo(dir);
    assert.deepEqual(await store.list(), after);
    packChains(dir);
    calls.length = 0;
    assert.deepEqual(await counted.list(), after, 'the line appended after the unfinished one');
    assert.deepEqual(calls, ['for-each-ref']);
    writeFileSync(file, `${header}\n${batch.slice(0, batch.length / 2)}`);
    assert.deepEqual(await store.list(), after, 'a memo whose only line is cut short');
    assert.deepEqual(memoEntries(dir).map((entry) => entry.commit).sort(), after.branches.flatMap((entry) => entry.snapshots.map((snapshot) => snapshot.commit)).sort());
    rmSync(file);
    mkdirSync(file);
    assert.deepEqual(await store.list(), after, 'a memo path that cannot be written');
    assert.deepEqual(await store.list(), after, 'and again');
  });

  it('reads every message in UTF-8, whatever the commit declares or the user set for git log', async () => {
    const dir = makeRepo({ 'a.txt': '0\n' });
    git(dir, ['config', 'i18n.logOutputEncoding', 'ISO-8859-1']);
    git(dir, ['config', 'i18n.commitEncoding', 'ISO-8859-1']);
    const store = new WipStore({ cwd: dir, policy: null });
    writeFiles(dir, { 'a.txt': '1\n' });
    await store.save({ label: 'café' });
    assert.doesNotMatch(git(dir, ['cat-file', 'commit', 'refs/chant/wip/main']), /^encoding /m, 'chant writes UTF-8 and declares nothing else');
    // A snapshot another tool wrote in Latin-1, saying so.
    const head = git(dir, ['rev-parse', 'HEAD']).trim();
    const tip = git(dir, ['rev-parse', 'refs/chant/wip/main']).trim();
    const body = Buffer.concat([
      Buffer.from(`tree ${git(dir, ['rev-parse', `${tip}^{tree}`]).trim()}\nparent ${tip}\nparent ${head}\nauthor A <a@example.com> 1800000000 +0000\ncommitter A <a@example.com> 1800000000 +0000\nencoding ISO-8859-1\n\nchant wip: main\n\nChant-Wip-Branch: main\nChant-Wip-Head: ${head}\nChant-Wip-Kind: save\nChant-Wip-Label: na`),
      Buffer.from([0xef]),
      Buffer.from('ve\n'),
    ]);
    const latin = git(dir, ['hash-object', '-t', 'commit', '-w', '--stdin'], { input: body as unknown as string }).trim();
    git(dir, ['update-ref', 'refs/chant/wip/main', latin]);
    const labels = async (): Promise<Array<string | null>> => ((await store.list()).branches[0]?.snapshots ?? []).map((snapshot) => snapshot.label);
    assert.deepEqual(await labels(), ['naïve', 'café'], 'the tip');
    writeFiles(dir, { 'a.txt': '2\n' });
    await store.save({ label: 'après' });
    assert.deepEqual(await labels(), ['après', 'naïve', 'café'], 'with the memo');
    assert.deepEqual((await withoutMemo(dir)).branches[0]?.snapshots.map((snapshot) => snapshot.label), ['après', 'naïve', 'café'], 'without it');
  });

  it('is left alone while git reads parents other than the commits hold: shallow, grafts, replace refs', async () => {
    const up = makeRepo({ 'a.txt': '0\n' });
    const store = new WipStore({ cwd: up, policy: null });
    for (let i = 0; i < 3; i += 1) {
      writeFiles(up, { 'a.txt': `${i}\n` });
      await store.save({ label: `l${i}` });
    }
    const down = tempDir();
    git(down, ['clone', '-q', '--depth', '1', `file://${up}`, '.']);
    git(down, ['fetch', '-q', '--depth', '1', 'origin', 'refs/chant/wip/main:refs/chant/wip/main']);
    const labels = async (dir: string): Promise<Array<string | null>> => ((await new WipStore({ cwd: dir, policy: null }).list()).branches[0]?.snapshots ?? []).map((snapshot) => snapshot.label);
    assert.deepEqual(await labels(down), ['l2'], 'shallow: the chain ends where the history does');
    assert.equal(existsSync(join(down, '.git', SNAPSHOT_MEMO_FILE)), false, 'and nothing is remembered');
    git(down, ['fetch', '-q', '--unshallow', 'origin', 'refs/chant/wip/main:refs/chant/wip/main']);
    assert.deepEqual(await labels(down), ['l2', 'l1', 'l0'], 'unshallowed: the whole chain');

    assert.deepEqual(await labels(up), ['l2', 'l1', 'l0']);
    const middle = git(up, ['rev-parse', 'refs/chant/wip/main~1']).trim();
    git(up, ['replace', '--graft', middle]);
    assert.deepEqual(await labels(up), ['l2', 'l1'], 'a replace ref: git reads l1 with no parent');
    git(up, ['replace', '-d', middle]);
    assert.deepEqual(await labels(up), ['l2', 'l1', 'l0'], 'and again without it');
    mkdirSync(join(up, '.git', 'info'), { recursive: true });
    writeFileSync(join(up, '.git', 'info', 'grafts'), `${middle}\n`);
    assert.deepEqual(await labels(up), ['l2', 'l1'], 'grafts');
    rmSync(join(up, '.git', 'info', 'grafts'));
    assert.deepEqual(await labels(up), ['l2', 'l1', 'l0']);
    // A replace ref whose object is gone has nothing to do with the chains: the read still answers.
    writeFileSync(join(up, '.git', 'packed-refs'), `${'d'.repeat(40)} refs/replace/${'1'.repeat(40)}\n`, { flag: 'a' });
    assert.deepEqual(await labels(up), ['l2', 'l1', 'l0'], 'a broken replace ref');
  });

  it('keeps the change counts in its entries, and gives the counts git gives from a memo of an earlier revision, a change memo an earlier version left, garbage counts, or a chain rewritten by prune', async () => {
    const dir = makeRepo({ 'a.txt': '0\n' });
    const { store, calls } = countingStore(dir);
    for (let i = 1; i <= 6; i += 1) {
      writeFiles(dir, { 'a.txt': 'line\n'.repeat(i), [`f${i}.txt`]: `${i}\n`.repeat(i) });
      await store.save({ label: `turn:${i}` });
    }
    const file = join(dir, '.git', SNAPSHOT_MEMO_FILE);
    await store.list();
    calls.length = 0;
    const counted = await store.list({ changes: true });
    countsAreGits(dir, counted, 'counted over a memo without counts');
    assert.deepEqual(calls.filter((call) => call !== 'rev-parse' && call !== 'for-each-ref'), ['diff-tree'], 'one git process counts them, and no git log');
    calls.length = 0;
    assert.deepEqual(await store.list({ changes: true }), counted, 'read again');
    assert.deepEqual(await store.list({ changes: true, limit: 2 }), { ...counted, branches: counted.branches.map((branch) => ({ ...branch, snapshots: branch.snapshots.slice(0, 2), older: 4 })) }, 'a page');
    assert.deepEqual(calls, [], 'the counts come from the memo (the tips from their files)');
    const plain = await store.list();
    assert.equal(plain.branches[0]?.snapshots[0]?.changes, undefined, 'a read without changes carries none, memo or not');
    assert.deepEqual(plain, await withoutMemo(dir));

    // The counted links came again in a line of their own; a memo written anew holds them once.
    assert.equal(readFileSync(file, 'utf8').split('\n').length, 3);
    writeFileSync(file, 'garbage');
    countsAreGits(dir, await store.list({ changes: true }), 'counted over a garbage memo');
    const good = readFileSync(file, 'utf8');
    const [header, ...lines] = good.split('\n') as [string, ...string[]];
    assert.equal(lines.length, 1);
    const longest = Math.max(...lines.flatMap((line) => (JSON.parse(line) as [unknown[], unknown[][]])[1].map((entry) => entry.length)));
    const forged = (change: (entry: unknown[], strings: unknown[]) => void, memoHeader = header): string => [memoHeader, ...lines.map((line) => {
      const [strings, entries] = JSON.parse(line) as [unknown[], unknown[][]];
      for (const entry of entries) if (entry.length === longest) change(entry, strings);
      return JSON.stringify([strings, entries]);
    })].join('\n');
    const bad: Record<string, string> = {
      'a memo of revision 5, no counts in it': forged((entry) => entry.splice(longest - 4), header.replace(/"revision":\d+/, '"revision":5')),
      'counts that are negative': forged((entry) => (entry[longest - 3] = -1)),
      'counts that are fractions': forged((entry) => (entry[longest - 2] = 1.5)),
      'counts that are text': forged((entry) => (entry[longest - 1] = '3')),
      'an against that is no id': forged((entry) => (entry[longest - 4] = '../HEAD')),
      'an against past the line': forged((entry) => (entry[longest - 4] = 999)),
      'counts one value short': forged((entry) => entry.pop()),
      'counts one value too many': forged((entry) => entry.push(0)),
    };
    for (const [name, text] of Object.entries(bad)) {
      writeFileSync(file, text);
      countsAreGits(dir, await store.list({ changes: true }), name);
      assert.equal(readFileSync(file, 'utf8'), good, `${name}: the read wrote the memo anew, counts and all`);
    }
    // Counts that hold for another commit than the one the read pairs are not used: counted again.
    const elsewhere = forged((entry) => (entry[longest - 4] = git(dir, ['rev-parse', 'HEAD']).trim()));
    for (const options of [{}, { limit: 3 }]) {
      writeFileSync(file, elsewhere);
      calls.length = 0;
      countsAreGits(dir, await store.list({ changes: true, ...options }), `counts against another commit, ${JSON.stringify(options)}`);
      assert.equal(calls.filter((call) => call === 'diff-tree').length, 1);
    }
    // The change memo an earlier version kept beside it is not read, whatever it says.
    writeFileSync(join(dir, '.git', 'chant-change-memo'), `${JSON.stringify({ format: 'chant-change-memo', revision: 1 })}\n${JSON.stringify(counted.branches[0]?.snapshots.map((snapshot) => [snapshot.commit, snapshot.head, 99, 99, 99]))}`);
    countsAreGits(dir, await store.list({ changes: true }), 'beside a change memo an earlier version left');

    await store.prune({ keepLast: 3 });
    const pruned = await store.list({ changes: true });
    assert.equal(pruned.branches[0]?.snapshots.length, 3);
    countsAreGits(dir, pruned, 'a chain rewritten by prune');
    assert.deepEqual(await store.list({ changes: true, limit: 2 }), { ...pruned, branches: pruned.branches.map((branch) => ({ ...branch, snapshots: branch.snapshots.slice(0, 2), older: 1 })) }, 'a page of it');
    writeFiles(dir, { 'a.txt': 'after the prune\n' });
    await store.save({ label: 'after' });
    countsAreGits(dir, await store.list({ changes: true, limit: 2 }), 'a page after a save');
    countsAreGits(dir, await store.list({ changes: true }), 'the whole chain after a save');
  });

  it("is cleaned of a killed read's unfinished copy by the next save", async () => {
    const dir = makeRepo({ 'a.txt': '0\n' });
    const store = new WipStore({ cwd: dir, policy: null });
    const left = join(dir, '.git', `${SNAPSHOT_MEMO_FILE}.999999999-0a1b2c3d.tmp`);
    const mine = join(dir, '.git', `${SNAPSHOT_MEMO_FILE}.${process.pid}-0a1b2c3d.tmp`);
    writeFileSync(left, '{');
    writeFileSync(mine, '{');
    writeFiles(dir, { 'a.txt': '1\n' });
    await store.save();
    assert.equal(existsSync(left), false, 'the copy of a process that is gone is removed');
    assert.equal(existsSync(mine), true, "a live process's copy is left alone");
  });
});

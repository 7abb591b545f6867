// The secret gate before a push, against a real bare remote: a likely secret in an untracked
// file, in a modified tracked file, in a binary; a finding allowed once; save --scan.
import assert from 'node:assert/strict';
import { closeSync, cpSync, ftruncateSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { gzipSync } from 'node:zlib';
import { describe, it } from 'node:test';
import { Policy, Replicator, WipStore, type SecretFinding } from '../lib/index.js';
import { assertValidDocument, git, makeRepo, NO_OPENSSL, p12Key, ROOT, runBin, runCli } from './helpers.js';
import { SimpleGitRunner } from '../lib/git/runner.js';
import type { GitRunner } from '../lib/git/runner.js';
import { writeDocument } from '../lib/documents/document.js';
import { bareRemote, missingLfs } from './remotes.js';

// Shaped like real credentials so the rules match; none of them was ever issued.
const GITHUB_TOKEN = ['ghp_', 'wWPw5k4aXcaT4fNP0UcnZwJUVFk6LO0pINUx'].join('');
const AWS_SECRET = ['wJalrXUtnFEMI/K7MDENG', '/bPxRfiCYEXAMPLEKEZ'].join('');

function box(): { dir: string; remote: string; policy: Policy; store: WipStore; replicator: Replicator } {
  const remote = bareRemote();
  const dir = makeRepo({ 'README.md': 'hello\n', 'config.js': 'export const region = "eu-west-1";\n' });
  git(dir, ['remote', 'add', 'origin', remote]);
  const policy = Policy.from({ remote: 'origin', refs: ['wip'], on: [] }, { box: 'app' });
  return { dir, remote, policy, store: new WipStore({ cwd: dir, policy }), replicator: new Replicator({ cwd: dir, policy }) };
}

function remoteTip(remote: string): string | null {
  const out = git(remote, ['for-each-ref', '--format=%(objectname)', 'refs/chant/wip/main']).trim();
  return out.length > 0 ? out : null;
}

/**
 * Saves what `write` puts in a new box and pushes: the snapshot is held back for one GitHub token
 * in `name`, with no line (a binary's, or what a packed file holds), and nothing of the ref went.
 */
async function assertHeldWithNoLine(name: string, write: (dir: string) => void): Promise<void> {
  const { dir, remote, store, replicator } = box();
  write(dir);
  await store.save({});
  const { replication } = await replicator.push();
  const findings = replication.heldBack?.[0]?.findings ?? [];
  assert.deepEqual(findings.map(({ path, line, rule }) => ({ path, line, rule })), [
    { path: name, line: null, rule: '@secretlint/secretlint-rule-github:GITHUB_TOKEN' },
  ], name);
  assert.equal(remoteTip(remote), null, `${name}: nothing of the ref went`);
}

describe('the secret gate', () => {
  it('keeps a snapshot holding an untracked .env with a token local, and says where without the token', async () => {
    const { dir, remote, store, replicator } = box();
    writeFileSync(join(dir, '.env'), `DEBUG=1\nGITHUB_TOKEN=${GITHUB_TOKEN}\n`);
    const { snapshot } = await store.save({});
    const run = await runCli(dir, ['workspace', 'wip', 'push', '--json'], { ...process.env });
    // The CLI reads the declaration; this box states its policy in the SDK, so push through it.
    assert.equal(run.doc.error?.code, 'wip-policy-none');
    const { replication } = await replicator.push();
    assert.deepEqual(replication.pushed, []);
    assert.equal(remoteTip(remote), null);
    assert.equal(replication.heldBack?.length, 1);
    const [held] = replication.heldBack ?? [];
    assert.equal(held?.ref, 'refs/chant/wip/main');
    assert.equal(held?.commit, snapshot.commit);
    assert.equal(held?.pushed, null);
    assert.deepEqual(held?.findings.map(({ path, line, rule, snapshot: s }) => ({ path, line, rule, s })), [
      { path: '.env', line: 2, rule: '@secretlint/secretlint-rule-github:GITHUB_TOKEN', s: snapshot.commit },
    ]);
    assert.ok(!JSON.stringify(replication).includes(GITHUB_TOKEN));
    assert.equal((await replicator.state())?.replicated, false);
  });

  it('pushes the snapshots below the first holding a secret in a modified tracked file, and holds that one and those above', async () => {
    const { dir, remote, store, replicator } = box();
    writeFileSync(join(dir, 'notes.txt'), 'first\n');
    const first = (await store.save({ label: 'one' })).snapshot.commit;
    writeFileSync(join(dir, 'notes.txt'), 'second\n');
    const second = (await store.save({ label: 'two' })).snapshot.commit;
    writeFileSync(join(dir, 'config.js'), `export const region = "eu-west-1";\nexport const aws_secret_access_key = "${AWS_SECRET}";\n`);
    const third = (await store.save({ label: 'three' })).snapshot.commit;
    writeFileSync(join(dir, 'notes.txt'), 'fourth\n');
    const fourth = (await store.save({ label: 'four' })).snapshot.commit;
    const { replication } = await replicator.push();
    assert.deepEqual(replication.pushed, [{ ref: 'refs/chant/wip/main', commit: second }]);
    assert.equal(remoteTip(remote), second);
    const [held] = replication.heldBack ?? [];
    assert.equal(held?.commit, fourth);
    assert.equal(held?.pushed, second);
    assert.deepEqual(held?.findings.map(({ path, line, snapshot }) => ({ path, line, snapshot })), [{ path: 'config.js', line: 2, snapshot: third }]);
    assert.match(held?.findings[0]?.rule ?? '', /aws/);
    assert.notEqual(first, second);
    // The next push scans only what the remote lacks, and holds the same finding back.
    const again = await replicator.push();
    assert.deepEqual(again.replication.pushed, []);
    assert.equal(again.replication.heldBack?.[0]?.findings[0]?.id, held?.findings[0]?.id);
  });

  it('finds a key inside a binary file, with no line', async () => {
    const { dir, store, replicator } = box();
    writeFileSync(join(dir, 'blob.bin'), Buffer.concat([Buffer.from([0, 1, 2, 0, 255]), Buffer.from(`\ntoken=${GITHUB_TOKEN}\n`), Buffer.alloc(64)]));
    await store.save({});
    const { replication } = await replicator.push();
    const findings = replication.heldBack?.[0]?.findings ?? [];
    assert.deepEqual(findings.map(({ path, line }) => ({ path, line })), [{ path: 'blob.bin', line: null }]);
  });

  it('reads a file in UTF-16 as the text it is, with or without a byte order mark, in either byte order', async () => {
    const text = `# local settings\nGITHUB_TOKEN=${GITHUB_TOKEN}\n`;
    const encodings: Array<[string, Buffer]> = [
      ['powershell.env', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')])],
      ['big-endian.env', Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(text, 'utf16le').swap16()])],
      ['no-mark.env', Buffer.from(text, 'utf16le')],
    ];
    for (const [name, bytes] of encodings) {
      const { dir, remote, store, replicator } = box();
      writeFileSync(join(dir, name), bytes);
      await store.save({});
      const { replication } = await replicator.push();
      const findings = replication.heldBack?.[0]?.findings ?? [];
      assert.deepEqual(findings.map(({ path, line }) => ({ path, line })), [{ path: name, line: 2 }], name);
      assert.equal(remoteTip(remote), null, `${name}: nothing of the ref went`);
    }
  });

  it('finds a token in UTF-16 without a byte order mark that holds a character past Latin-1, and in a wide string inside a binary, once, with no line', async () => {
    // A dash and curly quotes put bytes other than zero in the high halves: the file reads as binary.
    const text = `# settings \u2014 \u201clocal\u201d\nGITHUB_TOKEN=${GITHUB_TOKEN}\n`;
    const files: Array<[string, Buffer]> = [
      ['no-mark.env', Buffer.from(text, 'utf16le')],
      ['no-mark-big-endian.env', Buffer.from(text, 'utf16le').swap16()],
      ['tool.dll', Buffer.concat([Buffer.from([0x4d, 0x5a, 0x90, 0, 3, 0, 0, 0, 4, 0, 0, 0, 0xff, 0xff]), Buffer.alloc(100), Buffer.from(`GITHUB_TOKEN=${GITHUB_TOKEN}`, 'utf16le'), Buffer.alloc(50)])],
    ];
    for (const [name, bytes] of files) await assertHeldWithNoLine(name, (dir) => writeFileSync(join(dir, name), bytes));
  });

  it('finds a token in what a gzip file holds, a .env.gz or a .tar.gz of a folder, once, with no line', async () => {
    // A tar's header holds the file's name, then zeros; the file follows, padded with zeros.
    const tar = Buffer.concat([Buffer.from('conf/.env'), Buffer.alloc(503), Buffer.from(`DEBUG=1\nGITHUB_TOKEN=${GITHUB_TOKEN}\n`), Buffer.alloc(1024)]);
    const files: Array<[string, Buffer]> = [
      ['.env.gz', gzipSync(`DEBUG=1\nGITHUB_TOKEN=${GITHUB_TOKEN}\n`)],
      ['conf.tar.gz', gzipSync(tar)],
    ];
    for (const [name, bytes] of files) await assertHeldWithNoLine(name, (dir) => writeFileSync(join(dir, name), bytes));
  });

  it('finds a token in what a zip file holds, its files deflated, once, with no line', async () => {
    // git archive writes a zip as any zip tool does: each file deflated, then the central directory.
    const lines = Array.from({ length: 40 }, (_, index) => `OPTION_${index}=on`).join('\n');
    const folder = makeRepo({ 'conf/app.txt': `${lines}\n`, 'conf/.env': `DEBUG=1\n${lines}\nGITHUB_TOKEN=${GITHUB_TOKEN}\n` });
    await assertHeldWithNoLine('conf.zip', (dir) => git(folder, ['archive', '--format=zip', '-o', join(dir, 'conf.zip'), 'HEAD']));
  });

  /**
   * Saves and pushes a box holding a .npmrc with a token and the archives `archive` writes of a
   * folder holding the same .npmrc; returns the findings and the rule that found the .npmrc.
   */
  async function npmrcBesideArchives(archive: (folder: string, dir: string) => void): Promise<{ findings: SecretFinding[]; rule: string; remote: string }> {
    const lines = Array.from({ length: 40 }, (_, index) => `; option ${index} is left as it is`).join('\n');
    const npmrc = `${lines}\n//registry.example.com/:_authToken=7f3c9a1e2b4d6f80a1c3e5g7i9k1m3o5\n`;
    const folder = makeRepo({ 'home/.npmrc': npmrc, 'home/notes.txt': `${lines}\n` });
    const { dir, remote, store, replicator } = box();
    archive(folder, dir);
    writeFileSync(join(dir, '.npmrc'), npmrc);
    await store.save({});
    const { replication } = await replicator.push();
    const findings = replication.heldBack?.[0]?.findings ?? [];
    const rule = findings.find((finding) => finding.path === '.npmrc')?.rule;
    assert.ok(rule !== undefined, JSON.stringify(findings));
    return { findings, rule, remote };
  }

  it('finds a token in a .npmrc a zip holds, as a rule that reads only .npmrc files finds it beside the zip', async () => {
    const { findings, rule, remote } = await npmrcBesideArchives((folder, dir) => git(folder, ['archive', '--format=zip', '-o', join(dir, 'home.zip'), 'HEAD']));
    assert.deepEqual(findings.filter((finding) => finding.path === 'home.zip').map(({ line, rule: r }) => ({ line, rule: r })), [{ line: null, rule }]);
    assert.equal(remoteTip(remote), null);
  });

  it('finds a token in a .npmrc a tar holds, gzipped or not, as a rule that reads only .npmrc files finds it beside the tar', async () => {
    const { findings, rule, remote } = await npmrcBesideArchives((folder, dir) => {
      git(folder, ['archive', '--format=tar.gz', '-o', join(dir, 'home.tar.gz'), 'HEAD']);
      git(folder, ['archive', '--format=tar', '-o', join(dir, 'home.tar'), 'HEAD']);
    });
    assert.deepEqual(findings.filter((finding) => finding.path.startsWith('home.tar')).map(({ path, line, rule: r }) => ({ path, line, rule: r })), [
      { path: 'home.tar', line: null, rule },
      { path: 'home.tar.gz', line: null, rule },
    ]);
    assert.equal(remoteTip(remote), null);
  });

  it('finds a token in what a zip holds behind a launch script (an executable jar, a self-extracting archive)', async () => {
    const lines = Array.from({ length: 40 }, (_, index) => `OPTION_${index}=on`).join('\n');
    const folder = makeRepo({ 'BOOT-INF/classes/application.properties': `${lines}\ngithub.token=${GITHUB_TOKEN}\n` });
    const { dir, remote, store, replicator } = box();
    git(folder, ['archive', '--format=zip', '-o', join(folder, 'app.zip'), 'HEAD']);
    // The script goes before the zip as it is: its offsets count from the zip's start, not the file's.
    writeFileSync(join(dir, 'app.jar'), Buffer.concat([Buffer.from('#!/bin/sh\nexec java -jar "$0" "$@"\n'), readFileSync(join(folder, 'app.zip'))]));
    await store.save({});
    const { replication } = await replicator.push();
    const findings = replication.heldBack?.[0]?.findings ?? [];
    assert.deepEqual(findings.map(({ path, line, rule }) => ({ path, line, rule })), [
      { path: 'app.jar', line: null, rule: '@secretlint/secretlint-rule-github:GITHUB_TOKEN' },
    ]);
    assert.equal(remoteTip(remote), null);
  });

  it('reads a zip as a zip where its first file puts the bytes a tar has at 257 there', async () => {
    // A stored file (random bytes do not deflate) whose bytes at 257, counted from the zip's
    // start, read "ustar", as a tar header's magic does: the zip's deflated .env is still scanned.
    const noise = (length: number, seed: string): Buffer => {
      const chunks: Buffer[] = [];
      for (let index = 0; chunks.length * 32 < length; index += 1) chunks.push(createHash('sha256').update(`${seed}${index}`).digest());
      return Buffer.concat(chunks).subarray(0, length);
    };
    const lines = Array.from({ length: 40 }, (_, index) => `OPTION_${index}=on`).join('\n');
    const folder = makeRepo({ 'conf/.env': `DEBUG=1\n${lines}\nGITHUB_TOKEN=${GITHUB_TOKEN}\n` });
    // Local header (30 bytes), the name a.bin (5), git's time field (9): the file's byte 213 is the zip's 257.
    writeFileSync(join(folder, 'a.bin'), Buffer.concat([noise(213, 'a'), Buffer.from('ustar'), noise(300, 'b')]));
    git(folder, ['add', 'a.bin']);
    git(folder, ['commit', '-q', '-m', 'noise']);
    const { dir, remote, store, replicator } = box();
    git(folder, ['archive', '--format=zip', '-o', join(dir, 'conf.zip'), 'HEAD', 'a.bin', 'conf']);
    await store.save({});
    const { replication } = await replicator.push();
    const findings = replication.heldBack?.[0]?.findings ?? [];
    assert.deepEqual(findings.map(({ path, line, rule }) => ({ path, line, rule })), [
      { path: 'conf.zip', line: null, rule: '@secretlint/secretlint-rule-github:GITHUB_TOKEN' },
    ]);
    assert.equal(remoteTip(remote), null);
  });

  it('finds a token in a small file of a zip whose larger files, listed before it, unpack past what a scan reads', async () => {
    // A folder zipped with a large file first (a dump, an image, in the order the zip lists them):
    // the small files are scanned first, so the budget a bomb is bounded by is not spent before them.
    const lines = Array.from({ length: 40 }, (_, index) => `OPTION_${index}=on`).join('\n');
    const folder = makeRepo({ 'assets/disk.img': '\0'.repeat(65 * 1024 * 1024), 'conf/.env': `DEBUG=1\n${lines}\nGITHUB_TOKEN=${GITHUB_TOKEN}\n` });
    const { dir, remote, store, replicator } = box();
    git(folder, ['archive', '--format=zip', '-o', join(dir, 'site.zip'), 'HEAD']);
    await store.save({});
    const { replication } = await replicator.push();
    const findings = replication.heldBack?.[0]?.findings ?? [];
    assert.deepEqual(findings.map(({ path, line, rule }) => ({ path, line, rule })), [
      { path: 'site.zip', line: null, rule: '@secretlint/secretlint-rule-github:GITHUB_TOKEN' },
    ]);
    assert.equal(remoteTip(remote), null);
  });

  it('scans a file whole: a token past its first MiB, in text, in UTF-16 or in a binary, or across where one window of the scan ends, is held back once, at its line', async () => {
    // 30,000 lines of 40 bytes: 1.2 MB of UTF-8 before the token, 2.4 MB in UTF-16.
    const log = `${'2026-12-04 request served in 12 ms ok\n'.repeat(30_000)}GITHUB_TOKEN=${GITHUB_TOKEN}\n`;
    // The token starts 20 bytes before the first MiB ends, on line 2.
    const straddling = `${'x'.repeat(1024 * 1024 - 20 - 'GITHUB_TOKEN='.length - 1)}\nGITHUB_TOKEN=${GITHUB_TOKEN}\n${'y'.repeat(4096)}\n`;
    const files: Array<[string, Buffer, number | null]> = [
      ['server.log', Buffer.from(log), 30_001],
      ['wide.log', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(log, 'utf16le')]), 30_001],
      ['dump.bin', Buffer.concat([Buffer.from([0, 1, 2, 0]), Buffer.alloc(1536 * 1024, 7), Buffer.from(`\ntoken=${GITHUB_TOKEN}\n`)]), null],
      ['edge.txt', Buffer.from(straddling), 2],
    ];
    for (const [name, bytes, line] of files) {
      const { dir, remote, store, replicator } = box();
      writeFileSync(join(dir, name), bytes);
      await store.save({});
      const { replication } = await replicator.push();
      const findings = replication.heldBack?.[0]?.findings ?? [];
      assert.deepEqual(findings.map((finding) => ({ path: finding.path, line: finding.line, rule: finding.rule })), [
        { path: name, line, rule: '@secretlint/secretlint-rule-github:GITHUB_TOKEN' },
      ], name);
      assert.equal(remoteTip(remote), null, `${name}: nothing of the ref went`);
    }
  });

  it('scans again what a remote pointed at a new server never took: a snapshot the old server holds unscanned is held back from the new one, on every push', async () => {
    const { dir, remote, policy, store } = box();
    writeFileSync(join(dir, '.env'), `GITHUB_TOKEN=${GITHUB_TOKEN}\n`);
    const secret = (await store.save({})).snapshot.commit;
    // A host that scanned what left the box itself pushed it to the old server.
    assert.equal((await new Replicator({ cwd: dir, policy, secretScan: false }).push()).replication.pushed.length, 1);
    assert.equal(remoteTip(remote), secret);
    const fresh = bareRemote();
    git(dir, ['remote', 'set-url', 'origin', fresh]);
    const replicator = new Replicator({ cwd: dir, policy });
    const first = await replicator.push();
    assert.equal(first.replication.heldBack?.[0]?.findings[0]?.snapshot, secret, JSON.stringify(first.replication));
    assert.equal(remoteTip(fresh), null);
    // A clean chain of another branch goes, and the push confirms the new server: the old
    // server's record of main must not pass for what the new one holds.
    rmSync(join(dir, '.env'));
    git(dir, ['checkout', '-q', '-b', 'other']);
    await store.save({});
    const second = await replicator.push();
    assert.deepEqual(second.replication.pushed.map((entry) => entry.ref), ['refs/chant/wip/other']);
    assert.equal(second.replication.heldBack?.[0]?.ref, 'refs/chant/wip/main');
    const third = await replicator.push();
    assert.equal(third.replication.heldBack?.[0]?.ref, 'refs/chant/wip/main', JSON.stringify(third.replication));
    assert.equal(remoteTip(fresh), null, 'the token never reached the new server');
  });

  it('scans the snapshots a local branch or tag reaches too: a branch made to look at one hides nothing below it', async () => {
    for (const [kind, make] of [['branch', ['branch', 'look-at-it']], ['tag', ['tag', 'looked-at']]] as const) {
      const { dir, remote, store, replicator } = box();
      writeFileSync(join(dir, '.env'), `GITHUB_TOKEN=${GITHUB_TOKEN}\n`);
      const secret = (await store.save({ label: 'secret' })).snapshot.commit;
      git(dir, [...make, 'refs/chant/wip/main']);
      writeFileSync(join(dir, 'n.txt'), 'later\n');
      await store.save({ label: 'later' });
      const { replication } = await replicator.push();
      assert.deepEqual(replication.heldBack?.[0]?.findings.map(({ path, snapshot }) => ({ path, snapshot })), [{ path: '.env', snapshot: secret }], kind);
      assert.equal(remoteTip(remote), null, `${kind}: nothing of the ref went`);
    }
  });

  it('scans the whole snapshot from a subfolder where diff.relative is set: a token at the top is held back', async () => {
    // git log in a subfolder with diff.relative lists only what changed there: a .env at the top
    // of the checkout went to the remote unscanned.
    const { dir, remote, policy } = box();
    mkdirSync(join(dir, 'sub'));
    writeFileSync(join(dir, 'sub', 'a.txt'), 'a\n');
    git(dir, ['config', 'diff.relative', 'true']);
    const sub = join(dir, 'sub');
    const store = new WipStore({ cwd: sub, policy });
    const replicator = new Replicator({ cwd: sub, policy });
    const first = (await store.save({ label: 'clean' })).snapshot.commit;
    assert.equal((await replicator.push()).replication.pushed.length, 1);
    writeFileSync(join(dir, '.env'), `GITHUB_TOKEN=${GITHUB_TOKEN}\n`);
    writeFileSync(join(dir, 'sub', 'a.txt'), 'b\n');
    const secret = (await store.save({ label: 'secret' })).snapshot.commit;
    const { replication } = await replicator.push();
    assert.deepEqual(replication.heldBack?.[0]?.findings.map(({ path, snapshot }) => ({ path, snapshot })), [{ path: '.env', snapshot: secret }]);
    assert.equal(remoteTip(remote), first);
    // save --scan lists the new snapshot's changes the same way.
    writeFileSync(join(dir, 'aws.env'), `AWS_SECRET_ACCESS_KEY=${AWS_SECRET}\n`);
    writeFileSync(join(dir, 'sub', 'a.txt'), 'c\n');
    const scanned = await runCli(sub, ['workspace', 'wip', 'save', '--scan']);
    assert.equal(scanned.code, 0, scanned.stdout);
    assert.deepEqual(scanned.doc.findings.map(({ path }: { path: string }) => path), ['aws.env']);
  });

  it('scans what the push sends where a replace ref puts a clean object in its place: a snapshot replaced by a clean commit, a packed blob replaced by a clean one', async () => {
    // git push sends the objects themselves; the gate followed replace refs, so it listed the
    // clean commit's files, and read the clean blob for the packed one: the token went unscanned.
    for (const replaced of ['snapshot', 'blob'] as const) {
      const { dir, remote, store, replicator } = box();
      const first = (await store.save({ label: 'clean' })).snapshot.commit;
      assert.equal((await replicator.push()).replication.pushed.length, 1);
      writeFileSync(join(dir, '.env'), `GITHUB_TOKEN=${GITHUB_TOKEN}\n`);
      const secret = (await store.save({ label: 'secret' })).snapshot.commit;
      if (replaced === 'snapshot') {
        const parents = git(dir, ['rev-list', '--parents', '-n', '1', secret]).trim().split(' ').slice(1);
        const clean = git(dir, ['commit-tree', `${first}^{tree}`, ...parents.flatMap((parent) => ['-p', parent]), '-m', 'clean']).trim();
        git(dir, ['replace', secret, clean]);
      } else {
        const clean = git(dir, ['hash-object', '-w', '--stdin'], { input: 'GITHUB_TOKEN=\n' }).trim();
        git(dir, ['replace', git(dir, ['rev-parse', `${secret}:.env`]).trim(), clean]);
        git(dir, ['repack', '-a', '-d', '-q']);
        git(dir, ['prune-packed']);
      }
      const { replication } = await replicator.push();
      assert.deepEqual(replication.heldBack?.[0]?.findings.map(({ path, snapshot }) => ({ path, snapshot })), [{ path: '.env', snapshot: secret }], replaced);
      assert.equal(remoteTip(remote), first, replaced);
    }
  });

  it('lets a false positive go once the host allows its id, and the document says nothing was held', async () => {
    const { dir, remote, store, replicator } = box();
    writeFileSync(join(dir, 'fixture.env'), `GITHUB_TOKEN=${GITHUB_TOKEN}\n`);
    const { snapshot } = await store.save({});
    const first = await replicator.push();
    const id = first.replication.heldBack?.[0]?.findings[0]?.id as string;
    assert.match(id, /^[0-9a-f]{20}$/);
    writeFileSync(join(dir, 'chant.workspace.json'), JSON.stringify({ members: [{ name: 'app', box: { replicate: { remote: 'origin', refs: ['wip'], on: [] } } }] }));
    const refused = await runCli(dir, ['workspace', 'wip', 'push', '--allow', 'ffffffffffffffffffff']);
    assert.equal(refused.doc.replication.heldBack?.length, 1);
    assert.equal(remoteTip(remote), null);
    const allowed = await runCli(dir, ['workspace', 'wip', 'push', '--allow', id]);
    assert.equal(allowed.code, 0, allowed.stdout);
    assert.deepEqual(allowed.doc.replication.pushed, [{ ref: 'refs/chant/wip/main', commit: snapshot.commit }]);
    assert.equal(allowed.doc.replication.heldBack, undefined);
    assert.equal(remoteTip(remote), snapshot.commit);
    await assertValidDocument(allowed.doc);
  });

  it('does not scan content the remote already holds: a file put back as a pushed snapshot had it goes without an allow', async () => {
    const { dir, remote, store, replicator } = box();
    writeFileSync(join(dir, 'fixture.env'), `GITHUB_TOKEN=${GITHUB_TOKEN}\n`);
    await store.save({ label: 'fixture' });
    const id = (await replicator.push()).replication.heldBack?.[0]?.findings[0]?.id as string;
    const allowed = await replicator.push({ allow: [id] });
    assert.equal(allowed.replication.heldBack, undefined);
    writeFileSync(join(dir, 'fixture.env'), 'GITHUB_TOKEN=\n');
    await store.save({ label: 'emptied' });
    writeFileSync(join(dir, 'fixture.env'), `GITHUB_TOKEN=${GITHUB_TOKEN}\n`);
    const back = (await store.save({ label: 'put back' })).snapshot.commit;
    // The allow went once; the remote holds that content at that path since, so nothing new is found.
    const { replication } = await replicator.push();
    assert.equal(replication.heldBack, undefined);
    assert.deepEqual(replication.pushed, [{ ref: 'refs/chant/wip/main', commit: back }]);
    assert.equal(remoteTip(remote), back);
    // A new secret above it is still found.
    writeFileSync(join(dir, 'aws.env'), `AWS_SECRET_ACCESS_KEY=${AWS_SECRET}\n`);
    await store.save({ label: 'new secret' });
    const held = (await replicator.push()).replication.heldBack;
    assert.deepEqual(held?.[0]?.findings.map((finding) => finding.path), ['aws.env']);
  });

  it('lets clean snapshots go without loading a finding, and save --scan reports a secret at once', async () => {
    const { dir, remote, store, replicator } = box();
    writeFileSync(join(dir, 'notes.txt'), 'nothing secret\n');
    const clean = await store.save({ scan: true });
    assert.deepEqual(clean.findings, []);
    const { replication } = await replicator.push();
    assert.equal(replication.heldBack, undefined);
    assert.equal(remoteTip(remote), clean.snapshot.commit);
    writeFileSync(join(dir, '.env'), `GITHUB_TOKEN=${GITHUB_TOKEN}\n`);
    const run = await runCli(dir, ['workspace', 'wip', 'save', '--scan']);
    assert.equal(run.code, 0);
    assert.deepEqual(run.doc.findings.map(({ path, line }: { path: string; line: number }) => ({ path, line })), [{ path: '.env', line: 1 }]);
    assert.ok(!run.stdout.includes(GITHUB_TOKEN));
    await assertValidDocument(run.doc);
  });

  it('says a save --scan whose scan failed recorded the snapshot and scanned nothing, rather than failing the save or reporting no findings', async () => {
    const { dir } = box();
    const inner = new SimpleGitRunner(dir);
    // The scan's one git log of what the snapshot adds fails, as a killed or broken git would.
    const failing: GitRunner = { run: (args, options) => inner.run(args.includes('log') && args.includes('--raw') ? ['log', '--no-such-option'] : args, options) };
    const store = new WipStore({ cwd: dir, git: failing, policy: null });
    writeFileSync(join(dir, '.env'), `GITHUB_TOKEN=${GITHUB_TOKEN}\n`);
    const saved = await store.save({ label: 'turn:1', scan: true });
    assert.equal(saved.created, true);
    assert.equal(git(dir, ['rev-parse', 'refs/chant/wip/main']).trim(), saved.snapshot.commit);
    assert.equal(saved.findings, undefined, 'no findings: nothing was scanned, which is not nothing found');
    assert.deepEqual(saved.skipped?.map(({ step, code }) => ({ step, code })), [{ step: 'scan', code: 'git-failed' }]);
    await assertValidDocument(writeDocument('save', saved));
  });

  it('loads the scanner again after a load that failed: one failed push does not fail every later push of a long-lived host', async (t) => {
    // The built SDK, copied where its imports still resolve, its scanner file moved away for the first push.
    const copy = mkdtempSync(join(ROOT, 'node_modules', '.chant-scanner-'));
    t.after(() => rmSync(copy, { recursive: true, force: true }));
    cpSync(join(ROOT, 'dist', 'lib'), join(copy, 'lib'), { recursive: true });
    const file = join(copy, 'lib', 'replication', 'secret-scanner.js');
    renameSync(file, `${file}.away`);
    const sdk = await import(pathToFileURL(join(copy, 'lib', 'index.js')).href) as typeof import('../lib/index.js');
    const { dir, remote } = box();
    const policy = sdk.Policy.from({ remote: 'origin', refs: ['wip'], on: [] }, { box: 'app' });
    const replicator = new sdk.Replicator({ cwd: dir, policy });
    writeFileSync(join(dir, '.env'), `GITHUB_TOKEN=${GITHUB_TOKEN}\n`);
    await new sdk.WipStore({ cwd: dir, policy }).save({ label: 'secret' });
    await assert.rejects(replicator.push());
    assert.equal(remoteTip(remote), null, 'nothing went unscanned');
    renameSync(`${file}.away`, file);
    const { replication } = await replicator.push();
    assert.deepEqual(replication.heldBack?.[0]?.findings.map((finding) => finding.path), ['.env']);
    assert.equal(remoteTip(remote), null);
  });

  it('loads the scanner once the push has started its first git processes, and lints while git lists what the chain adds', async (t) => {
    // The CommonJS SDK, copied where its requires still resolve: its scanner is a file of its own,
    // put behind one that notes each lint, so the test sees when the scanner loads and lints.
    const copy = mkdtempSync(join(ROOT, 'node_modules', '.chant-scanner-'));
    t.after(() => rmSync(copy, { recursive: true, force: true }));
    cpSync(join(ROOT, 'dist', 'cjs'), copy, { recursive: true });
    const scanner = join(copy, 'secret-scanner.cjs');
    renameSync(scanner, join(copy, 'scanner-itself.cjs'));
    const events: string[] = [];
    const hooks = globalThis as { chantTestEvents?: string[] };
    hooks.chantTestEvents = events;
    t.after(() => delete hooks.chantTestEvents);
    writeFileSync(scanner, [
      "const scanner = require('./scanner-itself.cjs');",
      "globalThis.chantTestEvents.push('scanner loaded');",
      "exports.lint = (path, content) => { globalThis.chantTestEvents.push('lint'); return scanner.lint(path, content); };",
    ].join('\n'));
    const sdk = createRequire(import.meta.url)(join(copy, 'index.cjs')) as typeof import('../lib/index.js');
    const { dir, remote } = box();
    const inner = new SimpleGitRunner(dir);
    const verbOf = (args: readonly string[]): string => args[args.findIndex((arg, i) => arg !== '-c' && args[i - 1] !== '-c')] ?? '';
    const runner: GitRunner = {
      run: async (args, options) => {
        events.push(`${verbOf(args)} started`);
        const output = await inner.run(args, options);
        // The listing of what the chain adds takes a while, as on a loaded machine.
        if (verbOf(args) === 'log') await new Promise((resolve) => setTimeout(resolve, 200));
        events.push(`${verbOf(args)} answered`);
        return output;
      },
    };
    const policy = sdk.Policy.from({ remote: 'origin', refs: ['wip'], on: [] }, { box: 'app' });
    writeFileSync(join(dir, '.env'), `GITHUB_TOKEN=${GITHUB_TOKEN}\n`);
    await new sdk.WipStore({ cwd: dir, policy }).save({ label: 'secret' });
    events.length = 0;
    const { replication } = await new sdk.Replicator({ cwd: dir, policy, git: runner }).push();
    assert.deepEqual(replication.heldBack?.[0]?.findings.map((finding) => finding.path), ['.env'], 'the gate ran as ever');
    assert.equal(remoteTip(remote), null);
    const at = (event: string): number => events.indexOf(event);
    assert.ok(at('scanner loaded') > at('config started') && at('scanner loaded') > at('for-each-ref started'), `the refs and the remote's configuration are asked for first: ${events.join(', ')}`);
    assert.ok(at('lint') > at('log started') && at('lint') < at('log answered'), `the scanner warms up while git lists the chain: ${events.join(', ')}`);
    // Twice: a regular expression's second match compiles it to machine code, which the first
    // file listed paid after a single warm-up.
    assert.equal(events.slice(at('log started'), at('log answered')).filter((event) => event === 'lint').length, 2, `both warm-up lints run while git lists the chain: ${events.join(', ')}`);
  });

  it("leaves nothing on the host process's performance timeline: the scanner's profiler is quiet in the SDK too", async () => {
    const { dir, store, replicator } = box();
    writeFileSync(join(dir, '.env'), `GITHUB_TOKEN=${GITHUB_TOKEN}\n`);
    for (let i = 0; i < 20; i += 1) writeFileSync(join(dir, `note${i}.txt`), `note ${i}\n`);
    await store.save({ label: 'many files' });
    const held = (await replicator.push()).replication.heldBack;
    assert.deepEqual(held?.[0]?.findings.map((finding) => finding.path), ['.env'], 'the scanner ran');
    // secretlint marks each rule's start and end per file, and keeps every mark for the process's life.
    assert.deepEqual(performance.getEntriesByType('mark').filter((mark) => mark.name.startsWith('@core>')).map((mark) => mark.name).slice(0, 3), []);
  });

  it('lets a finding the declaration allows go on every push, and save --scan leaves it out', async () => {
    const { dir, remote } = box();
    const declare = (allow: string[]): void => writeFileSync(join(dir, 'chant.workspace.json'), JSON.stringify({ members: [{ name: 'app', box: { replicate: { remote: 'origin', refs: ['wip'], on: [], allow } } }] }));
    declare([]);
    writeFileSync(join(dir, 'fixture.env'), `GITHUB_TOKEN=${GITHUB_TOKEN}\n`);
    const saved = await runCli(dir, ['workspace', 'wip', 'save', '--scan']);
    const id = saved.doc.findings[0]?.id as string;
    assert.match(id, /^[0-9a-f]{20}$/);
    const held = await runCli(dir, ['workspace', 'wip', 'push']);
    assert.equal(held.doc.replication.heldBack?.[0]?.findings[0]?.id, id);
    assert.equal(remoteTip(remote), null);
    declare([id]);
    const pushed = await runCli(dir, ['workspace', 'wip', 'push']);
    assert.equal(pushed.code, 0, pushed.stdout);
    assert.equal(pushed.doc.replication.heldBack, undefined);
    assert.deepEqual(pushed.doc.policy.allow, [id]);
    assert.equal(remoteTip(remote), saved.doc.snapshot.commit);
    await assertValidDocument(pushed.doc);
    // The same file added again is the same finding: the scan on save leaves it out, the push lets it go.
    writeFileSync(join(dir, 'fixture.env'), 'GITHUB_TOKEN=\n');
    await runCli(dir, ['workspace', 'wip', 'save']);
    writeFileSync(join(dir, 'fixture.env'), `GITHUB_TOKEN=${GITHUB_TOKEN}\n`);
    const again = await runCli(dir, ['workspace', 'wip', 'save', '--scan']);
    assert.deepEqual(again.doc.findings, []);
    const next = await runCli(dir, ['workspace', 'wip', 'push']);
    assert.equal(next.doc.replication.heldBack, undefined);
    assert.equal(remoteTip(remote), again.doc.snapshot.commit);
    // A changed file is a new finding, held back though the old one is allowed.
    writeFileSync(join(dir, 'fixture.env'), `# changed\nGITHUB_TOKEN=${GITHUB_TOKEN}\n`);
    const changed = await runCli(dir, ['workspace', 'wip', 'save', '--scan']);
    assert.equal(changed.doc.findings.length, 1);
    assert.notEqual(changed.doc.findings[0]?.id, id);
    assert.equal((await runCli(dir, ['workspace', 'wip', 'push'])).doc.replication.heldBack?.length, 1);
  });
});

describe('the secret gate and what a checkpoint staged', () => {
  it('scans a chain whose first snapshot is a checkpoint that recorded the index down to its head: a token staged there holds it back, one in the branch\'s history is not the chain\'s, and no branch commit goes as the chain', async () => {
    const { dir, remote, store, replicator } = box();
    // A token committed to main and taken out again, long before any snapshot.
    writeFileSync(join(dir, 'old.env'), `GITHUB_TOKEN=${GITHUB_TOKEN}\n`);
    git(dir, ['add', 'old.env']);
    git(dir, ['commit', '-qm', 'add a token']);
    git(dir, ['rm', '-q', 'old.env']);
    git(dir, ['commit', '-qm', 'take it out']);
    writeFileSync(join(dir, 'notes.txt'), 'first\n');
    const first = (await store.save({ label: 'one' })).snapshot.commit;
    // A token staged, then edited away in the working tree, before a restore: only the index its checkpoint records holds it.
    writeFileSync(join(dir, '.env'), `GITHUB_TOKEN=${GITHUB_TOKEN}\n`);
    git(dir, ['add', '.env']);
    writeFileSync(join(dir, '.env'), 'GITHUB_TOKEN=\n');
    await store.restore({ snapshot: first });
    writeFileSync(join(dir, 'notes.txt'), 'third\n');
    await store.save({});
    // The prune leaves the checkpoint first on the chain: its first parent is the index's commit.
    await store.prune({ keepLast: 2 });
    const listed = (await store.list({})).branches[0]?.snapshots.map((snapshot) => snapshot.commit) ?? [];
    const chain = [listed[1] as string, listed[0] as string];
    assert.equal(chain[1], git(dir, ['rev-parse', 'refs/chant/wip/main']).trim());
    assert.equal(git(dir, ['rev-list', '--parents', '-n', '1', chain[0] as string]).trim().split(' ').length, 3, 'the index, the head');
    const { replication } = await replicator.push();
    assert.deepEqual(replication.pushed, [], JSON.stringify(replication));
    assert.equal(remoteTip(remote), null);
    const [held] = replication.heldBack ?? [];
    assert.deepEqual(held?.findings.map(({ path, line, snapshot }) => ({ path, line, snapshot })), [{ path: '.env', line: 1, snapshot: chain[0] }]);
    // Allowed, the chain goes whole, and nothing but it.
    const again = await replicator.push({ allow: [held?.findings[0]?.id as string] });
    assert.deepEqual(again.replication.pushed, [{ ref: 'refs/chant/wip/main', commit: chain[1] }], JSON.stringify(again.replication));
    assert.equal(again.replication.heldBack, undefined);
  });

  it('cuts a chain short only at a snapshot: a token in the first snapshot taken on a head since amended away holds the ref back whole, and that head never goes as the wip ref', async () => {
    const { dir, remote, store, replicator } = box();
    writeFileSync(join(dir, 'notes.txt'), 'first\n');
    writeFileSync(join(dir, '.env'), `GITHUB_TOKEN=${GITHUB_TOKEN}\n`);
    const first = (await store.save({})).snapshot.commit;
    const head = git(dir, ['rev-parse', 'HEAD']).trim();
    // The head the first snapshot was taken on leaves every branch: the chain still stands on it.
    git(dir, ['commit', '-q', '--amend', '-m', 'initial, amended']);
    writeFileSync(join(dir, 'notes.txt'), 'second\n');
    const second = (await store.save({})).snapshot.commit;
    const { replication } = await replicator.push();
    assert.deepEqual(replication.pushed, [], JSON.stringify(replication));
    assert.equal(remoteTip(remote), null, `the remote's wip ref is not ${head}`);
    assert.deepEqual(replication.heldBack?.map(({ commit, pushed, findings }) => ({ commit, pushed, snapshots: findings.map((finding) => finding.snapshot) })), [
      { commit: second, pushed: null, snapshots: [first] },
    ]);
  });

  it('scans what a file git-lfs keeps holds, not its pointer: a token in an LFS-tracked file is held back', async (t) => {
    const lfs = missingLfs();
    if (lfs !== null) return t.skip(lfs);
    const remote = bareRemote();
    const dir = makeRepo({ 'README.md': 'hello\n', '.gitattributes': '*.secret filter=lfs diff=lfs merge=lfs -text\n' });
    git(dir, ['remote', 'add', 'origin', remote]);
    git(dir, ['lfs', 'install', '--local']);
    const policy = Policy.from({ remote: 'origin', refs: ['wip'], on: [] }, { box: 'app' });
    writeFileSync(join(dir, 'deploy.secret'), `# deploy\nGITHUB_TOKEN=${GITHUB_TOKEN}\n`);
    const { snapshot } = await new WipStore({ cwd: dir, policy }).save({});
    assert.match(git(dir, ['cat-file', '-p', `${snapshot.commit}:deploy.secret`]), /^version https:\/\/git-lfs/, 'the snapshot holds a pointer');
    const { replication } = await new Replicator({ cwd: dir, policy }).push();
    assert.deepEqual(replication.pushed, [], JSON.stringify(replication));
    assert.equal(remoteTip(remote), null);
    assert.deepEqual(replication.heldBack?.[0]?.findings.map(({ path, line, snapshot: s }) => ({ path, line, s })), [{ path: 'deploy.secret', line: 2, s: snapshot.commit }]);
  });

  it('scans a git-lfs object of 2 GiB and more, window by window, where reading it whole failed as if it were not in the store and it went unscanned', async () => {
    const { dir, remote, policy, replicator } = box();
    // The object in the local LFS store, sparse: 2 GiB of nothing with a token near its end.
    const oid = createHash('sha256').update('a large object').digest('hex');
    const folder = join(dir, '.git', 'lfs', 'objects', oid.slice(0, 2), oid.slice(2, 4));
    mkdirSync(folder, { recursive: true });
    const size = 2 ** 31 + 4096;
    const fd = openSync(join(folder, oid), 'w');
    ftruncateSync(fd, size);
    writeSync(fd, `GITHUB_TOKEN=${GITHUB_TOKEN}\n`, size - 2048);
    closeSync(fd);
    writeFileSync(join(dir, 'dump.bin'), `version https://git-lfs.github.com/spec/v1\noid sha256:${oid}\nsize ${size}\n`);
    const { snapshot } = await new WipStore({ cwd: dir, policy }).save({});
    const { replication } = await replicator.push();
    assert.equal(remoteTip(remote), null, 'nothing went');
    assert.deepEqual(replication.heldBack?.[0]?.findings.map(({ path, line, snapshot: s }) => ({ path, line, s })), [{ path: 'dump.bin', line: null, s: snapshot.commit }]);
  });

  it('reads chant\'s trailers as written whatever trailer.separators or core.commentChar say: a token staged in a checkpoint\'s recorded index is held back', async () => {
    // With either setting, git's %(trailers) read no Chant-Wip-* trailer: the checkpoint's index
    // commit was not found, and what it staged went to the remote unscanned.
    for (const [key, value] of [['trailer.separators', '='], ['core.commentChar', 'C']] as const) {
      const { dir, remote, store, replicator } = box();
      git(dir, ['config', key, value]);
      writeFileSync(join(dir, 'notes.txt'), 'first\n');
      const first = (await store.save({ label: 'one' })).snapshot.commit;
      assert.equal((await replicator.push()).replication.pushed.length, 1, key);
      writeFileSync(join(dir, '.env'), `GITHUB_TOKEN=${GITHUB_TOKEN}\n`);
      git(dir, ['add', '.env']);
      writeFileSync(join(dir, '.env'), 'GITHUB_TOKEN=\n');
      const checkpoint = (await store.restore({ snapshot: first })).checkpoint.snapshot.commit;
      const { replication } = await replicator.push();
      assert.deepEqual(replication.heldBack?.[0]?.findings.map(({ path, snapshot }) => ({ path, snapshot })), [{ path: '.env', snapshot: checkpoint }], key);
      assert.equal(remoteTip(remote), first, key);
    }
  });

  it('scans the index a restore\'s checkpoint recorded: a token staged, then edited away in the working tree, holds the checkpoint back', async () => {
    const { dir, remote, store, replicator } = box();
    writeFileSync(join(dir, 'notes.txt'), 'first\n');
    const first = (await store.save({ label: 'one' })).snapshot.commit;
    assert.equal((await replicator.push()).replication.pushed.length, 1);
    // A token staged, then taken out of the working tree: only the index holds it.
    writeFileSync(join(dir, '.env'), `GITHUB_TOKEN=${GITHUB_TOKEN}\n`);
    git(dir, ['add', '.env']);
    writeFileSync(join(dir, '.env'), 'GITHUB_TOKEN=\n');
    const restored = await store.restore({ snapshot: first });
    const checkpoint = restored.checkpoint.snapshot.commit;
    assert.equal(git(dir, ['rev-list', '--parents', '-n', '1', checkpoint]).trim().split(' ').length, 4, 'the snapshot below, the index, the head');
    const { replication } = await replicator.push();
    assert.deepEqual(replication.pushed, []);
    assert.equal(remoteTip(remote), first);
    const [held] = replication.heldBack ?? [];
    assert.deepEqual(held?.findings.map(({ path, line, snapshot }) => ({ path, line, snapshot })), [{ path: '.env', line: 1, snapshot: checkpoint }]);
    assert.ok(!JSON.stringify(replication).includes(GITHUB_TOKEN));
  });
});

const P12_FINDING = { path: 'keys/service-account.p12', line: null, rule: '@secretlint/secretlint-rule-gcp:PrivateKeyP12' };

describe("the secret gate and a GCP service account's .p12 key", { skip: NO_OPENSSL }, () => {
  it('holds back an untracked .p12 key from a push and save --scan reports it, with the path and the rule and no secret, through the SDK', async () => {
    const { dir, remote, store, replicator } = box();
    mkdirSync(join(dir, 'keys'));
    const key = p12Key();
    writeFileSync(join(dir, 'keys', 'service-account.p12'), key);
    const saved = await store.save({ scan: true });
    assert.deepEqual(saved.findings?.map(({ path, line, rule }) => ({ path, line, rule })), [P12_FINDING]);
    const { replication } = await replicator.push();
    assert.deepEqual(replication.heldBack?.[0]?.findings.map(({ path, line, rule }) => ({ path, line, rule })), [P12_FINDING]);
    assert.equal(remoteTip(remote), null);
    const text = JSON.stringify({ saved, replication });
    assert.ok(!text.includes(key.toString('base64').slice(0, 40)) && !text.includes('notasecret'));
  });

  it('reads the .p12 the push sends, not the file on disk: a key saved then overwritten is held back, junk saved then replaced by a key goes', async () => {
    const saved = box();
    mkdirSync(join(saved.dir, 'keys'));
    writeFileSync(join(saved.dir, 'keys', 'service-account.p12'), p12Key());
    await saved.store.save({});
    writeFileSync(join(saved.dir, 'keys', 'service-account.p12'), 'not a key any more\n');
    assert.deepEqual((await saved.replicator.push()).replication.heldBack?.[0]?.findings.map(({ path, line, rule }) => ({ path, line, rule })), [P12_FINDING]);

    const junk = box();
    writeFileSync(join(junk.dir, 'chant.workspace.json'), `${JSON.stringify({ members: [{ name: 'app', box: { replicate: { remote: 'origin', refs: ['wip'], on: [] } } }] })}\n`);
    mkdirSync(join(junk.dir, 'keys'));
    writeFileSync(join(junk.dir, 'keys', 'service-account.p12'), 'a placeholder\n');
    const clean = (await junk.store.save({})).snapshot.commit;
    writeFileSync(join(junk.dir, 'keys', 'service-account.p12'), p12Key());
    // The bin runs in the checkout, where the path the snapshot names leads to the key on disk.
    const pushed = runBin(junk.dir, ['workspace', 'wip', 'push']);
    assert.equal(pushed.code, 0, pushed.stdout + pushed.stderr);
    assert.equal(pushed.doc.replication.heldBack, undefined);
    assert.equal(remoteTip(junk.remote), clean);
  });

  it('finds a .p12 key a zip or a tar holds, gzipped or not, as it finds one beside them', async () => {
    const folder = makeRepo();
    mkdirSync(join(folder, 'keys'));
    writeFileSync(join(folder, 'keys', 'service-account.p12'), p12Key());
    git(folder, ['add', '-A']);
    git(folder, ['commit', '-qm', 'key']);
    const { dir, remote, store, replicator } = box();
    for (const format of ['zip', 'tar', 'tar.gz']) git(folder, ['archive', `--format=${format}`, '-o', join(dir, `keys.${format}`), 'HEAD']);
    await store.save({});
    const findings = (await replicator.push()).replication.heldBack?.[0]?.findings ?? [];
    assert.deepEqual(findings.map(({ path, line, rule }) => ({ path, line, rule })).sort((a, b) => a.path.localeCompare(b.path)), ['keys.tar', 'keys.tar.gz', 'keys.zip'].map((path) => ({ ...P12_FINDING, path })));
    assert.equal(remoteTip(remote), null);
  });

  it("holds back a service account's JSON key once, for its private key", async () => {
    const { dir, store, replicator } = box();
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
    writeFileSync(join(dir, 'service-account.json'), `${JSON.stringify({ type: 'service_account', project_id: 'app', private_key_id: 'f00d', private_key: privateKey, client_email: 'sa@app.iam.gserviceaccount.com' }, null, 2)}\n`);
    await store.save({});
    const findings = (await replicator.push()).replication.heldBack?.[0]?.findings ?? [];
    assert.deepEqual(findings.map(({ path, rule }) => ({ path, rule })), [{ path: 'service-account.json', rule: '@secretlint/secretlint-rule-privatekey:PrivateKey' }]);
  });

  it('lets a .p12 under another password go: it is no GCP key', async () => {
    const { dir, remote, store, replicator } = box();
    writeFileSync(join(dir, 'client.p12'), p12Key('changeit'));
    const { snapshot } = await store.save({});
    assert.equal((await replicator.push()).replication.heldBack, undefined);
    assert.equal(remoteTip(remote), snapshot.commit);
  });

  it('holds back an untracked .p12 key through the built bin, push and save --scan, and leaves no copy of it in the temporary folder', () => {
    const remote = bareRemote();
    const dir = makeRepo({ 'README.md': 'hello\n', 'chant.workspace.json': `${JSON.stringify({ members: [{ name: 'app', box: { replicate: { remote: 'origin', refs: ['wip'], on: [] } } }] })}\n` });
    git(dir, ['remote', 'add', 'origin', remote]);
    mkdirSync(join(dir, 'keys'));
    writeFileSync(join(dir, 'keys', 'service-account.p12'), p12Key());
    const scratch = mkdtempSync(join(tmpdir(), 'chant-p12-tmp-'));
    const env = { ...process.env, TMPDIR: scratch };
    const saved = runBin(dir, ['workspace', 'wip', 'save', '--scan'], env);
    assert.equal(saved.code, 0, saved.stdout + saved.stderr);
    assert.deepEqual(saved.doc.findings.map(({ path, line, rule }: SecretFinding) => ({ path, line, rule })), [P12_FINDING]);
    const pushed = runBin(dir, ['workspace', 'wip', 'push'], env);
    assert.equal(pushed.code, 0, pushed.stdout + pushed.stderr);
    assert.deepEqual(pushed.doc.replication.heldBack?.[0]?.findings.map(({ path, line, rule }: SecretFinding) => ({ path, line, rule })), [P12_FINDING]);
    assert.equal(remoteTip(remote), null);
    assert.ok(!pushed.stdout.includes('notasecret') && !saved.stdout.includes('notasecret'));
    assert.deepEqual(readdirSync(scratch), [], 'the key written for the rule to read is removed');
    rmSync(scratch, { recursive: true, force: true });
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { documentChunks, documentText } from '../cli/print.js';
import { readDocument, WipStore, writeDocument } from '../lib/index.js';
import { buildChain } from './chains.js';
import { git, makeRepo, runBin, runCli, writeFiles } from './helpers.js';
import { bareRemote } from './remotes.js';

/** What `JSON.stringify` of a value parses back to: what the printed text must parse to. */
function reparsed(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value));
}

/** The lines of a printed document, which ends with one newline. */
function linesOf(text: string): string[] {
  assert.ok(text.endsWith('}\n') && !text.endsWith('\n\n'), 'the document ends with one newline');
  return text.slice(0, -1).split('\n');
}

/** A box on a work branch whose declaration replicates to a bare origin on release only. */
function box(): string {
  const declaration = { members: [{ name: 'app', box: { replicate: { remote: 'origin', refs: ['work', 'kept', 'wip', 'ledger'], on: ['release'], every: '10m' } } }] };
  const dir = makeRepo({ 'README.md': 'project\n', 'chant.workspace.json': `${JSON.stringify(declaration)}\n` });
  git(dir, ['remote', 'add', 'origin', bareRemote()]);
  git(dir, ['checkout', '-q', '-b', 'chant/work/W-001']);
  return dir;
}

describe('documentText', () => {
  it('prints the spec\'s example read with its containers indented and each record on one line', () => {
    const document = {
      $schema: 'https://intentius.io/chant/schemas/workspace/wip/v1/wip.schema.json',
      contract: 1,
      chant: '0.103.0',
      checkout: { branch: 'chant/work/W-001', head: 'ceef33b5...' },
      branches: [{
        branch: 'chant/work/W-001',
        ref: 'refs/chant/wip/chant/work/W-001',
        tip: '4b76a2ec...',
        snapshots: [{ commit: '4b76a2ec...', tree: 'fb2fae30...', branch: 'chant/work/W-001', head: 'ceef33b5...', kind: 'save', label: 'turn:7', by: 'github:alex', at: '2026-10-03T23:04:24.000Z' }],
      }],
      replication: {
        policy: { box: 'app', remote: 'origin', refs: ['work', 'kept', 'wip', 'ledger'], on: ['save', 'release'], every: '10m' },
        remoteConfigured: true,
        replicated: false,
        refs: [{ ref: 'refs/chant/wip/chant/work/W-001', class: 'wip', commit: '4b76a2ec...', replica: null, replicated: false, ahead: 1 }],
      },
    };
    assert.equal(documentText(document), [
      '{',
      '  "$schema": "https://intentius.io/chant/schemas/workspace/wip/v1/wip.schema.json",',
      '  "contract": 1,',
      '  "chant": "0.103.0",',
      '  "checkout": {"branch":"chant/work/W-001","head":"ceef33b5..."},',
      '  "branches": [',
      '    {',
      '      "branch": "chant/work/W-001",',
      '      "ref": "refs/chant/wip/chant/work/W-001",',
      '      "tip": "4b76a2ec...",',
      '      "snapshots": [',
      '        {"commit":"4b76a2ec...","tree":"fb2fae30...","branch":"chant/work/W-001","head":"ceef33b5...","kind":"save","label":"turn:7","by":"github:alex","at":"2026-10-03T23:04:24.000Z"}',
      '      ]',
      '    }',
      '  ],',
      '  "replication": {',
      '    "policy": {"box":"app","remote":"origin","refs":["work","kept","wip","ledger"],"on":["save","release"],"every":"10m"},',
      '    "remoteConfigured": true,',
      '    "replicated": false,',
      '    "refs": [',
      '      {"ref":"refs/chant/wip/chant/work/W-001","class":"wip","commit":"4b76a2ec...","replica":null,"replicated":false,"ahead":1}',
      '    ]',
      '  }',
      '}',
      '',
    ].join('\n'));
  });

  it('breaks an array of more than eight scalars one element a line, and an object nesting three deep', () => {
    const document = { eight: [1, 2, 3, 4, 5, 6, 7, 8], nine: [1, 2, 3, 4, 5, 6, 7, 8, 9], deep: { a: { b: { c: 1 } } }, empty: { list: [], object: {} } };
    assert.equal(documentText(document), [
      '{',
      '  "eight": [1,2,3,4,5,6,7,8],',
      '  "nine": [',
      ...[1, 2, 3, 4, 5, 6, 7, 8].map((n) => `    ${n},`),
      '    9',
      '  ],',
      '  "deep": {',
      '    "a": {"b":{"c":1}}',
      '  },',
      '  "empty": {"list":[],"object":{}}',
      '}',
      '',
    ].join('\n'));
    assert.equal(documentText({}), '{}\n');
    assert.equal(documentText({ list: [] }), '{\n  "list": []\n}\n');
  });

  it('leaves out undefined and function members, prints them as null in an array, and honours toJSON with its key', () => {
    const keys: string[] = [];
    const labelled = { toJSON: (key: string) => (keys.push(key), { key }) };
    const document = {
      gone: undefined,
      kept: 1,
      method() { return 1; },
      holes: [undefined, () => 1, 'x', 1, 2, 3, 4, 5, 6, 7],
      at: new Date(Date.UTC(2026, 9, 3, 23, 4, 24)),
      records: [labelled, { nested: labelled }],
      boxed: [new Number(1), new String('s'), new Boolean(false)],
      nonFinite: [Number.NaN, Number.POSITIVE_INFINITY],
    };
    const text = documentText(document);
    assert.deepEqual(keys, ['0', 'nested'], 'toJSON is called once a value, with its key');
    assert.deepEqual(JSON.parse(text), reparsed(document));
    assert.doesNotMatch(text, /"gone"|"method"/);
    assert.match(text, /^ {2}"at": "2026-10-03T23:04:24\.000Z",$/m);
    assert.match(text, /^ {4}null,\n {4}null,\n {4}"x",$/m);
  });

  it('parses back to what JSON.stringify parses to, whatever JSON value it is given', () => {
    fc.assert(fc.property(fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 5 })), (document) => {
      assert.deepEqual(JSON.parse(documentText(document)), reparsed(document));
    }), { seed: 20261204, numRuns: 500 });
  });
});

/** What `documentChunks` gives, as text, and how many chunks. */
function written(document: unknown): { text: string; writes: number } {
  const chunks = documentChunks(document);
  return { text: Buffer.concat(chunks).toString('utf8'), writes: chunks.length };
}

describe('documentChunks', () => {
  it('gives the bytes of documentText, a chunk at a time, whatever JSON value it is given', () => {
    fc.assert(fc.property(fc.dictionary(fc.string({ unit: 'binary' }), fc.jsonValue({ maxDepth: 5 })), (document) => {
      assert.equal(written(document).text, documentText(document));
    }), { seed: 20261205, numRuns: 300 });
    // Many records, with characters of two, three and four bytes in UTF-8, over several chunks.
    const records = Array.from({ length: 2000 }, (_, index) => ({ index, label: `tür "${index}" \\ ✓ 𝄞`, nested: { ok: index % 2 === 0 } }));
    const document = { records, long: Array.from({ length: 700 }, (_, index) => `é${index}`) };
    const { text, writes } = written(document);
    assert.equal(text, documentText(document));
    assert.ok(writes > 2, `${writes} writes`);
  });
});

describe('the CLI prints its documents records one a line', () => {
  it('prints a read with --changes that parses to JSON.stringify of the SDK\'s read, a snapshot on each line', async () => {
    const dir = box();
    writeFiles(dir, { 'a.txt': 'one\n' });
    assert.equal((await runCli(dir, ['workspace', 'wip', 'save', '--label', 'turn:1'])).code, 0);
    writeFiles(dir, { 'a.txt': 'one\ntwo\n', 'b.txt': 'b\n' });
    const save = await runCli(dir, ['workspace', 'wip', 'save', '--label', 'turn:2', '--json']);
    assert.equal(save.code, 0, save.stdout);
    assert.equal(save.stdout, documentText(save.doc));
    assert.ok(linesOf(save.stdout).includes(`  "snapshot": ${JSON.stringify(save.doc.snapshot)},`), save.stdout);

    const read = await runCli(dir, ['workspace', 'wip', '--json', '--changes']);
    assert.equal(read.code, 0, read.stdout);
    assert.deepEqual(read.doc, reparsed(readDocument(await new WipStore({ cwd: dir }).list({ changes: true }))));
    assert.equal(read.stdout, documentText(read.doc));
    const lines = linesOf(read.stdout);
    assert.equal(lines[1], `  "$schema": ${JSON.stringify(read.doc.$schema)},`);
    assert.ok(lines.includes(`  "checkout": ${JSON.stringify(read.doc.checkout)},`), read.stdout);
    const snapshots = read.doc.branches[0].snapshots;
    assert.equal(snapshots.length, 2);
    assert.ok(snapshots.every((snapshot: { changes?: unknown }) => snapshot.changes !== undefined), 'each snapshot carries its counts');
    const at = lines.indexOf('      "snapshots": [');
    assert.deepEqual(lines.slice(at + 1, at + 4), [`        ${JSON.stringify(snapshots[0])},`, `        ${JSON.stringify(snapshots[1])}`, '      ]']);
    assert.ok(lines.includes(`    "policy": ${JSON.stringify(read.doc.replication.policy)},`), read.stdout);
    const refs = read.doc.replication.refs.map((entry: unknown, index: number, all: unknown[]) => `      ${JSON.stringify(entry)}${index < all.length - 1 ? ',' : ''}`);
    const from = lines.indexOf('    "refs": [');
    assert.deepEqual(lines.slice(from + 1, from + 1 + refs.length), refs);
    assert.ok(lines.every((line) => /^( {2})*\S/.test(line)), 'indented by two spaces a level');
  });

  it('prints a read of a long chain with --changes byte for byte as documentText prints the SDK\'s read, in the CLI and from the bin', async () => {
    const dir = box();
    git(dir, ['checkout', '-q', 'main']);
    buildChain(dir, 700, (i) => i % 3 === 0);
    writeFiles(dir, { 'a.txt': 'one\n' });
    assert.equal((await runCli(dir, ['workspace', 'wip', 'save', '--label', 'tür "7" \\ ✓ 𝄞'])).code, 0);
    writeFiles(dir, { 'a.txt': 'one\ntwo\n', 'b.txt': 'b\n' });
    assert.equal((await runCli(dir, ['workspace', 'wip', 'save', '--label', '{"x":[1,2]},{'])).code, 0);
    const first = await runCli(dir, ['workspace', 'wip', '--json', '--changes']);
    assert.equal(first.code, 0, first.stdout);
    // The memo now holds every count: the read below, the SDK's and the bin's agree on them.
    const read = await runCli(dir, ['workspace', 'wip', '--json', '--changes']);
    const expected = documentText(readDocument(await new WipStore({ cwd: dir }).list({ changes: true })));
    assert.equal(read.stdout, expected);
    assert.equal(first.stdout, expected);
    assert.equal(runBin(dir, ['workspace', 'wip', '--json', '--changes']).stdout, expected);
    const snapshots = read.doc.branches[0].snapshots;
    assert.equal(snapshots.length, 702);
    assert.equal(snapshots[1].label, 'tür "7" \\ ✓ 𝄞');
    assert.ok(snapshots.every((snapshot: { changes?: unknown }) => snapshot.changes !== undefined), 'each snapshot carries its counts');
  });

  it('breaks a restore\'s long list of paths one a line, and its SDK document parses back as JSON.stringify\'s', async () => {
    const dir = box();
    const files = Object.fromEntries(Array.from({ length: 12 }, (_, index) => [`src/f${String(index).padStart(2, '0')}.txt`, `${index}\n`]));
    writeFiles(dir, files);
    const saved = (await runCli(dir, ['workspace', 'wip', 'save'])).doc.snapshot.commit;
    writeFiles(dir, Object.fromEntries(Object.keys(files).map((path) => [path, null])));
    const restore = await runCli(dir, ['workspace', 'wip', 'restore', saved]);
    assert.equal(restore.code, 0, restore.stdout);
    assert.equal(restore.stdout, documentText(restore.doc));
    const paths = Object.keys(files);
    assert.deepEqual(restore.doc.paths, paths);
    const lines = linesOf(restore.stdout);
    const at = lines.indexOf('  "paths": [');
    assert.deepEqual(lines.slice(at + 1, at + 2 + paths.length), [...paths.map((path, index) => `    ${JSON.stringify(path)}${index < paths.length - 1 ? ',' : ''}`), '  ],']);
    assert.ok(lines.includes(`  "snapshot": ${JSON.stringify(restore.doc.snapshot)},`), restore.stdout);

    // The undo, through the SDK: the document object itself, before any parse.
    const undo = writeDocument('restore', await new WipStore({ cwd: dir }).restore({ snapshot: restore.doc.checkpoint.snapshot.commit }));
    assert.deepEqual(JSON.parse(documentText(undo)), reparsed(undo));
  });

  it('prints a refusal broken over lines, its error one record', async () => {
    const dir = box();
    const refused = await runCli(dir, ['workspace', 'wip', 'restore', 'nope']);
    assert.equal(refused.code, 1);
    assert.equal(refused.stdout, documentText(refused.doc));
    const lines = linesOf(refused.stdout);
    assert.equal(lines[0], '{');
    assert.equal(lines[1], `  "$schema": ${JSON.stringify(refused.doc.$schema)},`);
    assert.equal(lines.at(-2), `  "error": ${JSON.stringify(refused.doc.error)}`);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Snapshot } from '../lib/documents/snapshot.js';
import { Snapshot as SnapshotType } from '../lib/documents/snapshot.js';
import { GIVEN_FIELDS, loadSnapshot, readSnapshot, SNAPSHOT_FIELDS, snapshotFields, snapshotMessage, STORED_SNAPSHOT_LENGTH, storeSnapshot } from '../lib/snapshot/format.js';

const HEAD = 'a'.repeat(40);
const record = (message: string) => ({ commit: 'c'.repeat(40), tree: 't'.repeat(40), parents: [HEAD], committedAt: 1791028800, message });

describe('the snapshot commit format', () => {
  it('reads back what it writes, label and principal included', () => {
    const message = snapshotMessage({ branch: 'chant/work/W-001', head: HEAD, kind: 'pre-restore', label: 'before 4b76a2ec1234', by: 'github:alex' });
    assert.equal(message, `chant wip: chant/work/W-001 (before 4b76a2ec1234)\n\nChant-Wip-Branch: chant/work/W-001\nChant-Wip-Head: ${HEAD}\nChant-Wip-Kind: pre-restore\nChant-Wip-Label: before 4b76a2ec1234\nChant-Wip-By: github:alex\n`);
    assert.deepEqual(readSnapshot(record(message)), {
      commit: 'c'.repeat(40), tree: 't'.repeat(40), branch: 'chant/work/W-001', head: HEAD, kind: 'pre-restore', label: 'before 4b76a2ec1234', by: 'github:alex', at: '2026-10-03T12:00:00.000Z',
    });
  });

  it('matches trailer keys without regard to case, and the first of a key wins', () => {
    const snapshot = readSnapshot(record(`subject\n\nbody\n\nchant-wip-branch: main\nCHANT-WIP-HEAD: ${HEAD}\nChant-Wip-Label: first\nChant-Wip-Label: second\n`));
    assert.equal(snapshot?.branch, 'main');
    assert.equal(snapshot?.label, 'first');
  });

  it('reads any kind other than pre-restore as save, and a missing label or principal as null', () => {
    const snapshot = readSnapshot(record(`s\n\nChant-Wip-Branch: main\nChant-Wip-Head: ${HEAD}\nChant-Wip-Kind: something-new\n`));
    assert.equal(snapshot?.kind, 'save');
    assert.equal(snapshot?.label, null);
    assert.equal(snapshot?.by, null);
  });

  it('is no snapshot without both Branch and Head, with a Head that is no object id, or with trailers in the subject paragraph', () => {
    assert.equal(readSnapshot(record(`s\n\nChant-Wip-Head: ${HEAD}\n`)), null);
    assert.equal(readSnapshot(record('s\n\nChant-Wip-Branch: main\n')), null);
    assert.equal(readSnapshot(record('s\n\nChant-Wip-Branch: main\nChant-Wip-Head: HEAD\n')), null);
    assert.equal(readSnapshot(record(`Chant-Wip-Branch: main\nChant-Wip-Head: ${HEAD}\n`)), null);
    assert.equal(readSnapshot(record(`s\n\nChant-Wip-Branch: main\nChant-Wip-Head: ${HEAD}\n\nSigned-off-by: someone\n`)), null, 'only the last paragraph holds trailers');
  });

  it('keeps a value exactly as written after the one space that follows the colon', () => {
    const snapshot = readSnapshot(record(`s\n\nChant-Wip-Branch: main\nChant-Wip-Head: ${HEAD}\nChant-Wip-Label:   spaced: out  \n`));
    assert.equal(snapshot?.label, '  spaced: out  ');
  });
});

describe('the snapshot commit format, read strictly', () => {
  it('folds only the case of letters in a key', () => {
    const snapshot = readSnapshot(record(`s\n\nChant-Wip-Branch: main\nChant-Wip-Head: ${HEAD}\nChant\rWip-Label: not a label\nCHANT-WIP-BY: github:alex\n`));
    assert.equal(snapshot?.label, null);
    assert.equal(snapshot?.by, 'github:alex');
  });
});

describe('the snapshot fields, one list for the trailers and the memo', () => {
  const full: Snapshot = {
    commit: 'c'.repeat(40), tree: 'b'.repeat(40), branch: 'main', head: HEAD, kind: 'pre-restore', label: 'turn:7', by: 'github:alex',
    unsaved: { count: 3, paths: [{ path: 'big "new"\nline.bin', reason: 'too-large', size: 40_000_000 }, { path: 'vendor/lib', reason: 'submodule' }] },
    at: '2026-10-03T12:00:00.000Z',
  };

  it('names a field of the Snapshot type, in the type\'s key order, for each entry', () => {
    const keys = Object.keys(SnapshotType.properties);
    assert.deepEqual(SNAPSHOT_FIELDS.map((field) => field.name), keys.filter((key) => SNAPSHOT_FIELDS.some((field) => field.name === key)));
    assert.deepEqual(keys, ['commit', 'tree', ...SNAPSHOT_FIELDS.map((field) => field.name), 'at', 'changes'], 'every other key is the commit\'s own, or changes, which a read computes and no memo of chains keeps');
  });

  it('carries every field through the message and through the memo\'s entry', () => {
    const fields = snapshotFields({ branch: full.branch, head: full.head, kind: full.kind, unsaved: full.unsaved as NonNullable<Snapshot['unsaved']> }, { label: full.label, by: full.by });
    assert.match(snapshotMessage(fields), /\nChant-Wip-Unsaved: \{"count":3,"paths":\[\{"path":"big \\"new\\"\\nline\.bin",[^\n]*\}\n$/, 'one trailer, one line, whatever the paths hold');
    assert.deepEqual(readSnapshot({ commit: full.commit, tree: full.tree, parents: [HEAD], committedAt: Date.parse(full.at) / 1000, message: snapshotMessage(fields) }), full);
    const strings: string[] = [];
    const stored = storeSnapshot(full, (value) => strings.push(value) - 1);
    assert.equal(stored.length, STORED_SNAPSHOT_LENGTH);
    const text = (at: unknown) => (typeof at === 'number' ? strings[at] ?? null : null);
    assert.deepEqual(loadSnapshot(full.commit, stored, text), full);
    assert.equal(loadSnapshot(full.commit, stored.slice(1), text), null, 'an entry of another length is not trusted');
  });

  it('takes from a caller exactly the fields SnapshotNotes names, each with its option', () => {
    assert.deepEqual(GIVEN_FIELDS, [{ name: 'label', option: '--label' }, { name: 'by', option: '--by' }]);
    const none = snapshotFields({ branch: 'main', head: HEAD, kind: 'save' }, {});
    assert.deepEqual(none, { branch: 'main', head: HEAD, kind: 'save', label: null, by: null });
  });

  it('reads a snapshot without Chant-Wip-Unsaved as holding everything, and a damaged one as leaving something out', () => {
    const base = `s\n\nChant-Wip-Branch: main\nChant-Wip-Head: ${HEAD}\n`;
    assert.equal('unsaved' in (readSnapshot(record(base)) ?? {}), false);
    assert.deepEqual(readSnapshot(record(`${base}Chant-Wip-Unsaved: {not json\n`))?.unsaved, { count: 1, paths: [] });
    assert.deepEqual(readSnapshot(record(`${base}Chant-Wip-Unsaved: {"count":2,"paths":[{"path":"a","reason":"from-a-later-version"}]}\n`))?.unsaved, { count: 2, paths: [{ path: 'a', reason: 'from-a-later-version' }] });
  });
});

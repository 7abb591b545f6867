import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { hashCache } from '../lib/managers/hash-cache.js';

// The hash cache's file is written again by every save: the lines kept as they were read are
// copied from the file's bytes, the others written from their text. Either way the next save
// must read the same entries as from the text the cache gives.
const FINGERPRINT = 'f'.repeat(64);
const TREE = 'a'.repeat(40);
const ROOT = 'b'.repeat(40);
const oid = (digit: string): string => digit.repeat(40);

/** The entries a cache file's text holds, by path, as a save reads them. */
function entriesOf(text: string): Map<string, string> {
  return new Map([...hashCache(text, FINGERPRINT, null).entries()].map((entry) => [entry.path, `${entry.stat}|${entry.indexOid}|${entry.attributes}|${entry.takenMs}|${entry.oid}`]));
}

function line(path: string, stat: string, taken: number, blob: string): string {
  return `${path}\0${stat}|-|-\0${taken}\0${blob}`;
}

describe('the hash cache written as bytes', () => {
  it('holds the entries its text holds: lines kept copied from the file, lines recorded or changed written anew', () => {
    const lines = ['d/a.txt', 'd/b.txt', 'd/c.txt', 'e/d.txt', 'e/f.txt'].map((path, index) => line(path, `1:${index}:33188:0:5:1000:1000`, 9_000, oid(String(index + 1))));
    const file = Buffer.from(`chant-hash-cache 2 ${FINGERPRINT} ${TREE}\n${lines.join('\n')}\n`, 'latin1');
    const cache = hashCache(file, FINGERPRINT, TREE);
    // Kept out of the file's order, one left out, one changed, one new.
    cache.keep('e/d.txt');
    cache.keep('d/a.txt', oid('1'));
    cache.keep('d/b.txt', oid('9'));
    cache.keep('d/c.txt');
    cache.record('e/f.txt', '1:7:33188:0:6:2000:2000|-|-', 12_000, oid('7'));
    cache.record('g/new.txt', '1:8:33188:0:6:2000:2000|-|-', 12_000, oid('8'));
    const bytes = cache.bytes(ROOT);
    const text = cache.text(ROOT);
    assert.equal(bytes.toString('latin1').split('\n')[0], `chant-hash-cache 2 ${FINGERPRINT} ${ROOT}`);
    assert.deepEqual(entriesOf(bytes.toString('utf8')), entriesOf(text));
    assert.deepEqual([...entriesOf(bytes.toString('utf8')).keys()].sort(), ['d/a.txt', 'd/c.txt', 'e/d.txt', 'e/f.txt', 'g/new.txt']);
    // The lines kept as read first, in the file's order, then the ones written anew.
    const kept = [lines[0], lines[2], lines[3]].map((text) => `${text}\n`).join('');
    const fresh = `${line('e/f.txt', '1:7:33188:0:6:2000:2000', 12_000, oid('7'))}\n${line('g/new.txt', '1:8:33188:0:6:2000:2000', 12_000, oid('8'))}\n`;
    assert.equal(bytes.toString('latin1'), `chant-hash-cache 2 ${FINGERPRINT} ${ROOT}\n${kept}${fresh}`);
  });

  it('writes from the text a file that is not ASCII, and a last line the file holds without its newline', () => {
    const named = line('d/é.txt', '1:1:33188:0:5:1000:1000', 9_000, oid('1'));
    const plain = line('d/plain.txt', '1:2:33188:0:5:1000:1000', 9_000, oid('2'));
    const utf8 = Buffer.from(`chant-hash-cache 2 ${FINGERPRINT} ${TREE}\n${named}\n${plain}\n`, 'utf8');
    const unicode = hashCache(utf8, FINGERPRINT, TREE);
    unicode.keep('d/é.txt');
    unicode.keep('d/plain.txt');
    assert.deepEqual([...entriesOf(unicode.bytes(ROOT).toString('utf8')).keys()], ['d/é.txt', 'd/plain.txt']);
    assert.deepEqual(entriesOf(unicode.bytes(ROOT).toString('utf8')), entriesOf(unicode.text(ROOT)));
    // A file cut after its last line's blob id (no newline): that line is written with one, and
    // the line after it is not glued to it.
    const cut = Buffer.from(`chant-hash-cache 2 ${FINGERPRINT} ${TREE}\n${plain}`, 'latin1');
    const short = hashCache(cut, FINGERPRINT, TREE);
    short.keep('d/plain.txt');
    short.record('d/next.txt', '1:3:33188:0:5:1000:1000|-|-', 9_000, oid('3'));
    const written = short.bytes(ROOT).toString('latin1');
    assert.ok(written.endsWith('\n'));
    assert.deepEqual([...entriesOf(written).keys()].sort(), ['d/next.txt', 'd/plain.txt']);
  });

  it('writes nothing without a fingerprint, as its text', () => {
    const cache = hashCache(Buffer.from(`chant-hash-cache 2 ${FINGERPRINT} ${TREE}\n`, 'latin1'), null, TREE);
    cache.record('a.txt', '1:1:33188:0:5:1000:1000|-|-', 9_000, oid('1'));
    assert.equal(cache.bytes(ROOT).length, 0);
    assert.equal(cache.text(ROOT), '');
  });
});

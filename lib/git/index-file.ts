// Reads the one thing a save needs from an index file that git itself does not print without
// another process: which entries are gitlinks (submodules and embedded repositories), whose
// files a snapshot cannot hold. Read-only, versions 2 to 4 of the format.
import { readFile } from 'node:fs/promises';
import { objectHash } from './object-format.js';

const GITLINK = 0o160000;

/**
 * One gitlink entry of an index.
 * @internal
 */
export interface Gitlink {
  path: string;
  /** The commit it is at. */
  commit: string;
}

/**
 * The gitlink entries of an index file, in index order.
 * @param indexFile - the index file
 * @param objectFormat - `sha1` or `sha256`
 * @returns the entries; empty when there are none, or when the file is missing or not an index
 * @internal
 */
export async function readGitlinks(indexFile: string, objectFormat: string): Promise<Gitlink[]> {
  const data = await readFile(indexFile).catch(() => null);
  return data === null ? [] : parseGitlinks(data, objectHash(objectFormat).bytes);
}

// Runs on every save over every entry of the index (100,000 in a large checkout), so versions 2
// and 3 step from entry to entry by arithmetic on the name length git stores in each entry's
// flags, and decode a name only for a gitlink.
function parseGitlinks(data: Buffer, hashBytes: number): Gitlink[] {
  if (data.length < 12 || data.toString('latin1', 0, 4) !== 'DIRC') return [];
  const version = data.readUInt32BE(4);
  const count = data.readUInt32BE(8);
  if (version < 2 || version > 4) return [];
  const found: Gitlink[] = [];
  const fixed = 40 + hashBytes;
  let offset = 12;
  let previous: Buffer = Buffer.alloc(0);
  for (let entry = 0; entry < count; entry += 1) {
    const start = offset;
    if (start + fixed + 2 > data.length) return found;
    const mode = data.readUInt32BE(start + 24);
    const flags = data.readUInt16BE(start + fixed);
    let nameStart = start + fixed + 2;
    if (version >= 3 && (flags & 0x4000) !== 0) nameStart += 2;
    const gitlink = (mode & 0o170000) === GITLINK;
    if (version === 4) {
      // Prefix compression: drop that many bytes of the previous name, then a NUL-terminated suffix.
      const [strip, after] = readOffsetVarint(data, nameStart);
      const end = data.indexOf(0, after);
      if (end < 0 || strip > previous.length) return found;
      previous = Buffer.concat([previous.subarray(0, previous.length - strip), data.subarray(after, end)]);
      offset = end + 1;
      if (gitlink) found.push({ path: previous.toString('utf8'), commit: data.toString('hex', start + 40, start + 40 + hashBytes) });
      continue;
    }
    // A name of 0xFFF bytes or more is stored with that length and found by its NUL.
    let length = flags & 0xfff;
    if (length === 0xfff) {
      const end = data.indexOf(0, nameStart);
      if (end < 0) return found;
      length = end - nameStart;
    }
    // Entries are padded with 1 to 8 NULs to a multiple of 8 bytes.
    offset = start + ((nameStart - start + length + 8) & ~7);
    if (gitlink) found.push({ path: data.toString('utf8', nameStart, nameStart + length), commit: data.toString('hex', start + 40, start + 40 + hashBytes) });
  }
  return found;
}

/** git's offset varint (varint.c): each continuation adds one before shifting. */
function readOffsetVarint(data: Buffer, at: number): [number, number] {
  let position = at;
  let byte = data[position++] ?? 0;
  let value = byte & 127;
  while ((byte & 128) !== 0) {
    value += 1;
    byte = data[position++] ?? 0;
    value = value * 128 + (byte & 127);
  }
  return [value, position];
}

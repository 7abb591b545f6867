// A commit as git prints it: its headers and message, in one object or in a list of fields.

/** One commit, read with its message. */
export interface CommitRecord {
  commit: string;
  tree: string;
  parents: string[];
  /** Committer time, seconds since the epoch. */
  committedAt: number;
  message: string;
}

/** A commit object as `git cat-file` prints it: headers, a blank line, the message. */
export function parseCommit(commit: string, raw: string): CommitRecord {
  const split = raw.indexOf('\n\n');
  const headers = split < 0 ? raw : raw.slice(0, split);
  const record: CommitRecord = { commit, tree: '', parents: [], committedAt: 0, message: split < 0 ? '' : raw.slice(split + 2) };
  for (const line of headers.split('\n')) {
    if (line.startsWith('tree ')) record.tree = line.slice(5);
    else if (line.startsWith('parent ')) record.parents.push(line.slice(7));
    else if (line.startsWith('committer ')) record.committedAt = Number(/ (\d+) [+-]\d{4}$/.exec(line)?.[1] ?? 0);
  }
  return record;
}

/** A `%P` field: the parents' ids, space-separated. */
export function splitParents(parents: string): string[] {
  return parents.length === 0 ? [] : parents.split(' ');
}

/** What a commit object is built from: its tree, parents, the two idents with their dates, and the message. */
export interface CommitFields {
  tree: string;
  parents: readonly string[];
  /** `Name <email>` as git wrote it, raw bytes. */
  author: Buffer;
  committer: Buffer;
  /** Seconds since the epoch, for both dates, recorded at +0000. */
  seconds: number;
  /** The message as UTF-8 bytes. */
  message: Buffer;
}

/**
 * A commit object's content as `git commit-tree` writes it for these fields with both dates
 * given as `@<seconds> +0000`, unsigned and with no encoding header (the message is UTF-8).
 */
export function commitContent(fields: CommitFields): Buffer {
  const dated = (name: string, ident: Buffer): Buffer[] => [Buffer.from(`${name} `, 'latin1'), ident, Buffer.from(` ${fields.seconds} +0000\n`, 'latin1')];
  return Buffer.concat([
    Buffer.from(`tree ${fields.tree}\n${fields.parents.map((parent) => `parent ${parent}\n`).join('')}`, 'latin1'),
    ...dated('author', fields.author),
    ...dated('committer', fields.committer),
    Buffer.from('\n', 'latin1'),
    fields.message,
  ]);
}

/**
 * The author and committer idents of a commit object (`Name <email>`, their dates left off),
 * raw; null when it has not exactly one of each.
 */
export function commitIdents(content: Buffer): { author: Buffer; committer: Buffer } | null {
  const end = content.indexOf('\n\n');
  const headers = (end < 0 ? content : content.subarray(0, end)).toString('latin1').split('\n');
  const take = (name: string): Buffer | null => {
    const lines = headers.filter((line) => line.startsWith(`${name} `));
    const match = lines.length === 1 ? /^(.*>) \d+ [+-]\d{4}$/.exec((lines[0] as string).slice(name.length + 1)) : null;
    return match === null ? null : Buffer.from(match[1] as string, 'latin1');
  };
  const author = take('author');
  const committer = take('committer');
  return author === null || committer === null ? null : { author, committer };
}

/**
 * Whether git keeps these bytes as they are in a UTF-8 commit message: it rewrites, as if they
 * were Latin-1, any byte of a sequence that is not UTF-8, overlong, a surrogate, above
 * U+10FFFF, or a noncharacter (U+FDD0 to U+FDEF, U+xxFFFE, U+xxFFFF), as its
 * `find_invalid_utf8` says.
 */
export function keptAsUtf8(bytes: Uint8Array): boolean {
  for (let i = 0; i < bytes.length;) {
    const c = bytes[i] as number;
    if (c < 0x80) {
      i += 1;
      continue;
    }
    let length: number;
    let codepoint: number;
    let min: number;
    if ((c & 0xe0) === 0xc0) [length, codepoint, min] = [2, c & 0x1f, 0x80];
    else if ((c & 0xf0) === 0xe0) [length, codepoint, min] = [3, c & 0x0f, 0x800];
    else if ((c & 0xf8) === 0xf0) [length, codepoint, min] = [4, c & 0x07, 0x10000];
    else return false;
    if (i + length > bytes.length) return false;
    for (let k = 1; k < length; k += 1) {
      const next = bytes[i + k] as number;
      if ((next & 0xc0) !== 0x80) return false;
      codepoint = (codepoint << 6) | (next & 0x3f);
    }
    if (codepoint < min || codepoint > 0x10ffff) return false;
    if ((codepoint & 0x1ff800) === 0xd800) return false;
    if ((codepoint & 0xfffe) === 0xfffe) return false;
    if (codepoint >= 0xfdd0 && codepoint <= 0xfdef) return false;
    i += length;
  }
  return true;
}

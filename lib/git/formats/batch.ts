// `git cat-file --batch` output: a header per name asked, then each object's content.

/** One object as `git cat-file --batch` prints it. */
export interface GitObject {
  oid: string;
  /** `blob`, `tree`, `commit` or `tag`. */
  type: string;
  content: Buffer;
}

/**
 * `cat-file --batch` output for `count` names: for each, a header (`<id> <type> <size>`, or the
 * name and `missing`), then for an object its content and a newline.
 */
export function parseBatch(out: Buffer, count: number): Array<GitObject | null> | null {
  const objects: Array<GitObject | null> = [];
  let offset = 0;
  while (objects.length < count) {
    const newline = out.indexOf(10, offset);
    if (newline < 0) return null;
    const header = /^([0-9a-f]{40,64}) ([a-z]+) (\d+)$/.exec(out.toString('latin1', offset, newline));
    offset = newline + 1;
    if (header === null) {
      objects.push(null);
      continue;
    }
    const size = Number(header[3]);
    if (offset + size > out.length) return null;
    objects.push({ oid: header[1] as string, type: header[2] as string, content: out.subarray(offset, offset + size) });
    offset += size + 1;
  }
  return objects;
}

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

// git diff-tree reads the whole index before it diffs, only to look up attributes there (for a
// bare repository's sake): at 100,000 files that read is most of a diff of two trees 10 files
// apart (211 ms with it, 62 ms without, on a loaded machine). Pointed at an index file that does not exist, git reads an empty
// one and takes attributes from the working tree's .gitattributes files alone, as
// `git diff <a> <b>` does; a raw diff (no line counts) uses no attributes at all.
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The environment of a git call that needs no index: GIT_INDEX_FILE naming a file in a folder
 * that does not exist, a new random name each call, so nobody can place an index there.
 */
export function withoutIndex(): { GIT_INDEX_FILE: string } {
  return { GIT_INDEX_FILE: join(tmpdir(), `chant-wip-no-index-${randomBytes(16).toString('hex')}`, 'index') };
}

// Where `git add` and `git hash-object` store different bytes for the same file: with automatic
// line-ending conversion (`text=auto`, an `eol` without `text`, `core.autocrlf`), git add leaves
// a file's CRLFs alone when the blob the index holds for it has a CR (convert.c,
// has_crlf_in_index), and hash-object, which never reads the index, converts them. A save that
// hashes with hash-object asks this first.
import { join } from 'node:path';
import { configOrAttributesMention, fileMentions } from './config-files.js';

/**
 * What in a configuration's text may turn conversion on, or make git read a file not looked at
 * here: `core.autocrlf`, `core.attributesFile`, an include, the `[attr]` section of later gits
 * (`attr.tree`).
 */
const AUTO_CONFIG = /autocrlf|attributesfile|include|\[attr|attr\.tree/i;

/** What in an attributes file's text may ask for automatic conversion (`text=auto`, `eol`, the old `crlf`, a macro). */
const AUTO_ATTRIBUTES = /auto|eol|crlf|\[attr\]/i;

/**
 * Whether git may convert line endings automatically for a file under `folders` of the working
 * tree (paths from the top, `''` for it): a configuration git reads (system, global, the
 * repository's, the worktree's, or given in the environment) mentions `autocrlf`, or names a
 * file read from elsewhere, or an attributes file (the repository's `info/attributes`, the
 * global and system ones, each folder's `.gitattributes`) may ask for it; a file that exists but
 * cannot be read says yes too. A yes is only a maybe: the caller then looks at the index's blobs.
 * @param dirs - the git directory every worktree shares, and this worktree's
 * @param top - the working tree's top folder
 * @param folders - the folders whose `.gitattributes` apply
 * @param ambient - the environment chant runs in
 * @internal
 */
export function mayConvertAutomatically(dirs: { commonDir: string; gitDir: string }, top: string, folders: Iterable<string>, ambient: Readonly<Record<string, string | undefined>> = process.env): boolean {
  if (configOrAttributesMention(dirs, AUTO_CONFIG, AUTO_ATTRIBUTES, ambient)) return true;
  for (const folder of folders) {
    if (fileMentions(join(top, folder, '.gitattributes'), AUTO_ATTRIBUTES)) return true;
  }
  return false;
}

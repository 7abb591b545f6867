// Where `git add` and `git hash-object` store different bytes for the same file: with automatic
// line-ending conversion (`text=auto`, an `eol` without `text`, `core.autocrlf`), git add leaves
// a file's CRLFs alone when the blob the index holds for it has a CR (convert.c,
// has_crlf_in_index), and hash-object, which never reads the index, converts them. A save that
// hashes with hash-object asks this first.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { configFiles, xdgConfigHome } from './config-files.js';
import { gitEnvironment } from './runner.js';

/**
 * What in a configuration's text may turn conversion on, or make git read a file not looked at
 * here: `core.autocrlf`, `core.attributesFile`, an include, the `[attr]` section of later gits
 * (`attr.tree`).
 */
const AUTO_CONFIG = /autocrlf|attributesfile|include|\[attr/i;

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
  const env = gitEnvironment({}, ambient);
  for (const [name, value] of Object.entries(env)) {
    if (name.startsWith('GIT_CONFIG') && AUTO_CONFIG.test(value)) return true;
  }
  const mentions = (file: string, pattern: RegExp): boolean => {
    try {
      return pattern.test(readFileSync(file, 'latin1'));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      return code !== 'ENOENT' && code !== 'ENOTDIR';
    }
  };
  if (configFiles(dirs, env).some((file) => mentions(file, AUTO_CONFIG))) return true;
  // git runs with the system's attributes: GIT_ATTR_NOSYSTEM is not passed on (lib/git/runner.ts).
  const shared = [join(dirs.commonDir, 'info', 'attributes'), join(xdgConfigHome(env), 'git', 'attributes'), '/etc/gitattributes', '/usr/local/etc/gitattributes', '/opt/homebrew/etc/gitattributes'];
  if (shared.some((file) => mentions(file, AUTO_ATTRIBUTES))) return true;
  for (const folder of folders) {
    if (mentions(join(top, folder, '.gitattributes'), AUTO_ATTRIBUTES)) return true;
  }
  return false;
}

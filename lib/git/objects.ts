import { asWipError } from '../errors.js';
import type { GitRunner, GitRunOptions } from './runner.js';

/**
 * The refs that name a repository's base, in the order they are tried.
 * @public
 */
export const BASE_REFS = ['refs/remotes/origin/HEAD', 'refs/heads/main', 'refs/heads/master'] as const;

/**
 * The commit a repository's base names.
 * @public
 */
export interface BaseCommit {
  /** The ref it was found through, in full (`refs/heads/main`). */
  ref: string;
  /** The commit. */
  commit: string;
}

async function run(git: GitRunner, cwd: string, args: readonly string[], options: GitRunOptions = {}): Promise<string> {
  try {
    return (await git.run(args, { cwd, ...options })).stdout;
  } catch (error) {
    throw asWipError(error);
  }
}

/**
 * The base: the first of {@link BASE_REFS} that resolves to a commit, read in one git call
 * (`origin/HEAD` is a symbolic ref, and `%(objectname)` names what it points at).
 * @param git - how git is run
 * @param cwd - a folder of the checkout
 * @returns the ref and its commit, or null when none of them names a commit
 * @throws {@link WipError} `git-failed` when git fails
 * @public
 */
export async function resolveBase(git: GitRunner, cwd: string): Promise<BaseCommit | null> {
  const out = await run(git, cwd, ['for-each-ref', '--format=%(refname)%00%(objectname)%00%(objecttype)', '--end-of-options', ...BASE_REFS]);
  const commits = new Map<string, string>();
  for (const line of out.split('\n')) {
    const [ref, oid, type] = line.split('\0');
    // A pattern also matches refs below it (refs/heads/main/x); only the exact names count.
    if (ref !== undefined && oid !== undefined && type === 'commit') commits.set(ref, oid);
  }
  for (const ref of BASE_REFS) {
    const commit = commits.get(ref);
    if (commit !== undefined) return { ref, commit };
  }
  return null;
}

/**
 * Which of some paths are files in a commit's tree, in one git call.
 * @param git - how git is run
 * @param cwd - a folder of the checkout
 * @param commit - the commit, by object id
 * @param paths - repository-relative paths with `/` separators
 * @returns the blob id of each path that names a file there; paths holding a newline are never found
 * @throws {@link WipError} `git-failed` when git fails
 * @public
 */
export async function findBlobs(git: GitRunner, cwd: string, commit: string, paths: readonly string[]): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  // One object name a line: a path with a newline cannot be asked for, and is taken as absent.
  const asked = paths.filter((path) => path.length > 0 && !/[\n\r\0]/.test(path));
  if (asked.length === 0) return found;
  const input = asked.map((path) => `${commit}:${path}\n`).join('');
  const out = await run(git, cwd, ['cat-file', '--batch-check=%(objectname) %(objecttype)'], { input });
  const lines = out.split('\n');
  for (const [index, path] of asked.entries()) {
    const line = lines[index] ?? '';
    // Absent paths echo the name asked for then "missing"; found ones are exactly "<oid> <type>".
    const match = /^([0-9a-f]{40,64}) blob$/.exec(line);
    if (match !== null) found.set(path, match[1] as string);
  }
  return found;
}

/**
 * The content of a blob, as UTF-8 text.
 * @param git - how git is run
 * @param cwd - a folder of the checkout
 * @param oid - the blob's object id
 * @returns its content
 * @throws {@link WipError} `git-failed` when git fails
 * @public
 */
export async function readBlob(git: GitRunner, cwd: string, oid: string): Promise<string> {
  return run(git, cwd, ['cat-file', 'blob', '--end-of-options', oid]);
}

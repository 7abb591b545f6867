// What a user would pick instead of chant, each doing a save's work (the whole working tree,
// ignored files left out, as a commit on a ref, the checkout's index never written) or a
// restore's, in the same loop as chant: libgit2 in-process (es-git's binding), isomorphic-git,
// git stash. Dev dependencies of the bench alone; nothing in lib/ imports them.
import { createRequire } from 'node:module';
import * as fs from 'node:fs';
import { basename, join } from 'node:path';
import { ENV, git, run } from './harness.mjs';

const require = createRequire(import.meta.url);
const SIGNATURE = { name: 'Bench', email: 'bench@example.com' };

/**
 * The package holding libgit2's binding for es-git 0.6.0 on Linux x64 with glibc. The bench
 * depends on it rather than on `es-git`, whose loader is the only thing it adds: `es-git` lists
 * an optional package for every platform, and a lock that lacks one the registry lacks is
 * refused by `npm ci`. (0.7.0's prebuilt binary needs glibc 2.38.)
 */
export const ES_GIT_BINDING = 'es-git-linux-x64-gnu';

const bindings = new Map();

/**
 * es-git's native binding, loaded from its platform package: `{binding}`, or `{reason}` when it
 * cannot load here (another platform, an older glibc, the package not installed), so the rows
 * that need it are skipped with that reason and the others run.
 */
export function loadEsGit(name = ES_GIT_BINDING) {
  if (!bindings.has(name)) {
    try {
      const binding = require(name);
      if (typeof binding.openRepository !== 'function') throw new Error(`${name} has no openRepository`);
      bindings.set(name, { binding });
    } catch (error) {
      const message = (error instanceof Error ? error.message : String(error)).split('\n')[0];
      bindings.set(name, { reason: `${name} cannot load here: ${message}` });
    }
  }
  return bindings.get(name);
}

/**
 * libgit2 in-process, the approach dura and git-wip take: the checkout's index read, every
 * file added to it in memory (`addAll`, then `updateAll` for deletions), the tree written, a
 * commit on `refs/bench/es-git`. The index is never written back. One repository handle for
 * the loop, as an app holding it open would have.
 */
export async function esGit(dir, name = ES_GIT_BINDING) {
  const { binding, reason } = loadEsGit(name);
  if (binding === undefined) throw new Error(reason);
  const { openRepository } = binding;
  const repo = await openRepository(dir);
  const ref = 'refs/bench/es-git';
  const tip = () => {
    try {
      return repo.revparseSingle(ref);
    } catch {
      return null;
    }
  };
  /** The tree of the working tree, written; its id. */
  const writeTree = () => {
    const index = repo.index();
    index.read(true);
    index.addAll(['*']);
    index.updateAll(['*']);
    return index.writeTree();
  };
  const save = () => {
    const tree = repo.getTree(writeTree());
    const head = repo.revparseSingle('HEAD');
    const old = tip();
    return repo.commit(tree, 'bench wip\n', { updateRef: ref, parents: old === null ? [head] : [old, head], author: SIGNATURE, committer: SIGNATURE });
  };
  return {
    writeTree,
    save,
    /** A checkpoint as `save`, then the target commit's tree checked out over the working tree (forced), the index left as it is. */
    restore(target) {
      save();
      const tree = repo.getTree(repo.getCommit(target).treeId());
      repo.checkoutTree(repo.getObject(tree.id()), { force: true, removeUntracked: true, updateIndex: false });
    },
  };
}

/**
 * isomorphic-git: HEAD's tree and the working tree walked side by side, each file's id taken
 * from the index's stat data when it matches (isomorphic-git's own cache) and hashed when not,
 * a blob written for what differs from HEAD, every folder's tree written, a commit on
 * `refs/bench/isomorphic-git`.
 */
export async function isomorphicGit(dir) {
  const iso = require('isomorphic-git');
  const cache = {};
  // Its index is kept in memory (in `cache`), never written back: written, it would hold every
  // file's mtime and ctime with the nanoseconds rounded (through a double) and no cache tree, so
  // libgit2, which compares nanoseconds, would hash every file again on the next turn, and git
  // would rebuild every tree.
  const indexFile = join(dir, '.git', 'index');
  const guarded = { promises: { ...fs.promises, writeFile: (file, ...rest) => (file === indexFile ? Promise.resolve() : fs.promises.writeFile(file, ...rest)) } };
  const ref = 'refs/bench/isomorphic-git';
  const writeTree = async () => {
    const root = await iso.walk({
      fs: guarded, dir, cache,
      trees: [iso.TREE({ ref: 'HEAD' }), iso.WORKDIR()],
      map: async (path, [head, work]) => {
        if (path === '.') return { type: 'tree', path };
        if (work === null || path === '.git') return null;
        if (head === null && await iso.isIgnored({ fs, dir, filepath: path })) return null;
        const type = await work.type();
        if (type === 'tree') return { type: 'tree', path };
        if (type !== 'blob') return null;
        const oid = await work.oid();
        if (head === null || (await head.type()) !== 'blob' || (await head.oid()) !== oid) await iso.writeBlob({ fs, dir, blob: await work.content() });
        return { type: 'blob', path, mode: (await work.mode()).toString(8), oid };
      },
      reduce: async (parent, children) => {
        if (parent === undefined || parent === null) return null;
        if (parent.type !== 'tree') return parent;
        const entries = children.filter((child) => child !== null && child !== undefined)
          .map((child) => ({ mode: child.type === 'tree' ? '40000' : child.mode, path: basename(child.path), oid: child.oid, type: child.type }));
        if (entries.length === 0 && parent.path !== '.') return null;
        return { type: 'tree', path: parent.path, oid: await iso.writeTree({ fs, dir, tree: entries }) };
      },
    });
    return root.oid;
  };
  return {
    writeTree,
    async save() {
      const tree = await writeTree();
      const head = await iso.resolveRef({ fs, dir, ref: 'HEAD' });
      const old = await iso.resolveRef({ fs, dir, ref }).catch(() => null);
      const author = { ...SIGNATURE, timestamp: Math.floor(Date.now() / 1000), timezoneOffset: 0 };
      const commit = await iso.writeCommit({ fs, dir, commit: { message: 'bench wip\n', tree, parent: old === null ? [head] : [old, head], author, committer: author } });
      await iso.writeRef({ fs, dir, ref, value: commit, force: true });
      return commit;
    },
  };
}

/**
 * `git stash create` (tracked files only: what git's own stash keeps without -u, untracked files
 * left out) and its commit kept on a ref; the working tree and the index untouched.
 */
export function stashCreate(dir) {
  return run('sh', ['-c', 'c=$(git stash create "bench wip") && git update-ref refs/bench/stash "$c"'], { cwd: dir, env: ENV }).ms;
}

/** The tree `git add --all` gives for the working tree, through a temporary index: the answer every builder must give. */
export function addAllTree(dir) {
  const gitDir = git(dir, 'rev-parse', '--absolute-git-dir').trim();
  const index = `${gitDir}/bench-check.index`;
  fs.copyFileSync(`${gitDir}/index`, index);
  try {
    const env = { ...ENV, GIT_INDEX_FILE: index };
    run('git', ['add', '--all'], { cwd: dir, env });
    return run('git', ['write-tree'], { cwd: dir, env }).stdout.trim();
  } finally {
    fs.rmSync(index, { force: true });
  }
}

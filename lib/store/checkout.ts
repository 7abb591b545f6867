// The checkout as a write finds it: the branch HEAD is on, its commit, and the tip of its wip
// ref; and the snapshot a restore puts back.
import type { Snapshot } from '../documents/snapshot.js';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isWipError, WipError } from '../errors.js';
import { packedRefTarget, readIfThere } from '../git/checkout-files.js';
import { parseCommit } from '../git/formats/commit.js';
import type { CommitRecord } from '../git/formats/commit.js';
import { readCheckedLoose } from '../git/loose-objects.js';
import { repairBrokenRefs } from '../git/ref-repair.js';
import { objectHash } from '../git/formats/object-format.js';
import type { Plumbing, RefRecord, RepositoryLayout } from '../git/plumbing.js';
import { ASIDE_REF_PREFIX, readSnapshot, wipRef } from '../snapshot/format.js';

/** The checked-out branch as a write works on it. */
export interface BranchCheckout {
  layout: RepositoryLayout;
  branch: string;
  head: string;
  ref: string;
  tip: RefRecord | null;
}

/** What {@link Plumbing.checkout} read, as far as a write needs it. */
type Opened = { layout: RepositoryLayout; headRef: string | null; head: string | null; replaced?: boolean };

/**
 * The checkout around the working directory, as git finds it from there. chant never hands
 * git the caller's `GIT_DIR` or `GIT_WORK_TREE` (its git calls run in an environment of their
 * own), so when either is set and names another repository than the one found from the
 * working directory, or none is found, the write or read is refused as `not-a-git-repository`
 * naming the variables, rather than run on another repository than the caller meant. Set as a
 * hook sets them, to the repository found anyway, they change nothing.
 */
export async function openCheckout(plumbing: Plumbing, cwd: string, env: Readonly<Record<string, string | undefined>>): Promise<Awaited<ReturnType<Plumbing['checkout']>>> {
  const named = (['GIT_DIR', 'GIT_WORK_TREE'] as const).filter((name) => (env[name] ?? '') !== '');
  if (named.length === 0) return objectsFound(plumbing, reachable(cwd, await plumbing.checkout()), env);
  const variables = named.map((name) => `${name}=${env[name] as string}`).join(' and ');
  const refuse = (why: string, cause?: unknown) => new WipError('not-a-git-repository',
    `${variables} ${named.length > 1 ? 'are' : 'is'} set, and chant finds the repository from the working directory only: ${why}. Run it from inside the checkout (a bare repository with a separate work tree: git --git-dir=<dir> worktree add <folder> <branch>, then work there)`,
    cause === undefined ? {} : { cause });
  let opened: Awaited<ReturnType<Plumbing['checkout']>>;
  try {
    opened = await plumbing.checkout();
  } catch (error) {
    if (isWipError(error, 'not-a-git-repository')) throw refuse(`${cwd} is not inside a checkout git finds without them`, error);
    throw error;
  }
  const same = (value: string | undefined, actual: string) => value === undefined || value === '' || realpathOr(resolve(cwd, value)) === realpathOr(actual);
  if (!same(env.GIT_DIR, opened.layout.gitDir) || !same(env.GIT_WORK_TREE, opened.layout.top)) {
    throw refuse(`the checkout around ${cwd} is ${opened.layout.top} (git directory ${opened.layout.gitDir}), another than they name`);
  }
  return objectsFound(plumbing, reachable(cwd, opened), env);
}

/**
 * The checkout, where git finds HEAD's commit without the caller's `GIT_ALTERNATE_OBJECT_DIRECTORIES`
 * or `GIT_OBJECT_DIRECTORY`, which chant never hands git either (an object store a hook's
 * quarantine names may be gone tomorrow, and git writes no object it finds there: a snapshot
 * would name objects of another store). Where either is set and HEAD's commit is found only
 * through it, every git call failed halfway as `git-failed` ("bad object HEAD"): refused before
 * anything is run, naming the variable and the alternates file that lends the folder for good.
 * Asked of git (one process) only when one is set.
 */
async function objectsFound<T extends Opened>(plumbing: Plumbing, opened: T, env: Readonly<Record<string, string | undefined>>): Promise<T> {
  const named = (['GIT_ALTERNATE_OBJECT_DIRECTORIES', 'GIT_OBJECT_DIRECTORY'] as const).filter((name) => (env[name] ?? '') !== '');
  if (named.length === 0 || opened.head === null) return opened;
  if ((await plumbing.objectInfo([opened.head])).get(opened.head)?.type === 'commit') return opened;
  const variables = named.map((name) => `${name}=${env[name] as string}`).join(' and ');
  const alternates = join(opened.layout.objectsDir, 'info', 'alternates');
  throw new WipError('git-failed', `${variables} ${named.length > 1 ? 'are' : 'is'} set, and chant runs git without ${named.length > 1 ? 'them' : 'it'}: HEAD's commit ${opened.head} is not in the repository's own objects, nor in those its alternates file lends, so nothing was run. Name the folder in ${alternates} (one line each), as git clone --shared does`);
}

/**
 * The checkout, where git finds it again from its work tree, where chant runs git: a git
 * directory whose `core.worktree` names a folder that holds no `.git` is found only from inside
 * that git directory, and every git call from the work tree then failed as `git-failed` halfway
 * (a save's `git status`). Refused as `not-a-git-repository` before anything is run, saying how
 * to join the two.
 */
function reachable<T extends Opened>(cwd: string, opened: T): T {
  const { top, gitDir } = opened.layout;
  if (existsSync(join(top, '.git'))) return opened;
  throw new WipError('not-a-git-repository', `${cwd} is in the git directory ${gitDir}, whose work tree ${top} (its core.worktree) holds no .git, and chant runs git from the work tree, where git finds no repository. Join them with a .git file in the work tree (echo "gitdir: ${gitDir}" > "${join(top, '.git')}"), or use git --git-dir=<dir> worktree add <folder> <branch>`);
}

/** The checked-out branch, its commit and its wip tip; `wip-no-branch` for a detached HEAD or an unborn branch. */
export async function checkoutOf(plumbing: Plumbing, opened: Opened): Promise<BranchCheckout> {
  const checkout = branchOf(opened);
  await repairBrokenRefs(plumbing, checkout.layout, [checkout.ref]);
  checkout.tip = await readTip(plumbing, checkout.ref, opened.replaced === false ? checkout.layout : null);
  return checkout;
}

/**
 * The tip of a wip ref, read in full, or null when the ref does not exist. Given the layout of a
 * repository with no replace refs, a tip that is a loose ref naming a loose commit (what a save
 * leaves), or no ref at all, is read without a process; anything else is read by git.
 */
export async function readTip(plumbing: Plumbing, ref: string, layout: RepositoryLayout | null = null): Promise<RefRecord | null> {
  const known = layout === null ? undefined : tipFromFiles(layout, ref);
  if (known !== undefined) return known;
  return (await plumbing.readRefs([ref])).find((record) => record.ref === ref) ?? null;
}

/**
 * A wip ref's tip from the ref files and the commit's loose object, checked against its id: its
 * loose ref file (which wins over packed-refs in git too), else its line in packed-refs, else
 * null when neither names it. Undefined when the answer is git's to give: a reftable repository,
 * a shallow one or one with grafts, a symbolic ref, a commit that is not loose. A stale read is
 * no harm, since every write of the ref is a compare-and-swap on the tip read. Saves one git
 * process (for-each-ref) of a save or a restore: about 10 ms of the 50 to 60 ms a save of 1,000
 * files costs.
 * @internal
 */
export function tipFromFiles(layout: RepositoryLayout, ref: string): RefRecord | null | undefined {
  // A reftable repository keeps no ref files; grafts and a shallow boundary change the parents git reads.
  if (['reftable', 'shallow', join('info', 'grafts')].some((name) => existsSync(join(layout.commonDir, name)))) return undefined;
  let oid: string;
  const loose = readIfThere(join(layout.commonDir, ref));
  if (loose === undefined) return undefined;
  if (loose !== null) {
    oid = loose.endsWith('\n') ? loose.slice(0, -1) : loose;
  } else {
    const packed = readIfThere(join(layout.commonDir, 'packed-refs'));
    if (packed === undefined) return undefined;
    if (packed === null) return null;
    // packed-refs is read one character a byte: the name is looked for as its UTF-8 bytes.
    const named = packedRefTarget(packed, Buffer.from(ref, 'utf8').toString('latin1'));
    if (named === undefined) return undefined;
    if (named === null) return null;
    oid = named;
  }
  const commit = looseCommit(layout, oid, false);
  return commit === null ? undefined : { ref, ...commit };
}

/** The checked-out branch and its commit, its wip tip not read yet; `wip-no-branch` as {@link checkoutOf}. */
export function branchOf(opened: Opened): BranchCheckout {
  const { layout, headRef, head } = opened;
  if (headRef === null || !headRef.startsWith('refs/heads/')) {
    throw new WipError('wip-no-branch', operationInProgress(opened.layout.gitDir) ?? 'HEAD is detached: check out a branch first, since snapshots are kept per branch');
  }
  const branch = headRef.slice('refs/heads/'.length);
  const ref = wipRef(branch);
  if (head === null) {
    throw new WipError('wip-no-branch', `branch ${branch} has no commit yet: commit once first, since a snapshot's last parent is the commit HEAD names`);
  }
  return { layout, branch, head, ref, tip: null };
}

/**
 * The snapshot a restore puts back, with its commit: the newest of kind `save` on the branch
 * when none is named (a checkpoint is restored by naming it), else the named one.
 */
export async function restoreTarget(plumbing: Plumbing, checkout: BranchCheckout, name: string | null, replaced = true): Promise<{ snapshot: Snapshot; record: CommitRecord }> {
  if (name === null) {
    const tip = checkout.tip;
    const snapshot = tip === null ? null : readSnapshot(tip);
    if (tip === null || snapshot === null) throw new WipError('wip-none', `branch ${checkout.branch} has no snapshot: ${checkout.ref} does not exist${await asideHint(plumbing, checkout.branch)}`);
    if (snapshot.kind === 'save') return { snapshot: sameBranch(checkout, snapshot), record: tip };
    // After a restore its checkpoint is the tip, and on a replacement box it holds the clean
    // clone: the work is the newest save down the chain.
    let found: { snapshot: Snapshot; record: CommitRecord } | null = null;
    await plumbing.readFirstParentChains([tip.commit], (record) => {
      const link = readSnapshot(record);
      if (link === null) return null;
      if (link.kind === 'save') {
        found = { snapshot: link, record };
        return null;
      }
      return record.parents.length > 1 ? (record.parents[0] as string) : null;
    });
    if (found === null) {
      throw new WipError('wip-none', `branch ${checkout.branch} has no snapshot of kind save, only checkpoints a restore took: name one to restore it`);
    }
    const chosen = found as { snapshot: Snapshot; record: CommitRecord };
    return { snapshot: sameBranch(checkout, chosen.snapshot), record: chosen.record };
  }
  const commit = looseCommit(checkout.layout, name, replaced) ?? await plumbing.readNamedCommit(name);
  const oid = commit?.commit ?? null;
  const snapshot = commit === null ? null : readSnapshot(commit);
  if (commit === null || snapshot === null) {
    throw new WipError('wip-snapshot-unknown', oid === null
      ? `${JSON.stringify(name)} names no commit git can resolve`
      : `${JSON.stringify(name)} names commit ${oid}, which is not a snapshot chant took (it has no Chant-Wip-Branch and Chant-Wip-Head trailers)`);
  }
  return { snapshot: sameBranch(checkout, snapshot), record: commit };
}

/**
 * Where the branch's snapshots are when its own ref holds none: chains moved aside whose tips
 * name the branch (a replacement box fetches them so when the remote held another box's chain in
 * the way of the branch's name), newest first; read only on the way to refusing.
 */
async function asideHint(plumbing: Plumbing, branch: string): Promise<string> {
  let chains: Array<{ ref: string; commit: string; at: string }>;
  try {
    chains = (await plumbing.readRefs([ASIDE_REF_PREFIX]))
      .map((tip) => ({ ref: tip.ref, commit: tip.commit, snapshot: readSnapshot(tip) }))
      .filter((tip) => tip.snapshot?.branch === branch)
      .map((tip) => ({ ref: tip.ref, commit: tip.commit, at: tip.snapshot?.at ?? '' }))
      .sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0));
  } catch {
    return '';
  }
  const newest = chains[0];
  if (newest === undefined) return '';
  const others = chains.length === 1 ? 'a chain moved aside holds snapshots of it' : `${chains.length} chains moved aside hold snapshots of it`;
  return `; ${others}, the newest at ${newest.ref}: name one to restore it (wip restore ${newest.commit})`;
}

/**
 * The commit a full object id names, read from its loose file without a process (chant writes a
 * snapshot's commit loose), its bytes checked against the id; null when it is not there loose as
 * a commit, or when a replace ref may stand for it (git would follow it): git is asked then.
 */
function looseCommit(layout: RepositoryLayout, name: string, replaced: boolean): CommitRecord | null {
  if (replaced || name.length !== objectHash(layout.objectFormat).bytes * 2 || !/^[0-9a-f]+$/.test(name)) return null;
  const content = readCheckedLoose(layout.objectsDir, name, 'commit', layout.objectFormat);
  return content === null ? null : parseCommit(name, content.toString('utf8'));
}

function sameBranch(checkout: BranchCheckout, snapshot: Snapshot): Snapshot {
  if (snapshot.branch !== checkout.branch) {
    // A branch renamed or deleted since: checking it out is no advice, there is none to check out.
    const advice = branchExists(checkout.layout, snapshot.branch)
      ? 'check that branch out to restore it'
      : `that branch no longer exists (renamed or deleted?): make it again where the snapshot's HEAD was (git switch -c ${snapshot.branch} ${snapshot.head}) to restore it, or read its files with git show ${snapshot.commit.slice(0, 12)}:<path>`;
    throw new WipError('wip-branch-other', `snapshot ${snapshot.commit} was taken on branch ${snapshot.branch}, not on ${checkout.branch}: ${advice}`);
  }
  return snapshot;
}

/** Whether refs/heads/<branch> is there, loose or packed; true where that cannot be read (the advice is then the usual one). */
function branchExists(layout: RepositoryLayout, branch: string): boolean {
  const ref = `refs/heads/${branch}`;
  if (readIfThere(join(layout.commonDir, ref)) !== null) return true;
  const packed = readIfThere(join(layout.commonDir, 'packed-refs'));
  return packed === undefined || (packed !== null && packedRefTarget(packed, ref) !== null);
}

/** A path with its symbolic links resolved, or as it is when it does not exist. */
function realpathOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * What a detached HEAD is in the middle of, said so that the advice keeps it going: a rebase
 * (of which branch), a bisect (started on which branch), a cherry-pick, revert or merge. Null
 * when none is in progress. Read only when a save or restore is refused for a detached HEAD.
 */
function operationInProgress(gitDir: string): string | null {
  const read = (name: string): string | null => {
    try {
      return readFileSync(join(gitDir, name), 'utf8').trim();
    } catch {
      return null;
    }
  };
  const kept = 'snapshots are kept per branch, and HEAD is detached while it runs, so save once it has ended';
  const rebased = read('rebase-merge/head-name') ?? read('rebase-apply/head-name');
  if (rebased !== null) {
    const branch = rebased.startsWith('refs/heads/') ? rebased.slice('refs/heads/'.length) : rebased;
    return `a rebase of ${branch} is in progress: ${kept}. Resolve what it stopped on and go on with git rebase --continue; the working tree stays as it is until then`;
  }
  const bisected = read('BISECT_START');
  if (bisected !== null) {
    return `a bisect started on ${bisected} is in progress: ${kept}. Go on marking commits with git bisect good or git bisect bad`;
  }
  for (const [file, what, next] of [['CHERRY_PICK_HEAD', 'cherry-pick', 'git cherry-pick --continue'], ['REVERT_HEAD', 'revert', 'git revert --continue'], ['MERGE_HEAD', 'merge', 'git commit']] as const) {
    if (read(file) !== null) return `a ${what} is in progress on a detached HEAD: ${kept}. Resolve it and go on with ${next}`;
  }
  return null;
}

import { randomBytes } from 'node:crypto';
import { linkSync, rmSync, statSync } from 'node:fs';
import { copyFile, lstat, readdir, rm, stat, statfs, utimes } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { Snapshot, SnapshotKind } from '../documents/snapshot.js';
import type { BranchSnapshots, ListResult } from '../documents/wip-read.js';
import type { RestoreResult, SaveResult } from '../documents/wip-write.js';
import { WipError } from '../errors.js';
import { indexHoldsTree, readGitlinks } from '../git/formats/index-file.js';
import type { Gitlink } from '../git/formats/index-file.js';
import { Plumbing } from '../git/plumbing.js';
import type { RefRecord, RepositoryLayout, TreeChange } from '../git/plumbing.js';
import { SimpleGitRunner } from '../git/runner.js';
import type { GitRunner } from '../git/runner.js';
import { checkPrincipal } from '../workspace/identity.js';
import { processAlive, withWorktreeLock } from '../managers/lock.js';
import { compareBytes } from '../order.js';
import { Policy } from '../replication/policy.js';
import { Replicator } from '../replication/replicator.js';
import { chainLink, readSnapshot, snapshotChain, snapshotMessage, walkChain, WIP_REF_PREFIX, wipRef } from '../snapshot/format.js';
import type { ChainLink } from '../snapshot/format.js';
import { readSnapshotMemo, recordSnapshotMemo, SNAPSHOT_MEMO_FILE } from '../managers/snapshot-memo.js';
import { cacheTemporaries } from '../managers/cache-file.js';
import { checkText } from '../text.js';
import { PATH_MAX, unwritableChanges } from './tree-paths.js';
import { MEMO_FILE, workingTreeByStatus } from './working-tree.js';

/**
 * What a {@link WipStore} works on and with.
 * @public
 */
export interface WipStoreOptions {
  /** A folder inside the checkout. */
  cwd: string;
  /** How git is run; {@link SimpleGitRunner} when absent. */
  git?: GitRunner;
  /** The time snapshots are dated with; the system clock when absent. */
  clock?: () => Date;
  /** Milliseconds a save or restore waits for another one of the same worktree; 30,000 when absent. */
  lockWaitMs?: number;
  /**
   * The replicate policy; read from the workspace declaration (`chant.workspace.json`) when
   * absent, none when null.
   */
  policy?: Policy | null;
  /**
   * Where `CHANT_AGENT` is read from for the identity rule, and `CHANT_WIP_STAGING` for
   * {@link WipStoreOptions.staging}; `process.env` when absent.
   */
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * How a save finds the working tree's tree: `status` builds it from `git status` and HEAD's
   * trees, `index` stages everything into a temporary copy of the index (`git add --all`), and
   * `auto` (the default) takes `status` for an index of 2 MiB or more (about 20,000 files),
   * where writing a copy of the index twice costs more than the processes `status` adds. Both
   * give the same tree; `status` hands back to `index` what it cannot decide. Read from
   * `CHANT_WIP_STAGING` when absent.
   */
  staging?: StagingMode;
}

/**
 * How a save finds the working tree's tree; see {@link WipStoreOptions.staging}.
 * @public
 */
export type StagingMode = 'auto' | 'status' | 'index';

/** The index size from which `auto` staging builds the tree from `git status`. */
const STATUS_STAGING_MIN_INDEX_BYTES = 2 * 1024 * 1024;

/**
 * Options of {@link WipStore.save}.
 * @public
 */
export interface SaveOptions {
  /** What to call the snapshot, such as `turn:7`: one line of at most 200 characters. */
  label?: string | null;
  /** Who takes it, such as `github:alex`: one line of at most 200 characters. */
  by?: string | null;
}

/**
 * Options of {@link WipStore.restore}.
 * @public
 */
export interface RestoreOptions {
  /** The snapshot to restore, by commit (any name git resolves); the branch's latest when absent. */
  snapshot?: string | null;
  /** Who restores, recorded on the pre-restore checkpoint. */
  by?: string | null;
}

/**
 * Options of {@link WipStore.list}.
 * @public
 */
export interface ListOptions {
  /** Only this branch's snapshots (exact name, without `refs/heads/`). */
  branch?: string | null;
}

/** The checkout as a write finds it. */
interface Checkout {
  layout: RepositoryLayout;
  branch: string;
  head: string;
  ref: string;
  tip: RefRecord | null;
}

/** How many times a save re-reads the tip after another writer moved it. */
const CAS_ATTEMPTS = 8;

/**
 * The snapshots of a checkout's work in progress, kept under `refs/chant/wip/<branch>`: take
 * one, list them, restore one. The checkout's index, HEAD and branch never move.
 *
 * @example
 * ```ts
 * const store = new WipStore({ cwd: process.cwd() });
 * const { snapshot } = await store.save({ label: 'turn:7', by: 'github:alex' });
 * const { branches } = await store.list();
 * await store.restore({ snapshot: snapshot.commit });
 * ```
 * @public
 */
export class WipStore {
  readonly #cwd: string;
  readonly #plumbing: Plumbing;
  readonly #clock: () => Date;
  readonly #lockWaitMs: number | undefined;
  readonly #git: GitRunner;
  readonly #policy: Policy | null | undefined;
  readonly #env: Readonly<Record<string, string | undefined>> | undefined;
  readonly #staging: StagingMode;

  /**
   * A store for the checkout around `options.cwd`; nothing is read until a method runs.
   * @param options - the checkout and the edges to swap in tests
   */
  constructor(options: WipStoreOptions) {
    this.#cwd = options.cwd;
    this.#git = options.git ?? new SimpleGitRunner(options.cwd);
    this.#plumbing = new Plumbing(this.#git, options.cwd);
    this.#policy = options.policy;
    this.#env = options.env;
    this.#clock = options.clock ?? (() => new Date());
    this.#lockWaitMs = options.lockWaitMs;
    const staging = options.staging ?? (options.env ?? process.env).CHANT_WIP_STAGING ?? 'auto';
    this.#staging = staging === 'status' || staging === 'index' ? staging : 'auto';
  }

  /** The folder this store was opened on. */
  get cwd(): string {
    return this.#cwd;
  }

  /**
   * Takes a snapshot of the whole working tree (staged, unstaged and untracked files; ignored
   * files left out) onto `refs/chant/wip/<branch>`. When the tip already holds the same tree on
   * the same head with the same label, principal and kind, nothing is written and `created` is
   * false.
   * @param options - the label and principal to record
   * @returns the branch, the ref and the snapshot
   * @throws {@link WipError} `write-usage-invalid`, `not-a-git-repository`, a declaration code,
   *   `wip-no-branch`, `principal-unidentified`, `wip-race` or `git-failed`
   */
  async save(options: SaveOptions = {}): Promise<SaveResult> {
    const label = checkText('--label', options.label);
    const by = checkText('--by', options.by);
    const opened = await this.#plumbing.checkout();
    const layout = opened.layout;
    const policy = await this.#loadPolicy(layout);
    const checkout = this.#branchOf(opened);
    await this.#checkIdentity(layout, by);
    const { created, snapshot, unsaved } = await this.#locked(layout, async () => {
      const fast = this.#viaStatus(layout) ? await workingTreeByStatus(this.#plumbing, layout, checkout.head, checkout.ref) : null;
      if (fast !== null) {
        checkout.tip = fast.tip;
        return { ...(await this.#record(checkout, fast.tree, { kind: 'save', label, by }, 'exact')), unsaved: unsavedOf(fast.gitlinks) };
      }
      // The tip is read while git stages the working tree: it is only needed after.
      const [tip, staged] = await Promise.allSettled([this.#readTip(checkout.ref), this.#stageWorkingTree(checkout)]);
      if (staged.status === 'rejected') throw staged.reason;
      const indexFile = staged.value;
      try {
        if (tip.status === 'rejected') throw tip.reason;
        checkout.tip = tip.value;
        const tree = await this.#plumbing.writeTree(indexFile);
        // Reading the gitlinks from the index overlaps the commit and the ref update.
        const [recorded, unsaved] = await Promise.all([
          this.#record(checkout, tree, { kind: 'save', label, by }, 'exact'),
          unsavedPaths(indexFile, layout.objectFormat),
        ]);
        return { ...recorded, unsaved };
      } finally {
        rmSync(indexFile, { force: true });
      }
    });
    // The snapshot is safe on disk by now: a push that fails is reported, never a failed save.
    const replication = policy?.has('save') ? await this.#replicator(policy).after('save') : null;
    return { branch: checkout.branch, ref: checkout.ref, created, snapshot, replication, ...(unsaved.length > 0 ? { unsaved } : {}) };
  }

  /**
   * Puts the working tree back as a snapshot holds it, after a `pre-restore` snapshot of how it
   * is, so that restoring that one undoes the restore. Files are written and removed by git's own
   * checkout; ignored files are never touched (`wip-restore-blocked` before anything changes when
   * one is in the way); the index is reset to HEAD keeping the stat data of unchanged entries;
   * HEAD and the branch stay where they are. A snapshot git could not write whole (a path such as
   * `.git` or `..`, a name too long, a missing object) is refused as `wip-snapshot-unknown`, and
   * a lack of room or a locked index as `git-failed`, before anything is written.
   * @param options - the snapshot (the branch's latest when absent) and the principal
   * @returns what was restored, the checkpoint, and every path written or removed
   * @throws {@link WipError} `write-usage-invalid`, `not-a-git-repository`, `wip-no-branch`,
   *   `wip-none`, `wip-snapshot-unknown`, `wip-branch-other`, `principal-unidentified`,
   *   `wip-restore-blocked`, `wip-race` or `git-failed`
   */
  async restore(options: RestoreOptions = {}): Promise<RestoreResult> {
    const by = checkText('--by', options.by);
    const opened = await this.#plumbing.checkout();
    const layout = opened.layout;
    const checkout = await this.#checkout(opened);
    const target = await this.#target(checkout, options.snapshot ?? null);
    await this.#checkIdentity(layout, by);
    return this.#locked(layout, async () => {
      const indexFile = await this.#stageWorkingTree(checkout);
      try {
        const current = await this.#plumbing.writeTree(indexFile);
        const changes = await this.#plumbing.diffTrees(current, target.tree);
        // Checked before anything is written, the checkpoint included: git would refuse some of
        // these only after writing other files.
        await this.#checkWritable(layout, target, changes);
        const blocked = await ignoredInTheWay(layout.top, changes);
        if (blocked.length > 0) {
          throw new WipError(
            'wip-restore-blocked',
            `restoring ${target.commit.slice(0, 12)} would delete or overwrite ignored files, so nothing was changed: ${blocked.join(', ')}`,
            { paths: blocked },
          );
        }
        await indexNotLocked(layout);
        const checkpoint = await this.#record(checkout, current, { kind: 'pre-restore', label: `before ${target.commit.slice(0, 12)}`, by }, 'tree-and-head');
        // The checkout's index is reset to HEAD unless it holds HEAD's tree already (the usual
        // case: nothing staged), when the reset would leave it as it is. It is read while git
        // writes the working tree, which leaves that index alone.
        const [, reset] = await Promise.all([
          changes.length > 0 ? this.#plumbing.switchTree(layout.top, indexFile, current, target.tree) : null,
          opened.headTree === null ? true : indexHoldsTree(layout.indexFile, layout.objectFormat, opened.headTree).then((holds) => !holds),
        ]);
        if (reset) await this.#plumbing.resetIndex(layout.top, checkout.head);
        return {
          branch: checkout.branch,
          ref: checkout.ref,
          head: checkout.head,
          snapshot: target,
          checkpoint,
          headMoved: target.head !== checkout.head,
          paths: sortPaths(changes.map((change) => change.path)),
        };
      } finally {
        rmSync(indexFile, { force: true });
      }
    });
  }

  /**
   * Every branch's snapshots, newest first, read from local refs only (never fetches).
   * @param options - `branch` to read one branch's only
   * @returns the checkout, the branches with snapshots sorted by branch, and the replication state
   * @throws {@link WipError} `not-a-git-repository`, a declaration code or `git-failed`
   */
  async list(options: ListOptions = {}): Promise<ListResult> {
    const { layout, headRef, head: headCommit, replaced } = await this.#plumbing.checkout();
    const policy = await this.#loadPolicy(layout);
    const branch = headRef?.startsWith('refs/heads/') ? headRef.slice('refs/heads/'.length) : null;
    const head = branch === null ? null : headCommit;
    const only = options.branch ?? null;
    // The memo (lib/managers/snapshot-memo.ts) holds what earlier reads learned; git log is asked only
    // for the commits it does not know, the tips included (for-each-ref prints a message as
    // stored, git log in UTF-8), and the walk stops where the memo takes over. A shallow
    // repository, grafts or replace refs make git read a commit's parents other than the
    // commit says, and can change their minds: then the memo is neither read nor written.
    const memoFile = join(layout.commonDir, SNAPSHOT_MEMO_FILE);
    const [tips, memo, grafted] = await Promise.all([
      this.#plumbing.readRefs([only === null ? WIP_REF_PREFIX : wipRef(only)]),
      replaced ? { links: new Map<string, ChainLink>(), stored: 0, appendable: false } : readSnapshotMemo(memoFile, layout.objectFormat),
      historyRewritten(layout.commonDir),
    ]);
    const trusted = !grafted && !replaced;
    const links = trusted ? memo.links : new Map<string, ChainLink>();
    const learned = new Map<string, ChainLink>();
    const unknown = new Set(tips.map((tip) => walkChain(tip.commit, links).unknown).filter((commit) => commit !== null));
    if (unknown.size > 0) {
      await this.#plumbing.readFirstParentChains([...unknown], (record) => {
        const link = chainLink(record);
        links.set(record.commit, link);
        learned.set(record.commit, link);
        return link.snapshot !== null && link.next !== null && !links.has(link.next) ? link.next : null;
      });
    }
    // Each chain is walked once, now that every link is known: for its snapshots, and for what
    // the memo keeps.
    const walks = tips.map((tip) => walkChain(tip.commit, links).walked);
    const branches: BranchSnapshots[] = tips
      .map((tip, index) => ({ branch: tip.ref.slice(WIP_REF_PREFIX.length), ref: tip.ref, tip: tip.commit, snapshots: snapshotChain(walks[index] as string[], links) }))
      .sort((a, b) => compareBytes(a.branch, b.branch));
    // What a read of every branch keeps, when the memo is written anew, is what the tips reach,
    // so deleted branches and rewritten chains are forgotten; a read of one branch keeps all.
    if (trusted && learned.size > 0) await recordSnapshotMemo(memoFile, layout.objectFormat, memo, learned, only === null ? reachedLinks(walks, links) : links);
    const replication = policy === null ? null : await this.#replicator(policy).state();
    return { checkout: { branch, head }, branches, replication };
  }

  /** Whether a save builds its tree from `git status` (see {@link WipStoreOptions.staging}). */
  #viaStatus(layout: RepositoryLayout): boolean {
    if (this.#staging !== 'auto') return this.#staging === 'status';
    try {
      return (statSync(layout.indexFile, { throwIfNoEntry: false })?.size ?? 0) >= STATUS_STAGING_MIN_INDEX_BYTES;
    } catch {
      return false;
    }
  }

  #replicator(policy: Policy): Replicator {
    return new Replicator({ cwd: this.#cwd, git: this.#git, policy });
  }

  /** The policy given, or the one the workspace declaration states (read once per call). */
  async #loadPolicy(layout: RepositoryLayout): Promise<Policy | null> {
    if (this.#policy !== undefined) return this.#policy;
    return Policy.load({ cwd: this.#cwd, top: layout.top, git: this.#git });
  }

  async #checkIdentity(layout: RepositoryLayout, by: string | null): Promise<void> {
    await checkPrincipal({ git: this.#git, cwd: this.#cwd, top: layout.top, by, ...(this.#env === undefined ? {} : { env: this.#env }) });
  }

  /** The checked-out branch, its commit and its wip tip; `wip-no-branch` for a detached HEAD or an unborn branch. */
  async #checkout(opened: { layout: RepositoryLayout; headRef: string | null; head: string | null }): Promise<Checkout> {
    const checkout = this.#branchOf(opened);
    checkout.tip = await this.#readTip(checkout.ref);
    return checkout;
  }

  /** The tip of a wip ref, read in full, or null when the ref does not exist. */
  async #readTip(ref: string): Promise<RefRecord | null> {
    return (await this.#plumbing.readRefs([ref])).find((record) => record.ref === ref) ?? null;
  }

  /** The checked-out branch and its commit, its wip tip not read yet; `wip-no-branch` as #checkout. */
  #branchOf(opened: { layout: RepositoryLayout; headRef: string | null; head: string | null }): Checkout {
    const { layout, headRef, head } = opened;
    if (headRef === null || !headRef.startsWith('refs/heads/')) {
      throw new WipError('wip-no-branch', 'HEAD is detached: check out a branch first, since snapshots are kept per branch');
    }
    const branch = headRef.slice('refs/heads/'.length);
    const ref = wipRef(branch);
    if (head === null) {
      throw new WipError('wip-no-branch', `branch ${branch} has no commit yet: commit once first, since a snapshot's last parent is the commit HEAD names`);
    }
    return { layout, branch, head, ref, tip: null };
  }

  /** The snapshot a restore puts back. */
  async #target(checkout: Checkout, name: string | null): Promise<Snapshot> {
    if (name === null) {
      const snapshot = checkout.tip === null ? null : readSnapshot(checkout.tip);
      if (snapshot === null) throw new WipError('wip-none', `branch ${checkout.branch} has no snapshot: ${checkout.ref} does not exist`);
      return this.#sameBranch(checkout, snapshot);
    }
    const commit = await this.#plumbing.readNamedCommit(name);
    const oid = commit?.commit ?? null;
    const snapshot = commit === null ? null : readSnapshot(commit);
    if (snapshot === null) {
      throw new WipError('wip-snapshot-unknown', oid === null
        ? `${JSON.stringify(name)} names no commit`
        : `${JSON.stringify(name)} names commit ${oid}, which is not a snapshot chant took (it has no Chant-Wip-Branch and Chant-Wip-Head trailers)`);
    }
    return this.#sameBranch(checkout, snapshot);
  }

  #sameBranch(checkout: Checkout, snapshot: Snapshot): Snapshot {
    if (snapshot.branch !== checkout.branch) {
      throw new WipError('wip-branch-other', `snapshot ${snapshot.commit} was taken on branch ${snapshot.branch}, not on ${checkout.branch}: check that branch out to restore it`);
    }
    return snapshot;
  }

  #locked<T>(layout: RepositoryLayout, work: () => Promise<T>): Promise<T> {
    return withWorktreeLock(layout.gitDir, async () => {
      // What killed processes left is removed while this one works: it is never this one's own.
      const cleaning = removeStaleTemporaries(layout).catch(() => undefined);
      try {
        return await work();
      } finally {
        await cleaning;
      }
    }, this.#lockWaitMs === undefined ? {} : { waitMs: this.#lockWaitMs });
  }

  /**
   * Refuses, as `wip-snapshot-unknown`, a target whose changes git could not write whole: paths
   * chant never records (`.git`, `..`, names too long), and objects that are missing, of the
   * wrong type, or symlink targets too long for the system.
   */
  async #checkWritable(layout: RepositoryLayout, target: Snapshot, changes: readonly TreeChange[]): Promise<void> {
    const refuse = (what: string, problems: readonly string[]) => new WipError('wip-snapshot-unknown',
      `snapshot ${target.commit} ${what}, so it is not one chant took and nothing was changed: ${problems.slice(0, 5).join('; ')}${problems.length > 5 ? `; and ${problems.length - 5} more` : ''}`);
    const paths = unwritableChanges(layout.top, changes);
    if (paths.length > 0) throw refuse('holds paths git would not write', paths);
    const written = changes.filter((change) => change.newMode !== '000000' && change.newMode !== '160000');
    const objects = await this.#plumbing.objectInfo(written.map((change) => change.newOid));
    const problems: string[] = [];
    for (const change of written) {
      const object = objects.get(change.newOid) ?? null;
      if (object === null) problems.push(`${JSON.stringify(change.path)}: object ${change.newOid} is missing`);
      else if (object.type !== 'blob') problems.push(`${JSON.stringify(change.path)}: object ${change.newOid} is a ${object.type}, not a file's content`);
      else if (change.newMode === '120000' && object.size >= PATH_MAX) problems.push(`${JSON.stringify(change.path)}: a symlink target of ${object.size} bytes`);
    }
    if (problems.length > 0) throw refuse('cannot be written whole', problems);
    await enoughSpace(layout, target, written.map((change) => objects.get(change.newOid) ?? null));
  }

  /** A temporary index, seeded from the checkout's so git reuses its stat data, holding the whole working tree. */
  async #stageWorkingTree(checkout: Checkout): Promise<string> {
    const indexFile = join(checkout.layout.gitDir, `chant-wip-${process.pid}-${randomBytes(6).toString('hex')}.index`);
    try {
      await seedIndex(checkout.layout.indexFile, indexFile);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
        await rm(indexFile, { force: true });
        throw new WipError('git-failed', `cannot copy the index: ${(error as Error).message}`, { cause: error });
      }
    }
    try {
      await this.#plumbing.addAll(checkout.layout.top, indexFile);
    } catch (error) {
      await rm(indexFile, { force: true });
      throw error;
    }
    return indexFile;
  }

  /**
   * Records `tree` as a snapshot on the branch's wip ref by compare-and-swap, unless the tip
   * already is it: with the same label, principal and kind (`exact`), or with any (`tree-and-head`,
   * for a checkpoint, whose only job is that the tree is kept).
   */
  async #record(checkout: Checkout, tree: string, fields: { kind: SnapshotKind; label: string | null; by: string | null }, reuse: 'exact' | 'tree-and-head'): Promise<{ created: boolean; snapshot: Snapshot }> {
    let tip = checkout.tip;
    const message = snapshotMessage({ branch: checkout.branch, head: checkout.head, ...fields });
    for (let attempt = 0; attempt < CAS_ATTEMPTS; attempt += 1) {
      const current = tip === null ? null : readSnapshot(tip);
      if (current !== null && current.tree === tree && current.head === checkout.head
        && (reuse === 'tree-and-head' || (current.kind === fields.kind && current.label === fields.label && current.by === fields.by))) {
        return { created: false, snapshot: current };
      }
      const seconds = Math.floor(this.#clock().getTime() / 1000);
      const date = `@${seconds} +0000`;
      const parents = tip === null ? [checkout.head] : [tip.commit, checkout.head];
      const commit = await this.#plumbing.commitTree(tree, parents, message, { GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date });
      if (await this.#plumbing.updateRefCas(checkout.ref, commit, tip?.commit ?? null, `chant wip: ${fields.kind}`)) {
        const snapshot = readSnapshot({ commit, tree, parents, committedAt: seconds, message });
        if (snapshot === null) throw new WipError('git-failed', `snapshot ${commit} does not read back`);
        return { created: true, snapshot };
      }
      tip = await this.#readTip(checkout.ref);
    }
    throw new WipError('wip-race', `${checkout.ref} kept moving under ${CAS_ATTEMPTS} attempts to write it; nothing was lost, try again`);
  }
}

/**
 * Makes `copy` a copy of the checkout's index for git to stage into. A hard link, where the file
 * system has them: git never writes an index in place (it writes `<index>.lock` and renames it
 * over), so the checkout's index is never touched, and the link carries the original's mtime,
 * which git's racy-clean check reads: an entry whose file changed in the same second the index
 * was written is only re-read while the index's mtime says so. Elsewhere a copy, given the
 * original's mtime (taken before copying, rounded down, so never newer than its contents).
 */
async function seedIndex(original: string, copy: string): Promise<void> {
  try {
    // Synchronous, as the save waits on it before its first git call.
    linkSync(original, copy);
    return;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw error;
  }
  const stats = await stat(original);
  await copyFile(original, copy);
  const seconds = Math.floor(stats.mtimeMs / 1000);
  await utimes(copy, seconds, seconds);
}

/** Whether git reads some commits' parents other than they are stored: a shallow repository, or grafts. */
async function historyRewritten(commonDir: string): Promise<boolean> {
  const present = await Promise.all(['shallow', join('info', 'grafts')].map((name) => lstat(join(commonDir, name)).then(() => true, () => false)));
  return present.some((one) => one);
}

/** The links of the commits the walks went through. */
function reachedLinks(walks: ReadonlyArray<readonly string[]>, links: ReadonlyMap<string, ChainLink>): Map<string, ChainLink> {
  const reached = new Map<string, ChainLink>();
  for (const walked of walks) {
    for (const commit of walked) reached.set(commit, links.get(commit) as ChainLink);
  }
  return reached;
}

/**
 * Removes the temporary index files (and git's locks on them) of saves and restores killed
 * before they could, `chant-wip-<pid>-*` in the git directory whose process is gone, and the
 * memos' unfinished copies (the tree memo's there, the snapshot memo's in the common directory).
 */
async function removeStaleTemporaries(layout: RepositoryLayout): Promise<void> {
  const own = [/^chant-wip-(\d+)-[0-9a-f]+\.index(?:\.lock)?$/, cacheTemporaries(MEMO_FILE)];
  const shared = cacheTemporaries(SNAPSHOT_MEMO_FILE);
  const left = layout.commonDir === layout.gitDir
    ? [{ dir: layout.gitDir, names: [...own, shared] }]
    : [{ dir: layout.gitDir, names: own }, { dir: layout.commonDir, names: [shared] }];
  for (const { dir, names } of left) {
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      const match = names.map((pattern) => pattern.exec(name)).find((found) => found !== null);
      if (match === undefined) continue;
      const pid = Number(match[1]);
      if (pid !== process.pid && !processAlive(pid)) await rm(join(dir, name), { force: true });
    }
  }
}

/**
 * Refuses a restore, before it writes anything, while another git process holds the checkout's
 * index: the restore's last step resets that index, and would fail after the files were written.
 */
async function indexNotLocked(layout: RepositoryLayout): Promise<void> {
  const lock = `${layout.indexFile}.lock`;
  if (await lstat(lock).then(() => true, () => false)) {
    throw new WipError('git-failed', `Unable to create '${lock}': File exists. Another git process seems to be running in this repository; nothing was changed, try again when it ends`);
  }
}

/**
 * Refuses a restore, before it writes anything, when the file system holding the working tree
 * has clearly too little room for the files it writes: git would fail halfway through. Sizes are
 * the objects' own; a filter that grows files on checkout (CRLF, LFS) can still run out later.
 */
async function enoughSpace(layout: RepositoryLayout, target: Snapshot, objects: ReadonlyArray<{ size: number } | null>): Promise<void> {
  const room = await statfs(layout.top).catch(() => null);
  if (room === null || room.bsize <= 0) return;
  const blocks = (bytes: number) => Math.ceil(bytes / room.bsize) * room.bsize;
  const index = await lstat(layout.indexFile).then((stats) => stats.size, () => 0);
  const needed = objects.reduce((sum, object) => sum + blocks(object?.size ?? 0), blocks(index));
  const free = room.bavail * room.bsize;
  if (needed > free) {
    throw new WipError('git-failed', `restoring ${target.commit.slice(0, 12)} writes about ${needed} bytes and the file system holding ${layout.top} has ${free} free: No space left on device; nothing was changed`);
  }
}

/** The gitlinks of a staged index, as what the snapshot does not hold. */
async function unsavedPaths(indexFile: string, objectFormat: string): Promise<NonNullable<SaveResult['unsaved']>> {
  return unsavedOf(await readGitlinks(indexFile, objectFormat));
}

/** A snapshot's gitlinks, as what it does not hold. */
function unsavedOf(gitlinks: readonly Gitlink[]): NonNullable<SaveResult['unsaved']> {
  return sortByPath(gitlinks.map((link) => ({
    path: link.path,
    reason: 'submodule' as const,
    message: `${link.path} is a submodule: the snapshot keeps the commit it is at (${link.commit.slice(0, 12)}), not its files`,
  })));
}

function sortByPath<T extends { path: string }>(entries: T[]): T[] {
  return entries.sort((a, b) => compareBytes(a.path, b.path));
}

/**
 * The ignored files a move from the working tree to another tree would delete or overwrite:
 * anything on disk in the way of a path to write that the working tree's own tree does not hold.
 */
async function ignoredInTheWay(top: string, changes: readonly TreeChange[]): Promise<string[]> {
  const leaving = new Set(changes.filter((change) => change.oldMode !== '000000').map((change) => change.path));
  const blocked = new Set<string>();
  for (const change of changes) {
    if (change.newMode === '000000') continue;
    const parts = change.path.split('/');
    let parentsAreFolders = true;
    for (let depth = 1; depth < parts.length; depth += 1) {
      const folder = parts.slice(0, depth).join('/');
      const stats = await lstat(join(top, folder)).catch(() => null);
      if (stats === null) {
        parentsAreFolders = false;
        break;
      }
      if (!stats.isDirectory()) {
        if (!leaving.has(folder)) blocked.add(folder);
        parentsAreFolders = false;
        break;
      }
    }
    if (!parentsAreFolders || leaving.has(change.path)) continue;
    const stats = await lstat(join(top, change.path)).catch(() => null);
    if (stats === null) continue;
    if (!stats.isDirectory()) {
      blocked.add(change.path);
      continue;
    }
    for (const entry of await readdir(join(top, change.path), { recursive: true, withFileTypes: true })) {
      if (entry.isDirectory()) continue;
      const path = relative(top, join(entry.parentPath, entry.name)).split(sep).join('/');
      if (!leaving.has(path)) blocked.add(path);
    }
  }
  return sortPaths([...blocked]);
}

function sortPaths(paths: string[]): string[] {
  return paths.sort(compareBytes);
}

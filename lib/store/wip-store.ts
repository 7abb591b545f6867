import type { DiffResult, RestorePlan, ShowResult } from '../documents/changes.js';
import type { PolicyDocument } from '../documents/replication.js';
import type { ListResult } from '../documents/wip-read.js';
import type { RetainDeclaration } from '../documents/retain.js';
import { callOptions, checkNotAborted, checkStoreOptions, WipError } from '../errors.js';
import { Events } from '../events.js';
import type { RestoreResult, SaveResult } from '../documents/wip-write.js';
import { Plumbing } from '../git/plumbing.js';
import { SimpleGitRunner } from '../git/runner.js';
import type { GitRunner } from '../git/runner.js';
import { policyOf } from '../replication/policy.js';
import type { Policy } from '../replication/policy.js';
import { checkNetworkTimeout } from '../replication/replicator.js';
import type { StoreContext } from './context.js';
import { diff, show } from './changes.js';
import type { DiffOptions, ShowOptions } from './changes.js';
import { list } from './list.js';
import type { ListOptions } from './list.js';
import { plan, restore } from './restore.js';
import type { PlanOptions, RestoreOptions } from './restore.js';
import { save } from './save.js';
import type { SaveOptions } from './save.js';
import type { StagingMode } from './staging.js';
import { parseSize } from '../snapshot/left-out.js';
import { parseDuration } from '../deadline.js';
import { watchWipRefs } from './watch.js';
import type { RefsChanged, RefWatcher, WatchRefsOptions } from './watch.js';
import { WIP_REF_PREFIX } from '../snapshot/format.js';
import { checkRetain } from '../workspace/retain.js';
// generated imports: begin (npm run verbs)
import type { PruneResult, StorageResult } from '../documents/storage.js';
import { prune } from './prune.js';
import type { PruneOptions } from './prune.js';
import { storage } from './storage.js';
import type { StorageOptions } from './storage.js';
// generated imports: end

/**
 * The events a {@link WipStore} emits, by name, with what each listener receives.
 * @public
 */
export interface WipStoreEvents {
  /** A save finished: what it returned (`created` false when the tip already was the snapshot). */
  snapshot: SaveResult;
  /** A restore finished: what it returned, the working tree now holding the snapshot. */
  restore: RestoreResult;
}

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
  /** Milliseconds a save or restore waits for another one of the same worktree, and a prune for one of any worktree; 30,000 when absent. */
  lockWaitMs?: number;
  /**
   * The replicate policy: a {@link Policy} (the one a {@link Replicator} exposes as
   * `replicator.policy`, so both follow one policy), or its document; read from the workspace
   * declaration (`chant.workspace.json`) when absent, none when null.
   */
  policy?: Policy | PolicyDocument | null;
  /**
   * Where `CHANT_AGENT` is read from for the identity rule, and `CHANT_WIP_STAGING` for
   * {@link WipStoreOptions.staging}; `process.env` when absent.
   */
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * How a save finds the working tree's tree: `status` builds it from `git status` and HEAD's
   * trees, `index` stages everything into a temporary copy of the index (`git add --all`), and
   * `auto` (the default) is `status`, which runs fewer git processes at every size. Both give
   * the same tree; `status` hands back to `index` what it cannot decide. Read from
   * `CHANT_WIP_STAGING` when absent.
   */
  staging?: StagingMode;
  /**
   * Milliseconds the push a save (or `prune({push})`) makes may go without progress before git
   * and everything it started are stopped; see `ReplicatorOptions.timeoutMs`. 60,000 when absent.
   */
  networkTimeoutMs?: number;
  /**
   * The size over which a new untracked file is left out of a save (and of a restore's
   * checkpoint) and listed in its `unsaved` with its size: bytes, or a size such as `64M`. When
   * absent, the workspace declaration's `wip.maxFileSize`, else 32 MiB
   * ({@link DEFAULT_MAX_FILE_SIZE}). Tracked files are taken whatever their size.
   */
  maxFileSize?: number | string;
  /**
   * How long a save may take, from the call until its snapshot is recorded: milliseconds, or a
   * duration such as `90s` or `5m`. Past it git is stopped with everything it started and the save
   * is refused with `wip-timeout`, naming the step, having written nothing. When absent, the
   * workspace declaration's `wip.saveTimeout`, else 300 s ({@link DEFAULT_SAVE_TIMEOUT_MS}).
   */
  saveTimeout?: number | string;
  /**
   * The retention rules, shaped as a declaration's `retain` block: what `prune()` applies when
   * given no rule, what `save({prune: true})` applies, and, with `onSave`, what every save
   * applies. Read from the workspace declaration when absent, none when null. Checked as the
   * declaration's block is when the store is made: a wrong one is refused with
   * `declaration-invalid` naming the field (`retain.keepLast`).
   */
  retain?: RetainDeclaration | null;
}

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
  readonly #context: StoreContext;
  readonly #events = new Events<WipStoreEvents>();

  /**
   * A store for the checkout around `options.cwd`; nothing is read until a method runs.
   * @param options - the checkout and the edges to swap in tests
   * @throws {@link WipError} `write-usage-invalid` when `networkTimeoutMs` is not a whole number from 1,
   *   `maxFileSize` not a size or `saveTimeout` not a duration; `declaration-invalid` when `retain`
   *   breaks the retain block's rules
   */
  constructor(options: WipStoreOptions) {
    checkStoreOptions(options, 'WipStore');
    const git = options.git ?? new SimpleGitRunner(options.cwd);
    const staging = options.staging ?? (options.env ?? process.env).CHANT_WIP_STAGING ?? 'auto';
    this.#context = {
      cwd: options.cwd,
      git,
      plumbing: new Plumbing(git, options.cwd),
      policy: options.policy === undefined || options.policy === null ? options.policy : policyOf(options.policy),
      env: options.env,
      clock: options.clock === undefined ? () => new Date() : checkedClock(options.clock),
      lockWaitMs: options.lockWaitMs,
      staging: staging === 'status' || staging === 'index' ? staging : 'auto',
      networkTimeoutMs: checkNetworkTimeout(options.networkTimeoutMs),
      maxFileSize: options.maxFileSize === undefined ? undefined : parseSize(options.maxFileSize, 'maxFileSize'),
      saveTimeoutMs: options.saveTimeout === undefined ? undefined : parseDuration(options.saveTimeout, 'saveTimeout'),
      retain: options.retain === undefined || options.retain === null ? options.retain : { box: '', ...checkRetain(options.retain, ['retain'], () => null) },
    };
  }

  /** The folder this store was opened on. */
  get cwd(): string {
    return this.#context.cwd;
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
    const result = await save(this.#context, callOptions(options, 'save'));
    this.#events.emit('snapshot', result);
    return result;
  }

  /**
   * Puts the working tree back as a snapshot holds it, after a `pre-restore` snapshot of how it
   * is (the index too, when it is not HEAD's tree), so that restoring that one undoes the restore.
   * git writes the files into a staging folder and they are moved into place never through a
   * symlink. Ignored files, submodule working trees and embedded repositories are never touched,
   * and a restore that would have to, could not write a folder, would remove the caller's
   * current directory, or runs during a merge, rebase or conflict is refused with
   * `wip-restore-blocked` before anything changes. The index is reset to HEAD (or to the index a
   * checkpoint recorded) keeping the stat data of unchanged entries; HEAD and the branch stay
   * where they are. A snapshot git could not write whole (a path such as `.git` or `..`, a name
   * too long, a missing object) is refused as `wip-snapshot-unknown`, and a lack of room or
   * inodes or a locked index as `git-failed`, before anything is written. When writing fails
   * partway anyway, the working tree is put back and the refusal says so. With `paths`, only
   * those files and folders are put back, the rest of the working tree and the index left as
   * they are (the checkpoint still holds the whole tree). With `expect`, the fingerprint of a
   * {@link WipStore.plan}, it is refused with `wip-plan-stale` when the working tree, the index
   * or HEAD changed since that plan, or the plan was of another snapshot or other paths.
   * @param options - the snapshot (the branch's newest save when absent), the principal, the paths and the plan's fingerprint
   * @returns what was restored, the checkpoint, and every path written (`written`) or removed (`removed`); `paths` holds both
   * @throws {@link WipError} `write-usage-invalid`, `not-a-git-repository`, `wip-no-branch`,
   *   `wip-none`, `wip-snapshot-unknown`, `wip-branch-other`, `principal-unidentified`,
   *   `wip-restore-blocked`, `wip-plan-stale`, `wip-race`, `wip-cancelled` or `git-failed`
   */
  async restore(options: RestoreOptions = {}): Promise<RestoreResult> {
    const result = await restore(this.#context, callOptions(options, 'restore'));
    this.#events.emit('restore', result);
    return result;
  }

  /**
   * What a restore would do, computed the way the restore computes it and writing nothing: each
   * path it would write or remove, what is in the way and the refusal it would end with, and the
   * fingerprint of the working tree, index and HEAD it was computed on. Give that fingerprint to
   * {@link WipStore.restore} as `expect`, and the restore is refused with `wip-plan-stale` if
   * any of them changed since, or if it restores another snapshot or other paths than planned. It waits for a save or restore of the same worktree to finish.
   * @param options - the snapshot (the branch's newest save when absent) and the paths a partial restore would be limited to
   * @returns the plan
   * @throws {@link WipError} `write-usage-invalid`, `not-a-git-repository`, `wip-no-branch`,
   *   `wip-none`, `wip-snapshot-unknown`, `wip-branch-other`, `wip-cancelled` or `git-failed`;
   *   what the restore itself would be refused with is in `refusal`
   * @example
   * ```ts
   * const preview = await store.plan({ snapshot: turn2.commit, paths: ['src/parser'] });
   * if (preview.refusal === null && (await confirm(preview.write, preview.remove))) {
   *   await store.restore({ snapshot: turn2.commit, paths: ['src/parser'], expect: preview.fingerprint });
   * }
   * ```
   */
  async plan(options: PlanOptions = {}): Promise<RestorePlan> {
    return plan(this.#context, callOptions(options, 'plan'));
  }

  /**
   * Every branch's snapshots, newest first, read from local refs only (never fetches).
   * @param options - `branch` to read one branch's only, `limit` to keep the newest few of each
   * @returns the checkout, the branches with snapshots sorted by branch, and the replication state
   * @throws {@link WipError} `write-usage-invalid` (a bad limit), `not-a-git-repository`, a
   *   declaration code or `git-failed`
   */
  async list(options: ListOptions = {}): Promise<ListResult> {
    return list(this.#context, callOptions(options, 'list'));
  }

  /**
   * One snapshot: what it changed against the commit before it, and every file it holds. Reads
   * only.
   * @param options - the snapshot, by any name git resolves to its commit
   * @returns the snapshot, its change counts and its files
   * @throws {@link WipError} `write-usage-invalid`, `not-a-git-repository`, `wip-snapshot-unknown`,
   *   `wip-cancelled` or `git-failed`
   * @example
   * ```ts
   * const { snapshot, changes, files } = await store.show({ snapshot: '4b76a2ec' });
   * console.log(snapshot.label, changes?.files, files.length);
   * ```
   */
  async show(options: ShowOptions): Promise<ShowResult> {
    return show(this.#context, callOptions(options, 'show'));
  }

  /**
   * What differs between two snapshots, a snapshot and another commit (such as `HEAD`), or a
   * snapshot and the working tree (`to` absent): each path with its change, modes, object ids
   * and line counts. Reads only: no ref, index or working-tree file is written.
   * @param options - the two sides
   * @returns both sides, the totals and every path that differs, sorted
   * @throws {@link WipError} `write-usage-invalid`, `not-a-git-repository`, `wip-snapshot-unknown`,
   *   `wip-cancelled` or `git-failed`
   * @example
   * ```ts
   * const { paths } = await store.diff({ from: turn2.commit, to: turn3.commit });
   * for (const p of paths) console.log(p.change, p.path, p.added, p.removed);
   * ```
   */
  async diff(options: DiffOptions): Promise<DiffResult> {
    return diff(this.#context, callOptions(options, 'diff'));
  }

  // generated methods: begin (npm run verbs: one for each verb whose function is in lib/store/, unless this class writes it)
  /**
   * What each chain of snapshots costs: how many snapshots, when the oldest and newest were
   * taken, and the bytes its objects take on disk beyond what branches, tags, remote-tracking
   * refs and HEAD reach. Reads local refs only; its cost does not grow with the object store.
   * @param options - `branch` to read one chain only
   * @returns each chain sorted by branch, and the total (shared objects counted once)
   * @throws {@link WipError} `not-a-git-repository` or `git-failed`
   * @example
   * ```ts
   * const { branches, total } = await new WipStore({ cwd: process.cwd() }).storage();
   * for (const chain of branches) console.log(chain.branch, chain.snapshots, chain.oldest, chain.bytes);
   * ```
   */
  async storage(options: StorageOptions = {}): Promise<StorageResult> {
    return storage(this.#context, callOptions(options, 'storage'));
  }

  /**
   * Rewrites chains down to the snapshots the rules keep (any rule keeping one keeps it; the
   * newest, and the checkpoint of the last restore, always stay): the kept snapshots are written again with the same trees, messages and
   * dates, the new oldest one marked with the tip it replaced, and each ref moves by
   * compare-and-swap. The reflog entries of the dropped snapshots are expired; their objects go
   * with git's gc, or at once with `gc: true`. A plain push never carries a pruned chain: see
   * {@link Replicator.pushPruned}.
   * @param options - the rules, the branch, `dryRun` and `gc`
   * @returns what was (or, for a dry run, would be) dropped per chain
   * @throws {@link WipError} `write-usage-invalid` (no rule, or a bad one), `not-a-git-repository`,
   *   a declaration code, `wip-race` or `git-failed`
   * @example
   * ```ts
   * const store = new WipStore({ cwd: process.cwd() });
   * const plan = await store.prune({ keepLast: 100, keepWithin: '7d', keepLabelled: true, dryRun: true });
   * if (plan.branches.some((chain) => chain.dropped.length > 0)) await store.prune({ keepLast: 100, keepWithin: '7d', keepLabelled: true });
   * ```
   */
  async prune(options: PruneOptions = {}): Promise<PruneResult> {
    return prune(this.#context, callOptions(options, 'prune'));
  }

  // generated methods: end

  /**
   * Listens to this store's events: `snapshot` after each save, `restore` after each restore
   * (of this store; {@link WipStore.watchRefs} hears of other processes). A listener that throws
   * never fails the call.
   * @param name - the event
   * @param listener - what to call with it
   * @returns the function that removes the listener
   */
  on<K extends keyof WipStoreEvents>(name: K, listener: (event: WipStoreEvents[K]) => void): () => void {
    return this.#events.on(name, listener);
  }

  /**
   * Tells `listener` whenever the wip refs change, whoever changed them (this process, another
   * chant, a fetch), without polling git: the file system reports changes to the refs folder
   * and to packed-refs, and only then, after `debounceMs` of quiet, git is asked for the tips
   * once; the listener hears only when they differ from what it last heard.
   * @param listener - receives the wip tips after each change
   * @param options - the quiet spell, and a signal that ends the watch
   * @returns the watch, which `close()` ends
   * @throws {@link WipError} `not-a-git-repository`, `wip-cancelled` or `git-failed`
   */
  async watchRefs(listener: (event: RefsChanged) => void, options: WatchRefsOptions = {}): Promise<RefWatcher> {
    if (typeof listener !== 'function') throw new WipError('write-usage-invalid', `watchRefs takes a listener function; it was given ${listener === null ? 'null' : typeof listener}`);
    const checked = callOptions(options, 'watchRefs');
    checkNotAborted(checked.signal);
    const layout = await this.#context.plumbing.layout();
    const tips = (await this.#context.plumbing.readRefs([WIP_REF_PREFIX])).map((record) => ({ ref: record.ref, commit: record.commit }));
    return watchWipRefs(this.#context.plumbing, layout, tips, listener, checked);
  }
}

/** The caller's clock, its answer checked: a value that is no valid Date is `write-usage-invalid`, not a RangeError from dating the commit. */
function checkedClock(clock: () => Date): () => Date {
  return () => {
    const now: unknown = clock();
    if (!(now instanceof Date) || Number.isNaN(now.getTime())) throw new WipError('write-usage-invalid', `WipStore's clock must return a valid Date; it returned ${now instanceof Date ? 'an invalid Date' : typeof now}`);
    return now;
  };
}

export type { DiffOptions, ListOptions, PlanOptions, RefsChanged, RefWatcher, RestoreOptions, SaveOptions, ShowOptions, StagingMode, WatchRefsOptions };

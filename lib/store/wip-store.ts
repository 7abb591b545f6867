import type { ListResult } from '../documents/wip-read.js';
import type { RestoreResult, SaveResult } from '../documents/wip-write.js';
import { Plumbing } from '../git/plumbing.js';
import { SimpleGitRunner } from '../git/runner.js';
import type { GitRunner } from '../git/runner.js';
import type { Policy } from '../replication/policy.js';
import type { StoreContext } from './context.js';
import { list } from './list.js';
import type { ListOptions } from './list.js';
import { restore } from './restore.js';
import type { RestoreOptions } from './restore.js';
import { save } from './save.js';
import type { SaveOptions } from './save.js';
import type { StagingMode } from './staging.js';

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

  /**
   * A store for the checkout around `options.cwd`; nothing is read until a method runs.
   * @param options - the checkout and the edges to swap in tests
   */
  constructor(options: WipStoreOptions) {
    const git = options.git ?? new SimpleGitRunner(options.cwd);
    const staging = options.staging ?? (options.env ?? process.env).CHANT_WIP_STAGING ?? 'auto';
    this.#context = {
      cwd: options.cwd,
      git,
      plumbing: new Plumbing(git, options.cwd),
      policy: options.policy,
      env: options.env,
      clock: options.clock ?? (() => new Date()),
      lockWaitMs: options.lockWaitMs,
      staging: staging === 'status' || staging === 'index' ? staging : 'auto',
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
  save(options: SaveOptions = {}): Promise<SaveResult> {
    return save(this.#context, options);
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
  restore(options: RestoreOptions = {}): Promise<RestoreResult> {
    return restore(this.#context, options);
  }

  /**
   * Every branch's snapshots, newest first, read from local refs only (never fetches).
   * @param options - `branch` to read one branch's only, `limit` to keep the newest few of each
   * @returns the checkout, the branches with snapshots sorted by branch, and the replication state
   * @throws {@link WipError} `write-usage-invalid` (a bad limit), `not-a-git-repository`, a
   *   declaration code or `git-failed`
   */
  list(options: ListOptions = {}): Promise<ListResult> {
    return list(this.#context, options);
  }
}

export type { ListOptions, RestoreOptions, SaveOptions, StagingMode };

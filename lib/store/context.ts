// What every verb of a WipStore works with, built once by the face, and the steps the verbs
// share: the policy, the identity rule, the replicator, the worktree's lock.
import { Plumbing } from '../git/plumbing.js';
import type { RepositoryLayout } from '../git/plumbing.js';
import { withDeadline as withGitDeadline, withSignal } from '../git/signal.js';
import type { GitRunner } from '../git/runner.js';
import { seconds, stepOf } from '../deadline.js';
import { withWorktreeLock } from '../managers/lock.js';
import { removeStaleTemporaries } from '../managers/temporaries.js';
import { Policy, policyIn } from '../replication/policy.js';
import { Replicator } from '../replication/replicator.js';
import { readDeclaration } from '../workspace/declaration.js';
import { checkPrincipal } from '../workspace/identity.js';
import { declaredRetain } from '../workspace/retain.js';
import type { DeclaredRetain } from '../workspace/retain.js';
import { WipError } from '../errors.js';
import { DEFAULT_MAX_FILE_SIZE } from '../snapshot/left-out.js';
import { readWipSettings, wipSettingsIn } from '../workspace/wip-settings.js';
import type { WipSettings } from '../workspace/wip-settings.js';
import type { StagingMode } from './staging.js';

/** A store's settings and edges, as its verbs read them. */
export interface StoreContext {
  cwd: string;
  git: GitRunner;
  plumbing: Plumbing;
  clock: () => Date;
  lockWaitMs: number | undefined;
  /** The policy given to the store; undefined: read from the declaration on each call. */
  policy: Policy | null | undefined;
  env: Readonly<Record<string, string | undefined>> | undefined;
  staging: StagingMode;
  /** The network timeout of the pushes a save or a prune makes; the replicator's default when undefined. */
  networkTimeoutMs: number | undefined;
  /** The size over which a new untracked file is left out of a snapshot; from the declaration, or the default, when undefined. */
  maxFileSize: number | undefined;
  /** How long a save may take, in milliseconds; from the declaration, or the default, when undefined. */
  saveTimeoutMs: number | undefined;
  /** The retain block given to the store, validated; undefined: read from the declaration on each call. */
  retain: DeclaredRetain | null | undefined;
}

/** A save's time budget: its deadline (as `Date.now()` counts) and the timeout it came from, both settable once the declaration is read. */
export interface SaveBudget {
  deadline: number;
  timeoutMs: number;
}

/** The refusal of a save whose deadline passed while it was at `step`. */
export function timedOut(budget: SaveBudget, step: string, cause?: unknown): WipError {
  return new WipError('wip-timeout', `the save ran past its ${seconds(budget.timeoutMs)} deadline while ${step}; nothing was written: no ref moved, and no lock, temporary index or partial pack is left`, cause === undefined ? {} : { cause });
}

/**
 * The context with the save's deadline carried into every git call: git is stopped at it, with
 * everything it started, and the call becomes `wip-timeout` naming its step. Used for the steps
 * before the snapshot is recorded; recording (a commit and a ref update) runs to its end.
 */
export function withDeadline(context: StoreContext, budget: SaveBudget): StoreContext {
  const git = withGitDeadline(context.git, () => budget.deadline, (args, error) => timedOut(budget, stepOf(args), error));
  return { ...context, git, plumbing: new Plumbing(git, context.cwd) };
}

/**
 * What a restore's checkpoint runs with: the store's settings, else the declaration's, else the
 * defaults. A restore does not refuse for a declaration it cannot read: it takes the defaults.
 */
export async function checkpointSettings(context: StoreContext, layout: RepositoryLayout): Promise<{ maxFileSize: number }> {
  if (context.maxFileSize !== undefined) return { maxFileSize: context.maxFileSize };
  const declared = await readWipSettings(context.cwd, layout.top).catch((error: unknown): WipSettings => {
    if (error instanceof WipError && (error.code.startsWith('declaration-') || error.code === 'reader-too-old')) return {};
    throw error;
  });
  return { maxFileSize: declared.maxFileSize ?? DEFAULT_MAX_FILE_SIZE };
}

/**
 * The context with `signal` carried into every git call, for the steps of a verb that may be
 * stopped: those before it writes. Writes go through the context as given.
 */
export function cancellable(context: StoreContext, signal: AbortSignal | undefined): StoreContext {
  if (signal === undefined) return context;
  const git = withSignal(context.git, signal);
  return { ...context, git, plumbing: new Plumbing(git, context.cwd) };
}

export function replicatorOf(context: StoreContext, policy: Policy): Replicator {
  return new Replicator({ cwd: context.cwd, git: context.git, policy, ...(context.networkTimeoutMs === undefined ? {} : { timeoutMs: context.networkTimeoutMs }) });
}

/** The policy given, or the one the workspace declaration states (read once per call). */
export async function loadPolicy(context: StoreContext, layout: RepositoryLayout): Promise<Policy | null> {
  if (context.policy !== undefined) return context.policy;
  return Policy.load({ cwd: context.cwd, top: layout.top, git: context.git });
}

/** The policy and the retain block (each given, or the declaration's) and its save settings (`wip`), the declaration read once. */
export async function loadDeclared(context: StoreContext, layout: RepositoryLayout): Promise<{ policy: Policy | null; retain: DeclaredRetain | null; settings: WipSettings }> {
  const declaration = await readDeclaration(context.cwd, layout.top);
  const retain = context.retain !== undefined ? context.retain : declaration === null ? null : declaredRetain(declaration);
  return { policy: context.policy !== undefined ? context.policy : policyIn(declaration), retain, settings: wipSettingsIn(declaration) };
}

export async function checkIdentity(context: StoreContext, layout: RepositoryLayout, by: string | null): Promise<void> {
  await checkPrincipal({ git: context.git, cwd: context.cwd, top: layout.top, by, ...(context.env === undefined ? {} : { env: context.env }) });
}

/**
 * Runs `work` holding the worktree's lock, removing what killed saves and restores left meanwhile.
 * `stopWaiting` ends a wait for another holder by throwing (a cancel, a deadline).
 */
export function locked<T>(context: StoreContext, layout: RepositoryLayout, work: () => Promise<T>, stopWaiting?: () => void): Promise<T> {
  return withWorktreeLock(layout.gitDir, () => cleaningMeanwhile(layout, work), { ...(context.lockWaitMs === undefined ? {} : { waitMs: context.lockWaitMs }), ...(stopWaiting === undefined ? {} : { stopWaiting }) });
}

/**
 * Runs `work`, under the worktree's lock, removing meanwhile what killed saves and restores of
 * the worktree left: it is never this one's own.
 */
export async function cleaningMeanwhile<T>(layout: RepositoryLayout, work: () => Promise<T>): Promise<T> {
  const cleaning = removeStaleTemporaries(layout).catch(() => undefined);
  try {
    return await work();
  } finally {
    await cleaning;
  }
}

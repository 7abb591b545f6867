// `prune`: rewrites chains down to the snapshots the retention rules keep. Every kept snapshot is
// written again with the same tree, message, author and committer; the new oldest one carries the
// prune marker, so a box that fetches the chain can tell a prune from a fork. See
// docs/design.md, "Retention".
import type { BranchPrune, PruneResult, RetentionRules } from '../documents/storage.js';
import type { Snapshot } from '../documents/snapshot.js';
import { cancelledError, checkNotAborted, WipError } from '../errors.js';
import { moveRefs } from '../git/remote.js';
import { removeStaleRefLock } from '../git/ref-writer.js';
import { chainHolds, collectGarbageNow, commitBytes, dropNewestReflogEntries, expireUnreachableReflogs, objectId, objectsGone, packThere, readRawCommits, writeCommits } from '../git/storage.js';
import type { RawCommit } from '../git/storage.js';
import { parentBelow } from '../snapshot/format.js';
import { recordedReplicas } from '../replication/replicator.js';
import { KEEP_WITHIN_PATTERN } from '../documents/replicate-rules.js';
import { basename, dirname, resolve } from 'node:path';
import type { RepositoryLayout } from '../git/plumbing.js';
import { collectUnlessFetching, withEveryWorktreeLock } from '../managers/lock.js';
import { holdRenamedCheckpoints, markedCheckpoints, renameMarkedCheckpoints, unreadableMarks, worktreeGitDirs } from '../managers/restore-marker.js';
import { cancellable, cleaningMeanwhile, loadDeclared, replicatorOf } from './context.js';
import type { StoreContext } from './context.js';
import { list } from './list.js';

/**
 * Options of {@link WipStore.prune}. A snapshot stays when any rule keeps it; the newest always
 * stays. With no rule given, the rules of the declaration's `retain` block apply; with neither,
 * the prune is refused.
 * @public
 */
export interface PruneOptions {
  /** Only this branch's chain; every chain when absent. */
  branch?: string | null;
  /** Keep the newest n snapshots (n at least 1). */
  keepLast?: number | null;
  /** Keep every snapshot taken within this age of the store's clock: a number and s, m, h, d or w (`7d`). */
  keepWithin?: string | null;
  /** Keep every snapshot with a label. */
  keepLabelled?: boolean;
  /** Say what would be dropped, and write nothing. */
  dryRun?: boolean;
  /**
   * Push the pruned chains afterwards, each with a lease on the replica chant recorded
   * ({@link Replicator.pushPruned}); needs a replicate policy.
   */
  push?: boolean;
  /**
   * Run `git gc --prune=now` afterwards, so the dropped snapshots' objects leave the disk at once
   * (a repack of the whole repository). It runs once the chains are pruned, holding the chant
   * lock of every worktree of the repository, so that no save or restore there is between
   * writing its objects and naming them; one that holds its lock past the wait, or a fetch
   * running meanwhile (its objects are named only once it ends), leaves the gc undone
   * (`collected: false`), the chains pruned all the same.
   */
  gc?: boolean;
  /**
   * Cancels the prune until it moves the chains: it then rejects with `wip-cancelled`, having
   * moved no ref. Once the chains are moved the prune finishes, its gc left undone when it had
   * not begun (`collected: false`); the push after it is not cancelled.
   */
  signal?: AbortSignal;
}

/** The trailer on a rewritten chain's oldest snapshot naming the tip of the chain it replaced. */
export const PRUNED_TRAILER = 'Chant-Wip-Pruned';
/** The trailer naming what the remote was recorded to hold of the ref when the prune ran, or `none`. */
export const PRUNED_REMOTE_TRAILER = 'Chant-Wip-Pruned-Remote';

const KEEP_WITHIN = new RegExp(KEEP_WITHIN_PATTERN);
const UNIT_MS: Readonly<Record<string, number>> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/**
 * The rules a prune applies, checked: `write-usage-invalid` for a bad value or no rule at all.
 * @param options - the rules as given
 * @returns the rules
 * @internal
 */
export function retentionRules(options: Pick<PruneOptions, 'keepLast' | 'keepWithin' | 'keepLabelled'>): RetentionRules {
  const keepLast = options.keepLast ?? null;
  const keepWithin = options.keepWithin ?? null;
  const keepLabelled = options.keepLabelled === true;
  if (keepLast !== null && (!Number.isSafeInteger(keepLast) || keepLast < 1)) {
    throw new WipError('write-usage-invalid', `--keep-last must be a whole number of at least 1, not ${JSON.stringify(keepLast)}`);
  }
  if (keepWithin !== null && !KEEP_WITHIN.test(keepWithin)) {
    throw new WipError('write-usage-invalid', `--keep-within must be a number and one of s, m, h, d, w (such as 7d), not ${JSON.stringify(keepWithin)}`);
  }
  if (keepLast === null && keepWithin === null && !keepLabelled) {
    throw new WipError('write-usage-invalid', 'prune needs a rule: --keep-last <n>, --keep-within <age> or --keep-labelled (or a retain block in the declaration)');
  }
  return { keepLast, keepWithin, keepLabelled };
}

/**
 * Which snapshots of a chain (newest first) the rules keep: a boolean per snapshot.
 * @param snapshots - the chain, newest first
 * @param rules - the rules
 * @param now - the time ages are counted from
 * @returns for each snapshot whether it stays
 * @internal
 */
export function keptByRules(snapshots: readonly Snapshot[], rules: RetentionRules, now: Date): boolean[] {
  const within = rules.keepWithin === null ? null : now.getTime() - Number(rules.keepWithin.slice(0, -1)) * (UNIT_MS[rules.keepWithin.slice(-1)] as number);
  return snapshots.map((snapshot, index) => index === 0
    || (rules.keepLast !== null && index < rules.keepLast)
    || (within !== null && Date.parse(snapshot.at) >= within)
    || (rules.keepLabelled && snapshot.label !== null));
}

/** Whether a prune's options give any rule, so that the declaration's are not asked for. */
function givesRule(options: PruneOptions): boolean {
  return (options.keepLast ?? null) !== null || (options.keepWithin ?? null) !== null || options.keepLabelled === true;
}

/** What git's update-ref says of a ref another writer moved, made, removed or holds locked. */
const RACED = /but expected|reference already exists|reference is missing|unable to resolve reference|File exists/;

/**
 * Rewrites chains down to the snapshots the rules keep (any rule keeping one keeps it; the
 * newest, and the checkpoint of the last restore, always stay): the kept snapshots are written again with the same trees, messages and
 * dates, the new oldest one marked with the tip it replaced, and each ref moves by
 * compare-and-swap. The reflog entries of the dropped snapshots are expired; their objects go
 * with git's gc, or at once with `gc: true`. A plain push never carries a pruned chain: see
 * {@link Replicator.pushPruned}.
 * @param context - what the store hands each verb
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
export async function prune(context: StoreContext, options: PruneOptions = {}): Promise<PruneResult> {
  return pruneChains(context, options, null);
}

/**
 * {@link prune}, of every chain of the branch, or of `onlyRef` alone (a save prunes its own
 * chain, never one of its branch moved aside).
 * @internal
 */
export async function pruneChains(context: StoreContext, options: PruneOptions, onlyRef: string | null): Promise<PruneResult> {
  if (givesRule(options)) retentionRules(options);
  const dryRun = options.dryRun === true;
  const { signal } = options;
  checkNotAborted(signal);
  // Until the chains move every git call stops on the signal; from then on, none does.
  const early = cancellable(context, signal);
  let moved = false;
  const stopped = (error: unknown): never => {
    if (!moved && signal?.aborted === true) throw cancelledError(signal);
    throw error;
  };
  const { layout } = await early.plumbing.checkout().catch(stopped);
  const { policy, retain } = await loadDeclared(early, layout).catch(stopped);
  const rules = givesRule(options) || retain === null ? retentionRules(options) : retain.rules;
  const push = options.push === true && !dryRun;
  if (push && policy === null) throw new WipError('wip-policy-none', 'prune --push needs a box in the workspace declaration that declares replicate');
  // The chains whose reflogs still name what was dropped (their expiry failed).
  let unexpired: string[] = [];
  const work = async (): Promise<PruneResult> => {
    checkNotAborted(signal);
    const { branches } = await list({ ...early, policy: null }, { branch: options.branch ?? null });
    const now = context.clock();
    const replicas = policy === null ? new Map<string, string[]>() : await recordedReplicas(early.git, context.cwd, policy, 'refs/chant/wip/');
    const results: BranchPrune[] = [];
    const rewrites: Array<{ ref: string; next: string; expected: string }> = [];
    const bodies: Buffer[] = [];
    // The checkpoint of a restore stopped partway in any worktree stays, whatever the rules say,
    // and its mark names it as written again: it alone holds what that restore overwrote.
    const markDirs = everyGitDir(layout);
    const marked = markedCheckpoints(markDirs);
    // A record cut short names no checkpoint, and read as none a prune dropped the only undo.
    const [unreadable] = unreadableMarks(markDirs);
    if (unreadable !== undefined) {
      throw new WipError('wip-snapshot-unknown', `${basename(unreadable)} in the git directory ${dirname(unreadable)} does not read whole (cut short by a power loss, or written by hand), so nothing was pruned: it names the checkpoint of a restore, which a prune keeps so that restore can be undone, and could be any snapshot. The next restore that goes past its checkpoint writes it anew; or remove it once no restore needs undoing`);
    }
    const renamed = new Map<string, string>();
    // A save prunes its own chain only: a chain of its branch moved aside is the host's to prune.
    for (const entry of onlyRef === null ? branches : branches.filter((chain) => chain.ref === onlyRef)) {
      const keep = keptByRules(entry.snapshots, rules, now).map((kept, index) => kept || marked.has((entry.snapshots[index] as Snapshot).commit));
      const dropped = entry.snapshots.filter((_, index) => !keep[index]).map((snapshot) => snapshot.commit);
      const kept = entry.snapshots.filter((_, index) => keep[index]);
      if (dropped.length === 0) {
        results.push({ branch: entry.branch, ref: entry.ref, tip: entry.tip, next: entry.tip, kept: kept.length, dropped });
        continue;
      }
      if (dryRun) {
        results.push({ branch: entry.branch, ref: entry.ref, tip: entry.tip, next: null, kept: kept.length, dropped });
        continue;
      }
      // A replica is named as replaced only where this chain held it: one another box pushed
      // above it (recorded by a fetch that found the chains diverged) is not this prune's to drop.
      const recorded: string[] = [];
      for (const replica of replicas.get(entry.ref) ?? []) if (await chainHolds(early.git, context.cwd, entry.tip, replica)) recorded.push(replica);
      // The oldest snapshot listed is read too: a chain that goes on below it into commits the
      // read could not take as snapshots (another version's, a damaged one) would lose them all
      // to the rewrite, whatever the rules keep there.
      const oldest = entry.snapshots.at(-1) as Snapshot;
      const keptOldestFirst = kept.map((snapshot) => snapshot.commit).reverse();
      const read = await readRawCommits(early.git, context.cwd, keptOldestFirst[0] === oldest.commit ? keptOldestFirst : [oldest.commit, ...keptOldestFirst]);
      if (ownParents(read[0] as RawCommit).below !== null) {
        throw new WipError('wip-snapshot-unknown', `the chain of ${entry.branch} goes on below ${oldest.commit.slice(0, 12)} with a commit that does not read as a snapshot (another chant's, or damaged), so nothing was pruned: a prune would drop it and everything under it`);
      }
      const raws = keptOldestFirst[0] === oldest.commit ? read : read.slice(1);
      let below: string | null = null;
      raws.forEach((raw, index) => {
        // One remote trailer for each replica recorded (a prune's marker names what every remote held), none when there is none.
        const remotes = (recorded.length === 0 ? ['none'] : recorded).map((replica) => `${PRUNED_REMOTE_TRAILER}: ${replica}\n`).join('');
        const marker = index === 0 ? `${PRUNED_TRAILER}: ${entry.tip}\n${remotes}` : '';
        const message = marker === '' ? raw.message : `${raw.message.replace(/\n*$/, '\n')}${marker}`;
        // Its own parents stay: the commit of the index a checkpoint recorded, and its head.
        const { own } = ownParents(raw);
        const bytes = commitBytes({ tree: raw.tree, parents: below === null ? own : [below, ...own], rest: raw.rest, message });
        bodies.push(bytes);
        below = objectId('commit', bytes, layout.objectFormat);
        renamed.set(keptOldestFirst[index] as string, below);
      });
      rewrites.push({ ref: entry.ref, next: below as unknown as string, expected: entry.tip });
      results.push({ branch: entry.branch, ref: entry.ref, tip: entry.tip, next: below, kept: kept.length, dropped });
    }
    // Nothing to drop, and gc asked for: it runs all the same, for what an earlier prune dropped
    // while its gc was left undone (a lock held past the wait, a fetch running).
    if (rewrites.length === 0) return { dryRun, rules, branches: results, collected: !dryRun && options.gc === true, replication: null };
    const pack = await writeCommits(early.git, context.cwd, bodies, layout.objectFormat);
    // The last moment a signal cancels: the move is the prune.
    checkNotAborted(signal);
    // The records name the checkpoints as written again before the move too, so that a prune
    // stopped after it (a kill) does not leave them naming only commits no chain holds.
    try {
      holdRenamedCheckpoints(markDirs, renamed);
    } catch (error) {
      throw new WipError('git-failed', `cannot write the record of a restore's checkpoint as this prune writes it again (${error instanceof Error ? error.message : String(error)}), so nothing was pruned: moved, the chain would hold that checkpoint under an id the record does not name, and the next prune would drop it`, { cause: error });
    }
    moved = true;
    // Every chain moves in one all-or-nothing transaction, each by compare-and-swap on the tip read.
    // A ref lock a killed save, restore or prune left would refuse it as a race, every time.
    for (const rewrite of rewrites) removeStaleRefLock(layout.commonDir, rewrite.ref);
    try {
      await moveRefs(context.git, context.cwd, rewrites, 'chant wip: prune');
    } catch (error) {
      // Only a ref found elsewhere than read, or held by another writer, is a race: a full disk or
      // a read-only git directory is git's own failure, said in its words.
      const said = error instanceof Error ? error.message : String(error);
      if (!RACED.test(said)) throw new WipError('git-failed', `${said}; nothing was dropped`, { cause: error });
      throw new WipError('wip-race', `a chain moved while it was pruned (a save in another worktree?); nothing was dropped, run the prune again`, { cause: error });
    }
    // A `git gc --prune=now` run by hand that walked the refs before the move and ends after it
    // deletes the pack just written, tips and all: the chains would name commits that are gone.
    // Once the refs name them a gc keeps them, so they are written again from the bytes here.
    if (!packThere(layout.objectsDir, pack)) await writeAgain(context, rewrites, bodies, [...renamed.values()], layout.objectFormat);
    renameMarkedCheckpoints(markDirs, renamed);
    try {
      await expireUnreachableReflogs(context.git, context.cwd, rewrites.map((rewrite) => rewrite.ref));
    } catch {
      // The chains are pruned; what the reflog holds is freed by the next prune. Another process
      // holding a ref's lock at that moment (a fetch moving it, git's pack-refs) failed the prune
      // after its work, and a save pruning on save after its snapshot was recorded. A gc asked
      // for tries again first: while the reflog names them, the dropped snapshots' objects stay.
      unexpired = rewrites.map((rewrite) => rewrite.ref);
    }
    return { dryRun, rules, branches: results, collected: options.gc === true, replication: null };
  };
  // The chains move holding the lock of every worktree, not only this one's: a restore in
  // another worktree takes its chain's tip as its checkpoint and records it as the last restore
  // under its own lock, and a prune that read the records before that record and moved the chain
  // after it would drop that checkpoint. Under every lock the records read are the ones that hold.
  const result = await (dryRun ? work() : underEveryLock(context, layout, () => cleaningMeanwhile(layout, work), (error) => error, () => checkNotAborted(signal))).catch(stopped);
  // The gc runs once the worktree's lock is let go, under every worktree's lock taken anew in one order.
  // A gc frees nothing a reflog still names: collected only once the expiry went through.
  // A gc not begun when the signal came is left undone: the chains are pruned all the same.
  if (result.collected && signal?.aborted === true) result.collected = false;
  if (result.collected) {
    let freed = unexpired.length === 0;
    const ran = await underEveryLock(context, layout, async () => {
      // Nor while a fetch brings objects no ref names yet (lib/managers/lock.ts, whileFetching).
      const collected = await collectUnlessFetching(layout.commonDir, async () => {
        if (!freed) freed = await expireUnreachableReflogs(context.git, context.cwd, unexpired).then(() => true, () => false);
        if (freed) await collectGarbageNow(context.git, context.cwd);
      });
      if (!collected) throw new LockNotTaken();
      return true;
    }, () => new LockNotTaken()).catch((error: unknown) => {
      if (error instanceof LockNotTaken) return false;
      throw error;
    });
    result.collected = ran && freed;
  }
  // The push runs outside the lock: it is the network, and a save may go on meanwhile.
  if (push && policy !== null) result.replication = (await replicatorOf(context, policy).pushPruned()).replication;
  return result;
}

/**
 * Writes again the commits of chains just moved whose pack is gone, and checks git holds each.
 * Where it cannot, the chains go back where they were (a gc that took the new commits had walked
 * the old ones, and their reflogs still name them) and the prune fails, saying so.
 */
async function writeAgain(context: StoreContext, rewrites: ReadonlyArray<{ ref: string; next: string; expected: string }>, bodies: readonly Buffer[], commits: readonly string[], objectFormat: string): Promise<void> {
  try {
    await writeCommits(context.git, context.cwd, bodies, objectFormat);
    const gone = await objectsGone(context.git, context.cwd, commits);
    if (gone.length > 0) throw new WipError('git-failed', `${gone.length} of them still missing once written again, ${(gone[0] as string).slice(0, 12)} first`);
  } catch (error) {
    const said = error instanceof Error ? error.message : String(error);
    const back = await moveRefs(context.git, context.cwd, rewrites.map((rewrite) => ({ ref: rewrite.ref, next: rewrite.expected, expected: rewrite.next })), 'chant wip: prune undone').then(() => true, () => false);
    // Neither the move nor its undo stays in the reflogs: both name commits that are gone, and git fsck says so.
    if (back) for (const rewrite of rewrites) await dropNewestReflogEntries(context.git, context.cwd, rewrite.ref, 2).catch(() => undefined);
    const where = back
      ? 'the chains were put back where they were, nothing was dropped'
      : `putting the chains back failed too: ${rewrites.map((rewrite) => `${rewrite.ref} was at ${rewrite.expected}`).join(', ')} (its reflog names it)`;
    throw new WipError('git-failed', `a git gc run meanwhile deleted the pruned chains' commits and writing them again failed (${said}); ${where}`, { cause: error });
  }
}

/**
 * A snapshot's parents split as a save or a restore wrote them: the snapshot below it (none for
 * a chain's first), then its own, the commit of the index a checkpoint recorded (when its
 * message names one) and the commit HEAD named.
 */
function ownParents(raw: RawCommit): { below: string | null; own: string[] } {
  const below = parentBelow(raw.parents, raw.message);
  return { below, own: below === null ? raw.parents : raw.parents.slice(1) };
}

/**
 * Runs `work` holding the chant lock of every worktree of the repository (the main git directory
 * and each linked worktree's; see withEveryWorktreeLock). The prune moves chains under them all:
 * a restore in any worktree records its checkpoint under its own lock, and the prune's read of
 * those records holds only while none can write one. Its gc runs under them all too (a `git gc
 * --prune=now`): a save or restore writes its objects before a ref names them, and a gc that
 * deletes every unreachable object at once would take them from under it (its snapshot would
 * then name objects that are gone).
 */
function underEveryLock<T>(context: StoreContext, layout: RepositoryLayout, work: () => Promise<T>, notTaken: (refusal: unknown) => unknown, stopWaiting?: () => void): Promise<T> {
  return withEveryWorktreeLock(everyGitDir(layout), work, notTaken, { ...(context.lockWaitMs === undefined ? {} : { waitMs: context.lockWaitMs }), ...(stopWaiting === undefined ? {} : { stopWaiting }) });
}

/** A worktree's lock that stayed held, or could not be taken: the gc is left undone. */
class LockNotTaken extends Error {}

/** The git directory of this worktree and of every worktree of the repository, each once, resolved. */
function everyGitDir(layout: RepositoryLayout): string[] {
  return [resolve(layout.gitDir), ...worktreeGitDirs(layout.commonDir)].filter((dir, index, all) => all.indexOf(dir) === index);
}

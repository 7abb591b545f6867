import { resolve } from 'node:path';
import type {
  FetchOutcome, FetchRef, FetchRefFailure, FetchResult, HeldBack, PolicyDocument, PushOutcome, PushResult, RefClass, RefPush, RefState, ReplicationState, Trigger,
} from '../documents/replication.js';
import { asWipError, callOptions, cancelledError, checkNotAborted, checkStoreOptions, WipError } from '../errors.js';
import { Events, parseGitProgress, report as reportProgress, settled } from '../events.js';
import type { ProgressListener } from '../events.js';
import { withSignal } from '../git/signal.js';
import { compareBytes } from '../order.js';
import {
  checkedOutBranches, commitGraph, fetchLfsObjects, fetchToStaging, pushLfsObjects, pushRefs,
  readRefTips, readRemoteConfig, recordConfirmation, usesLfs, withdrawConfirmation, writeRefs,
} from '../git/remote.js';
import type { NetworkOptions, RefPushStatus, RefTip, RefWrite, RefWriteFailure } from '../git/remote.js';
import { commonDirFromFiles } from '../git/loose-objects.js';
import { anyBrokenRef, repairBrokenRefs } from '../git/ref-repair.js';
import { Plumbing } from '../git/plumbing.js';
import { SimpleGitRunner } from '../git/runner.js';
import type { GitRunner } from '../git/runner.js';
import { ancestryOf, countReachable } from './ancestry.js';
import { chainHolds, replacedTipsEachSide } from '../git/storage.js';
import { gateRef, preloadScanner } from './secret-gate.js';
import { Policy, policyOf } from './policy.js';
import { classOf, classPatterns, namesCollide, probingPrefix, probingRefspecs, replicaPrefix, replicaRef, stagingPrefix, stagingRefspecs } from './ref-classes.js';
import { ASIDE_REF_PREFIX, WIP_REF_PREFIX } from '../snapshot/format.js';
import { whileFetching, withEveryWorktreeLock, withFetchLock } from '../managers/lock.js';
import { markedCheckpoints, unreadableMarks, worktreeGitDirs } from '../managers/restore-marker.js';

/**
 * What a {@link Replicator} works on and with.
 * @public
 */
export interface ReplicatorOptions {
  /** A folder inside the checkout. */
  cwd: string;
  /** How git is run; {@link SimpleGitRunner} when absent. */
  git?: GitRunner;
  /**
   * The replicate policy: a {@link Policy} (the one another replicator or {@link Policy.load}
   * gives), or its document as a caller built or stored it; null for none.
   */
  policy: Policy | PolicyDocument | null;
  /**
   * Receives git's progress during a push or fetch, one line at a time with its terminator
   * (`\r` for an update of the same line), credentials redacted. git is asked for progress
   * whether or not this is given (its output is what tells a slow transfer from a hang); the
   * results are the same either way. The CLI passes its stderr's `write` when stderr is a terminal.
   */
  progress?: (line: string) => void;
  /**
   * Milliseconds a network step (a push, a fetch, an LFS transfer) may go without progress
   * before git and everything it started (its transport helper, ssh) are stopped, and the step
   * fails with a reason that begins `the remote did not answer in time`: 60,000 when absent.
   * Progress is git's `--progress` output and, on Linux, CPU time or bytes its processes spend or
   * move (for a push, a fetch or an LFS transfer, at least 1,024 bytes within the timeout, so a remote trickling a
   * byte a second is stopped), so a slow but healthy link is never stopped, however long the
   * transfer takes. A whole number from 1.
   */
  timeoutMs?: number;
  /**
   * Whether a push runs the secret gate. True when absent, unless `CHANT_WIP_SECRET_SCAN` is
   * `off` in the environment: for a host that scans what leaves the box itself.
   */
  secretScan?: boolean;
}

/**
 * What {@link Replicator.open} works on.
 * @public
 */
export interface ReplicatorOpenOptions {
  /** A folder inside the checkout. */
  cwd: string;
  /** How git is run; {@link SimpleGitRunner} when absent. */
  git?: GitRunner;
  /** Receives git's progress during a push or fetch; see {@link ReplicatorOptions.progress}. */
  progress?: (line: string) => void;
  /** How long a network step may go without progress; see {@link ReplicatorOptions.timeoutMs}. */
  timeoutMs?: number;
  /** Whether a push runs the secret gate; see {@link ReplicatorOptions.secretScan}. */
  secretScan?: boolean;
}

/**
 * What one push, fetch or state read runs with.
 * @public
 */
export interface ReplicatorCallOptions {
  /**
   * Cancels the call: git is stopped and the call rejects with `wip-cancelled`. A push stopped
   * while git talks to the remote may have sent some refs, which the next push finds up to date;
   * nothing is recorded locally after the signal.
   */
  signal?: AbortSignal;
  /** Receives git's progress as `{phase, done, total}` (`writing objects`, `receiving objects`, ...), then `refs`. */
  onProgress?: ProgressListener;
}

/**
 * The events a {@link Replicator} emits, by name, with what each listener receives.
 * @public
 */
export interface ReplicatorEvents {
  /** A push finished (by {@link Replicator.push}, {@link Replicator.pushPruned}, {@link Replicator.pushOrReport} or {@link Replicator.after}): what it did. */
  push: PushResult;
  /** A fetch finished: what it did. */
  fetch: FetchResult;
}

/**
 * Options of {@link Replicator.push} and {@link Replicator.pushPruned}.
 * @public
 */
export interface PushOptions extends ReplicatorCallOptions {
  /**
   * Ids of secret findings the host acknowledges (false positives, fixtures): the snapshots
   * holding them go this once. The declaration's allowlist goes always.
   */
  allow?: readonly string[];
}

/**
 * Options of {@link Replicator.after}.
 * @public
 */
export interface AfterOptions extends ReplicatorCallOptions {
  /**
   * Wip refs a prune just rewrote (a save that applied the declaration's retention): each goes
   * with a lease on the replica chant recorded, as {@link Replicator.pushPruned} sends it. None when absent.
   */
  leased?: readonly string[];
}

/** The local refs of the policy's classes and what is known of the remote, read in two processes. */
interface LocalView {
  policy: Policy;
  remoteConfigured: boolean;
  sshCommand: string | null;
  secrets: string[];
  /** The remote's URLs, digested: what a confirmation is recorded against. */
  fingerprint: string;
  /** When the remote last answered at these URLs, or null: then no replica is proof. */
  confirmedAt: string | null;
  lfsFilter: boolean;
  /**
   * Each local ref with its proof: the replica chant recorded from the remote's own answer, at the
   * URLs the remote has now, or null.
   */
  refs: Array<RefTip & { class: RefClass; replica: string | null }>;
  /** Every replica ref recorded, proof or not, by its replica refname. */
  replicas: Map<string, string>;
  /**
   * Commits a count of what the remote lacks may stop at: the replicas, and git's remote-tracking
   * refs. Hints for `ahead`, never proof of `replicated`.
   */
  known: string[];
  /**
   * Commits the secret gate takes the remote to hold, and scans nothing under: the replicas while
   * they are proof (recorded at the URLs the remote has now), and git's remote-tracking refs.
   */
  held: string[];
}

/** How many times a fetch re-reads local refs that another writer moved under it. */
const FETCH_ATTEMPTS = 3;

/** How many times a push sends again the refs another push moved on the remote meanwhile. */
const RACE_ATTEMPTS = 3;

/** The porcelain reasons of a push refused because the remote's ref is not an ancestor of what went. */
const NO_FAST_FORWARD = /\b(?:non-fast-forward|fetch first)\b/;
/** git's refusal of a ref whose name another ref's is in the way of: the name in the way, then the ref. */
const NAME_CLASH = /'([^']+)' exists; cannot create '([^']+)'/g;

/**
 * What the remote says of a ref another push was updating at the same moment: its lock was held,
 * or the ref was no longer what the remote had advertised (created meanwhile, or moved). The ref
 * it names is the one that raced: a ref's reason holds every error of its push.
 */
const REMOTE_RACE = /cannot lock ref '([^']+)': (?:is at [0-9a-f]+ but expected [0-9a-f]+|reference already exists|Unable to create '[^']+\.lock': File exists)/g;

/**
 * Replicates the refs a policy names (work branches, kept attempts, wip snapshots, the ledger)
 * to the git remote it names, and brings them back on a replacement box. What the remote was
 * last seen to hold is recorded under `refs/chant/replica/<remote>/`, so {@link Replicator.state}
 * reads locally and never fetches. git never prompts: a remote that wants a credential the host
 * did not broker refuses at once.
 *
 * @example
 * ```ts
 * const replicator = await Replicator.open({ cwd: process.cwd() }); // the declaration's policy
 * const state = await replicator.state();
 * if (state !== null && !state.replicated) {
 *   const { replication } = await replicator.push();
 *   for (const { ref, reason } of replication.rejected) console.error(`${ref}: ${reason}`);
 * }
 * // On a replacement box, showing git's progress to a person watching:
 * const fresh = await Replicator.open({ cwd: process.cwd(), progress: (line) => process.stderr.write(line) });
 * const { refs, failed } = await fresh.fetch();
 * ```
 * @public
 */
export class Replicator {
  readonly #cwd: string;
  readonly #git: GitRunner;
  readonly #policy: Policy | null;
  readonly #progress: ((line: string) => void) | undefined;
  readonly #timeoutMs: number | undefined;
  readonly #secretScan: boolean;
  readonly #events = new Events<ReplicatorEvents>();

  /**
   * A replicator following a policy already read.
   * @param options - the checkout, its policy, where progress goes, the network timeout, and the
   *   runner to swap in tests
   * @throws {@link WipError} `write-usage-invalid` when `timeoutMs` is not a whole number from 1
   */
  constructor(options: ReplicatorOptions) {
    checkStoreOptions(options, 'Replicator');
    this.#cwd = options.cwd;
    this.#git = options.git ?? new SimpleGitRunner(options.cwd);
    this.#policy = options.policy === null ? null : policyOf(options.policy);
    const progress = options.progress;
    // The caller's sink, its failures its own: one that throws, or an async one that rejects
    // (which, unhandled, ended the process mid-push), never stops the push or the fetch.
    this.#progress = progress === undefined ? undefined : (line) => {
      try {
        settled(progress(line));
      } catch {
        // Progress is for people watching.
      }
    };
    this.#timeoutMs = checkNetworkTimeout(options.timeoutMs);
    this.#secretScan = options.secretScan ?? process.env.CHANT_WIP_SECRET_SCAN !== 'off';
  }

  /**
   * Listens to this replicator's events: `push` after each push, `fetch` after each fetch. A
   * listener that throws never fails the call.
   * @param name - the event
   * @param listener - what to call with it
   * @returns the function that removes the listener
   */
  on<K extends keyof ReplicatorEvents>(name: K, listener: (event: ReplicatorEvents[K]) => void): () => void {
    return this.#events.on(name, listener);
  }

  /**
   * Runs `work` on a replicator for this one call: its git stops on the signal, its progress
   * goes to the line sink and, parsed, to `onProgress`. A failure after the signal is `wip-cancelled`.
   */
  async #call<T>(options: ReplicatorCallOptions, work: (scoped: Replicator) => Promise<T>): Promise<T> {
    const { signal, onProgress } = options;
    checkNotAborted(signal);
    if (signal === undefined && onProgress === undefined) return work(this);
    const lines = this.#progress;
    const progress = onProgress === undefined ? lines : (line: string) => {
      lines?.(line);
      const parsed = parseGitProgress(line);
      if (parsed !== null) reportProgress(onProgress, parsed.phase, parsed.done, parsed.total);
    };
    const scoped = new Replicator({
      cwd: this.#cwd, git: withSignal(this.#git, signal), policy: this.#policy, secretScan: this.#secretScan, ...(progress === undefined ? {} : { progress }),
      ...(this.#timeoutMs === undefined ? {} : { timeoutMs: this.#timeoutMs }),
    });
    try {
      return await work(scoped);
    } catch (error) {
      if (signal?.aborted === true) throw cancelledError(signal);
      throw error;
    }
  }

  /**
   * A replicator for a checkout, following the policy its workspace declaration states.
   * @param options - the checkout, where progress goes, the network timeout, and the runner to swap in tests
   * @returns the replicator (its policy null when no box declares replicate)
   * @throws {@link WipError} `not-a-git-repository`, a declaration code, or `write-usage-invalid`
   *   for a `timeoutMs` that is not a whole number from 1
   */
  static async open(options: ReplicatorOpenOptions): Promise<Replicator> {
    checkStoreOptions(options, 'Replicator.open');
    const git = options.git ?? new SimpleGitRunner(options.cwd);
    const layout = await new Plumbing(git, options.cwd).layout();
    const policy = await Policy.load({ cwd: options.cwd, top: layout.top, git });
    return new Replicator({
      cwd: options.cwd, git, policy, progress: options.progress,
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      ...(options.secretScan === undefined ? {} : { secretScan: options.secretScan }),
    });
  }

  /**
   * The policy this replicator follows, or null: the same {@link Policy} a {@link WipStore}
   * takes, so `new WipStore({ cwd, policy: replicator.policy })` follows it too.
   * `JSON.stringify` (or `toJSON()`) gives its `PolicyDocument`.
   */
  get policy(): Policy | null {
    return this.#policy;
  }

  /**
   * Where every local ref of the policy's classes stands against the remote, read from local refs
   * only: a fixed handful of git processes however many refs there are.
   * @returns the state, refs sorted by refname; null when there is no policy
   * @throws {@link WipError} `git-failed`
   */
  async state(): Promise<ReplicationState | null> {
    const policy = this.#policy;
    if (policy === null) return null;
    const view = await this.#view(policy);
    const behind = view.refs.filter((ref) => ref.replica !== ref.commit);
    const graph = await commitGraph(this.#git, this.#cwd, behind.map((ref) => ref.commit), view.known);
    const counts = new Map<string, number>();
    const refs: RefState[] = view.refs.map((ref) => {
      const replicated = ref.replica === ref.commit;
      let ahead = 0;
      if (!replicated) {
        ahead = counts.get(ref.commit) ?? countReachable(graph, ref.commit);
        counts.set(ref.commit, ahead);
      }
      return { ref: ref.ref, class: ref.class, commit: ref.commit, replica: ref.replica, replicated, ahead };
    });
    return { policy: policy.toJSON(), remoteConfigured: view.remoteConfigured, replicated: behind.length === 0, refs, confirmedAt: view.confirmedAt };
  }

  /**
   * Asks the remote about every ref of the policy's classes and pushes each it does not hold as it
   * is locally, under its own name, never forced, with no pre-push hook: one round trip when
   * nothing is due, so a remote recreated empty or re-pointed is found out. A ref the remote
   * refuses (one that would rewrite it, one its hook or object check refuses) is listed in
   * `rejected` with the remote's reason and the other refs still go; what the remote answered is
   * recorded under `refs/chant/replica/<remote>/` as proof. When the repository keeps LFS objects,
   * the ones the pushed commits need go to the remote's LFS store too. Before anything goes, the
   * files the wip refs' new snapshots add are scanned for likely secrets (secretlint's
   * recommended rules): a snapshot holding one stays local with every snapshot above it, listed
   * in `heldBack` with the path, rule and line, until the finding is allowed or the file changes.
   * @param options - `allow`: finding ids the host acknowledges, which go this once
   * @returns the policy and what the push did, refs sorted by refname
   * @throws {@link WipError} `wip-policy-none`, `wip-remote-unknown`, `wip-cancelled` or `git-failed`
   */
  async push(options: PushOptions = {}): Promise<PushOutcome> {
    options = callOptions(options, 'Replicator.push');
    const policy = this.#required();
    const replication = await this.#call(options, async (scoped) => {
      scoped.#preload(policy);
      const view = await scoped.#view(policy);
      if (!view.remoteConfigured) throw unknownRemote(policy);
      return scoped.#pastRaces(policy, await scoped.#push(view, view.refs, options, undefined, options.allow), options, options.allow);
    });
    this.#events.emit('push', replication);
    return { policy: policy.toJSON(), replication };
  }

  /**
   * Pushes the wip refs a prune rewrote (every wip ref of the policy the remote does not hold as
   * it is locally), each with a lease on the replica chant recorded from the remote's answer
   * (`--force-with-lease=<ref>:<replica>`, proof or not, since the remote checks it; a ref with no
   * replica recorded must not exist on the remote). When another box pushed to the ref since chant recorded it, the remote refuses
   * (`stale info`), the ref is listed in `rejected` and the remote keeps every snapshot it held.
   * `push` itself stays never forced. The secret gate applies as it does to {@link Replicator.push}.
   * @param options - `allow`: finding ids the host acknowledges
   * @returns the policy and what the push did
   * @throws {@link WipError} `wip-policy-none`, `wip-remote-unknown`, `wip-cancelled` or `git-failed`
   */
  async pushPruned(options: PushOptions = {}): Promise<PushOutcome> {
    options = callOptions(options, 'Replicator.pushPruned');
    const policy = this.#required();
    const replication = await this.#call(options, async (scoped) => {
      scoped.#preload(policy);
      const view = await scoped.#view(policy);
      if (!view.remoteConfigured) throw unknownRemote(policy);
      const refs = view.refs.filter((ref) => ref.class === 'wip');
      const leases = new Map(refs.map((ref) => [ref.ref, recordedLease(view, ref.ref)]));
      return scoped.#pushLeased({ ...view, refs }, refs, options, leases, options.allow);
    });
    this.#events.emit('push', replication);
    return { policy: policy.toJSON(), replication };
  }

  /**
   * The push a save or a release makes: like {@link Replicator.push}, except that it sends only the
   * refs without proof (none: no network at all), and a missing remote rejects every ref (reason
   * `no git remote named <name> is configured`) instead of throwing.
   * @param options - `leased`: wip refs a prune rewrote, sent with a lease on their replica
   * @returns what the push did
   * @throws {@link WipError} `wip-policy-none`, or `git-failed` when the local refs cannot be read
   */
  async pushOrReport(options: AfterOptions = {}): Promise<PushResult> {
    options = callOptions(options, 'Replicator.pushOrReport');
    const policy = this.#required();
    const result = await this.#call(options, async (scoped) => {
      scoped.#preload(policy);
      const view = await scoped.#view(policy);
      if (!view.remoteConfigured) {
        const reason = `no git remote named ${policy.remote} is configured`;
        return { remote: policy.remote, pushed: [], rejected: view.refs.map((ref) => ({ ref: ref.ref, commit: ref.commit, reason })), upToDate: 0 };
      }
      const leased = new Set(options.leased ?? []);
      const leases = new Map(view.refs.filter((ref) => ref.class === 'wip' && leased.has(ref.ref)).map((ref) => [ref.ref, recordedLease(view, ref.ref)]));
      const candidates = view.refs.filter((ref) => ref.replica !== ref.commit);
      if (leases.size > 0) return scoped.#pushLeased(view, candidates, options, leases);
      return scoped.#pastRaces(policy, await scoped.#push(view, candidates, options), options);
    });
    this.#events.emit('push', result);
    return result;
  }

  /**
   * Brings the remote's refs of the policy's classes home. They are mirrored into
   * `refs/chant/replica/<remote>/` (pruned, every object checked as it arrives); then each local
   * ref that is missing is created and each that is behind is fast-forwarded, by
   * compare-and-swap. A branch checked out in any worktree, a local ref that moved on (`ahead`)
   * or forked (`diverged`) is left alone. When the remote cannot be fetched from, `failed` says
   * why and `refs` is worked out, the same way, from what earlier fetches recorded, leaving out
   * the refs equal to that record. A replica or staging ref that cannot be written (a stale
   * lock) is left as it is and named in `failed`; the local refs come all the same. Fetches of
   * one repository run one after the other, in this process and across processes.
   * @returns the policy, each remote ref sorted by refname with what was done, and `failed`
   * @throws {@link WipError} `wip-policy-none`, `wip-remote-unknown`, `wip-race`, `wip-cancelled` or `git-failed`
   */
  async fetch(options: ReplicatorCallOptions = {}): Promise<FetchResult> {
    options = callOptions(options, 'Replicator.fetch');
    const policy = this.#required();
    const commonDir = commonDirFromFiles(this.#cwd);
    const key = `${commonDir ?? resolve(this.#cwd)}\0${policy.remote}`;
    // And one after the other across processes: they share the staging refs as well.
    const fetch = () => this.#call(options, (scoped) => scoped.#fetch(policy, options));
    const result = await oneFetchAtATime(key, options.signal, () => (commonDir === null ? fetch() : withFetchLock(commonDir, fetch, { waitMs: FETCH_LOCK_WAIT_MS, stopWaiting: () => checkNotAborted(options.signal) })));
    this.#events.emit('fetch', result);
    return result;
  }

  async #fetch(policy: Policy, options: ReplicatorCallOptions): Promise<FetchResult> {
    await this.#repairBroken();
    const remote = await readRemoteConfig(this.#git, this.#cwd, policy.remote);
    if (!remote.exists) throw unknownRemote(policy);
    const network = this.#network(remote.sshCommand, remote.secrets);
    // Under a marker a prune's git gc --prune=now looks for: what git brings is named by no ref until it ends.
    const commonDir = commonDirFromFiles(this.#cwd);
    const fetching = () => fetchToStaging(this.#git, this.#cwd, policy.remote, stagingRefspecs(policy.remote, policy.refs), network);
    const unreachable = commonDir === null ? await fetching() : await whileFetching(commonDir, fetching, { stopWaiting: () => checkNotAborted(options.signal) });
    const fresh = unreachable === null;
    let failed = unreachable;
    const failedRefs: FetchRefFailure[] = [];
    const excluded = new Set<string>();
    let races = 0;
    let lfsDone = !fresh || !remote.lfsFilter;
    // Bookkeeping refs (replicas, staging refs) that cannot be written here, left out of the
    // transaction so that the local refs still come home.
    const unwritten: RefWriteFailure[] = [];
    const bookkeeping = (ref: string) => ref.startsWith(replicaPrefix(policy.remote)) || ref.startsWith(stagingPrefix(policy.remote));
    // A chain another box pruned is taken over this box's only under the chant lock of every
    // worktree, planned and written there: the plan reads the records of the last restores, and
    // a restore that took the chain's tip as its checkpoint (no ref moved, so the swap cannot
    // tell) recorded it under its own lock after the plan read them; the chain taken lacked that
    // checkpoint, and the restore had no undo once git's gc ran.
    let everyLock = false;
    let refused = false;
    const takesPruned = (refs: readonly FetchRef[]) => refs.some((ref) => ref.pruned === true && ref.aside === undefined);
    const underEveryLock = async <T>(work: () => Promise<T>): Promise<T> => withEveryWorktreeLock(worktreeGitDirs(commonDir as string), async () => {
      everyLock = true;
      try {
        return await work();
      } finally {
        everyLock = false;
      }
    }, (refusal) => {
      refused = true;
      return refusal;
    }, { stopWaiting: () => checkNotAborted(options.signal) });
    const writeHome = async (): Promise<FetchResult> => { for (;;) {
      const plan = await this.#fetchPlan(policy, fresh, excluded);
      if (!everyLock && commonDir !== null && takesPruned(plan.refs)) throw new EveryLockNeeded();
      if (!lfsDone) {
        // Before any ref is written: what a restore of what came needs, from the remote's LFS store.
        lfsDone = true;
        failed = await fetchLfsObjects(this.#git, this.#cwd, policy.remote, plan.staged, network);
      }
      const writes = plan.writes.filter((write) => !unwritten.some((left) => left.ref === write.ref));
      let failure;
      try {
        // Nothing local is written after the signal: the staged refs go with the rest.
        checkNotAborted(options.signal);
        reportProgress(options.onProgress, 'refs', 0, writes.length);
        failure = await writeRefs(this.#git, this.#cwd, writes, 'chant wip: fetch');
      } catch (error) {
        await this.#dropStaging(plan.staging);
        throw asWipError(error);
      }
      if (failure === null) {
        if (plan.later.length > 0) unwritten.push(...(await this.#record(plan.later)).filter((left) => !left.moved));
        const replicasLeft = unwritten.filter((left) => left.ref.startsWith(replicaPrefix(policy.remote)));
        // A replica left as it was may say the remote holds what it no longer does: no replica is
        // proof until a push or fetch records them all.
        if (replicasLeft.length > 0) await withdrawConfirmation(this.#git, this.#cwd, policy.remote);
        // What the fetch URL holds proves nothing of push URLs elsewhere: the replicas it wrote are
        // no proof there until a push records them (else a save's push skipped a ref the push URL lacked).
        else if (fresh && remote.pushesElsewhere) await withdrawConfirmation(this.#git, this.#cwd, policy.remote);
        else if (fresh) await recordConfirmation(this.#git, this.#cwd, policy.remote, remote.fingerprint, new Date());
        if (unwritten.length > 0) failed = [failed, unwrittenReason(policy.remote, unwritten)].filter((part) => part !== null).join('; ');
        failedRefs.sort((a, b) => compareBytes(a.ref, b.ref));
        reportProgress(options.onProgress, 'refs', writes.length, writes.length);
        return failedRefs.length === 0 ? { policy: policy.toJSON(), refs: plan.refs, failed } : { policy: policy.toJSON(), refs: plan.refs, failed, failedRefs };
      }
      if (bookkeeping(failure.ref) && !failure.moved && writes.some((write) => write.ref === failure.ref)) {
        // A record of what the remote holds, or a staging ref to empty, cannot be written (a lock
        // held): it is left as it is, said in `failed`, and the local refs come all the same.
        unwritten.push(failure);
        continue;
      }
      // The aside ref a chain was to be moved to cannot be written (a lock held): the chain stays as it is, diverged, and the rest come.
      if (plan.refs.some((ref) => ref.aside === failure.ref) && !failure.moved) {
        excluded.add(failure.ref);
        continue;
      }
      const move = plan.refs.find((ref) => (ref.ref === failure.ref || ref.aside === failure.ref) && (ref.result === 'created' || ref.result === 'fast-forward'));
      if (move !== undefined && !failure.moved) {
        // This one ref cannot be written here (a name in the way, a lock held): say so, bring the rest.
        excluded.add(move.ref);
        failedRefs.push({ ref: move.ref, class: move.class, remote: move.remote, local: move.local, reason: failure.reason });
        continue;
      }
      if (move !== undefined && races < FETCH_ATTEMPTS - 1) {
        // Another writer moved a local ref meanwhile; nothing was written: plan again from the refs as they are.
        races += 1;
        continue;
      }
      await this.#dropStaging(plan.staging);
      if (move !== undefined) throw new WipError('wip-race', `local refs kept moving under ${FETCH_ATTEMPTS} attempts to update them from ${policy.remote}; nothing was lost, try again`);
      throw new WipError('git-failed', `git update-ref could not write ${failure.ref}: ${failure.reason}`);
    } };
    try {
      return await writeHome();
    } catch (error) {
      if (!(error instanceof EveryLockNeeded)) throw error;
    }
    try {
      return await underEveryLock(writeHome);
    } catch (error) {
      // A save or restore that held its worktree past the wait: the staged refs go, nothing came home.
      if (!refused) throw error;
      // (After a cancel git is not run again: the next fetch stages anew over what is left.)
      const staging = await readRefTips(this.#git, this.#cwd, [stagingPrefix(policy.remote)]).then((tips) => tips.map((tip) => tip.ref), () => []);
      await this.#dropStaging(staging);
      throw error;
    }
  }

  /**
   * Pushes when the policy's `on` names the trigger: `save` after a wip save, `release` after a
   * work lease is released. Never throws.
   * @param trigger - what just happened
   * @param options - `leased`: wip refs a prune rewrote, sent with a lease on their replica
   * @returns what the push did; null when there is no policy or its `on` leaves the trigger out
   */
  async after(trigger: Trigger, options: AfterOptions = {}): Promise<PushResult | null> {
    const policy = this.#policy;
    if (policy === null || !policy.has(trigger)) return null;
    try {
      return await this.pushOrReport(options);
    } catch {
      // Only a checkout whose refs cannot be read gets here: nothing could be listed, nothing went.
      return { remote: policy.remote, pushed: [], rejected: [], upToDate: 0 };
    }
  }

  #network(sshCommand: string | null, secrets: readonly string[]): NetworkOptions {
    return { sshCommand, secrets, progress: this.#progress, ...(this.#timeoutMs === undefined ? {} : { timeoutMs: this.#timeoutMs }) };
  }

  #required(): Policy {
    if (this.#policy === null) throw new WipError('wip-policy-none', 'no box in the workspace declaration declares replicate, so there is no remote to replicate to');
    return this.#policy;
  }

  /**
   * Puts back the wip refs a crash or a power loss left broken, as the list and a save do: git
   * passes over such a ref, so a push left its chain out saying nothing, and a fetch failed whole
   * on it as a bad object.
   */
  async #repairBroken(): Promise<void> {
    const commonDir = commonDirFromFiles(this.#cwd);
    const prefixes = [WIP_REF_PREFIX, ASIDE_REF_PREFIX];
    if (commonDir !== null && !anyBrokenRef(commonDir, prefixes)) return;
    const plumbing = new Plumbing(this.#git, this.#cwd);
    await repairBrokenRefs(plumbing, await plumbing.layout(), prefixes);
  }

  async #view(policy: Policy): Promise<LocalView> {
    await this.#repairBroken();
    const replicas = replicaPrefix(policy.remote);
    const tracking = `refs/remotes/${policy.remote}/`;
    const [remote, tips] = await Promise.all([
      readRemoteConfig(this.#git, this.#cwd, policy.remote),
      readRefTips(this.#git, this.#cwd, [...classPatterns(policy.refs), replicas, tracking]),
    ]);
    const recorded = new Map<string, string>();
    const known = new Set<string>();
    const refs: LocalView['refs'] = [];
    const held = new Set<string>();
    for (const tip of tips) {
      if (tip.ref.startsWith(replicas)) recorded.set(tip.ref, tip.commit);
      if (tip.ref.startsWith(replicas) || tip.ref.startsWith(tracking)) known.add(tip.commit);
      // A record is what the secret gate takes the remote to hold, so leaves unscanned, only while
      // it is proof: recorded at the URLs the remote has now. Recorded at others (the remote
      // pointed at a new server), what it names went there, not to where the push goes.
      if ((tip.ref.startsWith(replicas) && remote.confirmedAt !== null) || tip.ref.startsWith(tracking)) held.add(tip.commit);
    }
    for (const tip of tips) {
      const name = classOf(tip.ref);
      if (name === null || !policy.refs.includes(name)) continue;
      // Proof is what the remote answered at the URLs it has now; remote-tracking refs never are.
      const replica = remote.confirmedAt === null ? null : recorded.get(replicaRef(policy.remote, tip.ref)) ?? null;
      refs.push({ ...tip, class: name, replica });
    }
    return {
      policy, remoteConfigured: remote.exists, sshCommand: remote.sshCommand, secrets: remote.secrets, fingerprint: remote.fingerprint,
      confirmedAt: remote.confirmedAt, lfsFilter: remote.lfsFilter, refs, replicas: recorded, known: [...known], held: [...held],
    };
  }

  /**
   * Pushes `candidates` (refs of `view`; the others are proven up to date), each through the
   * secret gate, and records what the remote answered as proof.
   */
  async #push(view: LocalView, candidates: LocalView['refs'], options: ReplicatorCallOptions, leases?: ReadonlyMap<string, string | null>, allow: readonly string[] = []): Promise<PushResult> {
    const remote = view.policy.remote;
    const { due, sources, heldBack } = await this.#gate(view, candidates, allow);
    const network = this.#network(view.sshCommand, view.secrets);
    const leased = leases === undefined ? undefined : await this.#heldLeases(due, leases);
    const report = due.length === 0
      ? { statuses: new Map<string, RefPushStatus>(), reached: false }
      : await pushRefs(this.#git, this.#cwd, remote, due.map((ref) => ref.ref), { ...network, sources, ...(leased === undefined ? {} : { leases: leased }) });
    if (report.reached) await this.#clearNamesInTheWay(view, due, report, { ...network, sources });
    const aside = report.reached ? await this.#sendAside(view, due, report, network, new Set(leases?.keys() ?? [])) : { went: new Map<string, string>(), dropped: [] };
    if (report.reached && view.lfsFilter) {
      // What git-lfs's pre-push hook would have sent, had chant run hooks: the LFS objects of every
      // commit that went (the gate's, not the ref's tip), and of every ref the remote holds that
      // chant has no proof of.
      const needing = due.filter((ref) => {
        const status = report.statuses.get(ref.ref);
        return status?.status === 'pushed' || (status?.status === 'up-to-date' && ref.replica !== ref.commit) || aside.went.has(ref.ref);
      });
      if (needing.length > 0 && (await usesLfs(this.#git, this.#cwd))) {
        const failure = await pushLfsObjects(this.#git, this.#cwd, remote, needing.map((ref) => ref.commit), network);
        if (failure !== null) {
          for (const ref of needing) {
            report.statuses.set(ref.ref, { status: 'rejected', reason: failure });
            // Not recorded: the next push names the aside chain again, finds it there, and sends its LFS objects.
            aside.went.delete(ref.ref);
          }
        }
      }
    }
    const pushed: RefPush[] = [];
    const rejected: RefPush[] = [];
    const writes: RefWrite[] = [];
    let upToDate = view.refs.length - candidates.length;
    const confirmed = new Set<string>();
    for (const ref of due) {
      const status = report.statuses.get(ref.ref) ?? { status: 'rejected', reason: 'not pushed' };
      const replica = replicaRef(remote, ref.ref);
      if (status.status === 'rejected') {
        rejected.push({ ref: ref.ref, commit: ref.commit, reason: status.reason });
        // The remote answered that it does not take this commit: a record that says it holds it is no proof.
        if (report.reached && view.replicas.get(replica) === ref.commit) writes.push({ ref: replica, next: null });
        const went = aside.went.get(ref.ref);
        if (went !== undefined) writes.push({ ref: replicaRef(remote, `${ASIDE_REF_PREFIX}${went}`), next: went });
        continue;
      }
      confirmed.add(ref.ref);
      if (status.status === 'pushed') pushed.push({ ref: ref.ref, commit: ref.commit });
      else upToDate += 1;
      if (view.replicas.get(replica) !== ref.commit) writes.push({ ref: replica, next: ref.commit });
    }
    for (const name of aside.dropped) writes.push({ ref: replicaRef(remote, name), next: null });
    // The push confirms the remote at its URLs: a record made at others (the remote pointed at a
    // new server) of a ref the remote did not take now (the gate held it back, the remote refused
    // it) would then read as proof of what the new server never took, and the gate would send
    // what lies under it unscanned. Such records go.
    if (view.confirmedAt === null) {
      for (const ref of candidates) {
        const replica = replicaRef(remote, ref.ref);
        if (view.replicas.has(replica) && !confirmed.has(ref.ref) && !writes.some((write) => write.ref === replica)) writes.push({ ref: replica, next: null });
      }
    }
    reportProgress(options.onProgress, 'refs', due.length, due.length);
    // git stopped by the signal reports its refs as rejected; nothing is recorded after it.
    checkNotAborted(options.signal);
    if (report.reached) {
      const left = await this.#record(writes);
      // A record the remote refused that could not be deleted (a stale lock) would read as proof
      // that the remote holds it: the confirmation goes instead, so nothing reads replicated until
      // a push or fetch records everything again. A record left older than the remote proves less, never more.
      const falseProof = left.some((failure) => writes.some((write) => write.ref === failure.ref && write.next === null));
      if (falseProof) await withdrawConfirmation(this.#git, this.#cwd, remote);
      else await recordConfirmation(this.#git, this.#cwd, remote, view.fingerprint, new Date());
    }
    return { remote, pushed, rejected, upToDate, ...(heldBack.length > 0 ? { heldBack } : {}) };
  }

  /**
   * {@link Replicator.#push} with leases, where a lease on a record that is no proof (see
   * recordedLease) and that the remote refused as `stale info` is tried once more as "must not
   * exist": the record may be of another URL than the one pushed to (the remote pointed at a new
   * mirror), which then holds nothing of the ref. The remote checks either lease itself.
   */
  async #pushLeased(view: LocalView, candidates: LocalView['refs'], options: ReplicatorCallOptions, leases: ReadonlyMap<string, string | null>, allow: readonly string[] = []): Promise<PushResult> {
    const first = await this.#push(view, candidates, options, leases, allow);
    const unproven = (ref: LocalView['refs'][number]) => leases.get(ref.ref) !== undefined && leases.get(ref.ref) !== null && ref.replica === null;
    const again = candidates.filter((ref) => unproven(ref) && first.rejected.some((entry) => entry.ref === ref.ref && /stale info/.test(entry.reason ?? '')));
    if (again.length === 0) return first;
    checkNotAborted(options.signal);
    const retried = await this.#push({ ...view, refs: again }, again, options, new Map(again.map((ref) => [ref.ref, null])), allow);
    const sorted = (entries: RefPush[]) => entries.sort((a, b) => compareBytes(a.ref, b.ref));
    return {
      ...first,
      pushed: sorted([...first.pushed, ...retried.pushed]),
      rejected: sorted([...first.rejected.filter((entry) => !again.some((ref) => ref.ref === entry.ref)), ...retried.rejected]),
      upToDate: first.upToDate + retried.upToDate,
    };
  }

  /**
   * `result`, with each ref the remote refused only because another push moved it there
   * meanwhile (several saves at once each pushing the chain: the remote's lock of the ref was
   * held, or the ref was no longer what it advertised) pushed again from the local refs read
   * anew, up to {@link RACE_ATTEMPTS} times. Such a ref would otherwise read rejected though
   * nothing the remote holds was refused, while the remote took a newer tip of it a moment later.
   */
  async #pastRaces(policy: Policy, result: PushResult, options: ReplicatorCallOptions, allow: readonly string[] = []): Promise<PushResult> {
    for (let attempt = 0; attempt < RACE_ATTEMPTS; attempt += 1) {
      const raced = new Set(result.rejected.filter((ref) => [...(ref.reason ?? '').matchAll(REMOTE_RACE)].some((match) => match[1] === ref.ref)).map((ref) => ref.ref));
      if (raced.size === 0) return result;
      checkNotAborted(options.signal);
      const view = await this.#view(policy);
      const refs = view.refs.filter((ref) => raced.has(ref.ref));
      // A ref gone from here meanwhile keeps what the remote said of it.
      if (refs.length !== raced.size) return result;
      const again = await this.#push({ ...view, refs }, refs.filter((ref) => ref.replica !== ref.commit), options, undefined, allow);
      result = {
        ...result,
        pushed: [...result.pushed, ...again.pushed].sort((a, b) => compareBytes(a.ref, b.ref)),
        rejected: [...result.rejected.filter((ref) => !raced.has(ref.ref)), ...again.rejected].sort((a, b) => compareBytes(a.ref, b.ref)),
        upToDate: result.upToDate + again.upToDate,
        ...(result.heldBack !== undefined || again.heldBack !== undefined ? { heldBack: [...(result.heldBack ?? []).filter((entry) => !raced.has(entry.ref)), ...(again.heldBack ?? [])].sort((a, b) => compareBytes(a.ref, b.ref)) } : {}),
      };
    }
    return result;
  }

  /**
   * The leases of `leases` a push may rewrite its refs with: a lease on a replica the local chain
   * holds (see chainHolds), or on none. A chain that never held what the remote holds (another
   * box pushed above it) goes without one, so never forced: the remote refuses it as it refuses
   * any push that is no fast-forward, and keeps every snapshot it held.
   */
  async #heldLeases(due: LocalView['refs'], leases: ReadonlyMap<string, string | null>): Promise<Map<string, string | null>> {
    const held = new Map<string, string | null>();
    for (const ref of due) {
      if (!leases.has(ref.ref)) continue;
      const replica = leases.get(ref.ref) ?? null;
      if (replica === null || await chainHolds(this.#git, this.#cwd, ref.commit, replica)) held.set(ref.ref, replica);
    }
    return held;
  }

  /**
   * A wip chain moved aside (`refs/chant/wip/a` to `refs/chant/wip-aside/<tip>`, its name in the
   * way of a new branch's `refs/chant/wip/a/b`) leaves its old name on the remote, where it refuses
   * the new chain's push for ever (`'refs/chant/wip/a' exists; cannot create ...`). When the remote
   * holds an aside chain that contains what chant recorded of the old name (it went in this push,
   * or a proof says so), the old name is deleted there with a lease on that record, which refuses
   * if another box pushed to it since: nothing the remote held is lost, since the aside chain
   * holds those snapshots and more. Then the refused chains go again, and `report` says how.
   */
  async #clearNamesInTheWay(view: LocalView, due: LocalView['refs'], report: { statuses: Map<string, RefPushStatus> }, network: NetworkOptions & { sources: ReadonlyMap<string, string> }): Promise<void> {
    const refused = due.filter((ref) => ref.ref.startsWith(WIP_REF_PREFIX) && report.statuses.get(ref.ref)?.status === 'rejected');
    if (refused.length === 0) return;
    const remote = view.policy.remote;
    const replicas = replicaPrefix(remote);
    const local = new Set(view.refs.map((ref) => ref.ref));
    // What the remote holds of the aside chains: what went now, else what a proof says.
    const asideThere: string[] = [];
    for (const ref of view.refs) {
      if (!ref.ref.startsWith(ASIDE_REF_PREFIX)) continue;
      const went = due.find((entry) => entry.ref === ref.ref);
      if (went === undefined ? ref.replica === ref.commit : report.statuses.get(ref.ref)?.status !== 'rejected') asideThere.push(went?.commit ?? ref.commit);
    }
    if (asideThere.length === 0) return;
    // Names the remote held (as recorded) that this box no longer has, in the way of a refused one.
    const gone = [...view.replicas]
      .map(([name, commit]) => ({ ref: `refs/${name.slice(replicas.length)}`, commit }))
      .filter((entry) => entry.ref.startsWith(WIP_REF_PREFIX) && !local.has(entry.ref));
    const blockedBy = new Map<string, string[]>();
    const blockers = new Map<string, string>();
    for (const ref of refused) {
      const inTheWay = gone.filter((entry) => namesCollide(ref.ref, entry.ref));
      if (inTheWay.length === 0) continue;
      blockedBy.set(ref.ref, inTheWay.map((entry) => entry.ref));
      for (const entry of inTheWay) blockers.set(entry.ref, entry.commit);
    }
    if (blockers.size === 0) return;
    const ancestry = await ancestryOf(this.#git, this.#cwd, [...blockers.values()].flatMap((commit) => asideThere.map((tip) => ({ local: commit, remote: tip }))));
    const deletable = [...blockers].filter(([, commit]) => asideThere.some((tip) => ancestry.isAncestor(commit, tip)));
    if (deletable.length === 0) return;
    const names = deletable.map(([name]) => name);
    const deletion = await pushRefs(this.#git, this.#cwd, remote, names, { ...network, sources: new Map(names.map((name) => [name, ''])), leases: new Map(deletable) });
    const deleted = new Set(names.filter((name) => deletion.statuses.get(name)?.status === 'pushed'));
    if (deleted.size === 0) return;
    // Their records go first: git cannot delete `a` and create `a/b` in one transaction.
    await this.#record([...deleted].map((name) => ({ ref: replicaRef(remote, name), next: null })));
    // A refused ref with nothing of this box's in its way (blockedBy lacks it) stays refused.
    const again = refused.filter((ref) => blockedBy.get(ref.ref)?.every((name) => deleted.has(name)) === true);
    if (again.length === 0) return;
    const retried = await pushRefs(this.#git, this.#cwd, remote, again.map((ref) => ref.ref), network);
    for (const ref of again) {
      const status = retried.statuses.get(ref.ref);
      if (status !== undefined) report.statuses.set(ref.ref, status);
    }
  }

  /**
   * A wip chain the remote refuses because a name in its way there is not this box's to delete
   * (another box's `refs/chant/wip/a` against this box's `refs/chant/wip/a/b`: git holds one or
   * the other), or because the remote's chain of that name does not hold it (another box saved on
   * the branch and pushed first, or another tool forced the ref), goes to the remote under its
   * aside name, `refs/chant/wip-aside/<tip>`, as a new ref, never forced: a name no branch's can
   * be in the way of. So the remote holds its snapshots and a fetching box lists and restores
   * them, while the other chain stays as it is. The ref itself stays refused (the remote does not
   * hold it under its name), its reason saying where the snapshots went. An aside name this box
   * sent before for the chain, which the tip that went now holds, is deleted there with a lease on
   * what was sent, so the remote keeps one name per chain and loses no snapshot.
   * @returns for each ref that went aside, the commit that went; the aside names deleted
   */
  async #sendAside(view: LocalView, due: LocalView['refs'], report: { statuses: Map<string, RefPushStatus> }, network: NetworkOptions, leased: ReadonlySet<string>): Promise<{ went: Map<string, string>; dropped: string[] }> {
    const went = new Map<string, string>();
    const dropped: string[] = [];
    const refusal = (ref: LocalView['refs'][number]): string | null => {
      const status = report.statuses.get(ref.ref);
      return ref.ref.startsWith(WIP_REF_PREFIX) && status?.status === 'rejected' ? status.reason : null;
    };
    const clashing = due.filter((ref) => [...(refusal(ref) ?? '').matchAll(NAME_CLASH)].some((match) => match[2] === ref.ref && namesCollide(match[1] as string, ref.ref)));
    // A leased push (a prune's) refused goes no further: the fetch sets such a chain aside.
    const behind = due.filter((ref) => !leased.has(ref.ref) && !clashing.includes(ref) && NO_FAST_FORWARD.test(refusal(ref) ?? ''));
    if (behind.length > 0) {
      const { diverged, failure } = await this.#divergedThere(view, behind, network);
      clashing.push(...diverged);
      // Nothing went aside, and nothing will while this lasts: the reason says so.
      if (failure !== null) for (const ref of behind) report.statuses.set(ref.ref, { status: 'rejected', reason: `${refusal(ref) ?? ''}; the remote's chain of that name could not be fetched to compare: ${failure}` });
    }
    if (clashing.length === 0) return { went, dropped };
    const remote = view.policy.remote;
    const asideName = (commit: string) => `${ASIDE_REF_PREFIX}${commit}`;
    const names = [...new Set(clashing.map((ref) => asideName(ref.commit)))];
    const sent = await pushRefs(this.#git, this.#cwd, remote, names, { ...network, sources: new Map(names.map((name) => [name, name.slice(ASIDE_REF_PREFIX.length)])) });
    for (const ref of clashing) {
      const name = asideName(ref.commit);
      const status = sent.statuses.get(name) ?? { status: 'rejected', reason: 'not pushed' };
      const refused = (report.statuses.get(ref.ref) as { reason: string }).reason;
      if (status.status === 'rejected') {
        report.statuses.set(ref.ref, { status: 'rejected', reason: `${refused}; nor could its snapshots go as ${name}: ${status.reason}` });
        continue;
      }
      went.set(ref.ref, ref.commit);
      report.statuses.set(ref.ref, { status: 'rejected', reason: `${refused}; its snapshots went to the remote as ${name} instead, where a fetch brings them` });
    }
    if (went.size === 0) return { went, dropped };
    // Aside names this box recorded on the remote that no local ref has (sent for a clash before).
    const local = new Set(view.refs.map((ref) => ref.ref));
    const prefix = replicaPrefix(remote);
    const older = [...view.replicas]
      .map(([replica, commit]) => ({ ref: `refs/${replica.slice(prefix.length)}`, commit }))
      .filter((entry) => entry.ref.startsWith(ASIDE_REF_PREFIX) && !local.has(entry.ref) && !names.includes(entry.ref));
    if (older.length === 0) return { went, dropped };
    const tips = [...went.values()];
    let held: typeof older;
    try {
      const ancestry = await ancestryOf(this.#git, this.#cwd, older.flatMap((entry) => tips.map((tip) => ({ local: entry.commit, remote: tip }))));
      held = older.filter((entry) => tips.some((tip) => ancestry.isAncestor(entry.commit, tip)));
    } catch {
      // A record whose commit is not here cannot be judged: its name stays on the remote.
      return { went, dropped };
    }
    if (held.length === 0) return { went, dropped };
    const deletion = await pushRefs(this.#git, this.#cwd, remote, held.map((entry) => entry.ref), {
      ...network, sources: new Map(held.map((entry) => [entry.ref, ''])), leases: new Map(held.map((entry) => [entry.ref, entry.commit])),
    });
    dropped.push(...held.map((entry) => entry.ref).filter((name) => deletion.statuses.get(name)?.status === 'pushed'));
    return { went, dropped };
  }

  /**
   * Of `refs`, wip refs the remote refused as no fast-forward, those whose chain the remote's
   * chain of that name does not hold: the remote's values are fetched into the probing namespace
   * (see probingPrefix) and compared here. One the remote's chain holds (another box went on
   * from it, a save of this box's pushed meanwhile), or that is a prune of the remote's chain
   * (its lease push sends it), is left out, as is every ref when the remote cannot be fetched
   * from (a pack the object check refuses, a link gone), whose cause is `failure` then.
   */
  async #divergedThere(view: LocalView, refs: LocalView['refs'], network: NetworkOptions): Promise<{ diverged: LocalView['refs']; failure: string | null }> {
    const prefix = probingPrefix(view.policy.remote);
    const commonDir = commonDirFromFiles(this.#cwd);
    const fetching = () => fetchToStaging(this.#git, this.#cwd, view.policy.remote, probingRefspecs(view.policy.remote, refs.map((ref) => ref.ref)), network);
    try {
      // Under the marker a prune's gc looks for, as a fetch's: what git brings is named by no ref until it ends.
      const failure = commonDir === null ? await fetching() : await whileFetching(commonDir, fetching);
      if (failure !== null) return { diverged: [], failure };
      const there = new Map((await readRefTips(this.#git, this.#cwd, [prefix])).map((tip) => [`refs/${tip.ref.slice(prefix.length)}`, tip.commit]));
      const ancestry = await ancestryOf(this.#git, this.#cwd, refs.flatMap((ref) => (there.has(ref.ref) ? [{ local: ref.commit, remote: there.get(ref.ref) as string }] : [])));
      const diverged: LocalView['refs'] = [];
      for (const ref of refs) {
        // A ref the remote no longer has goes under its own name on the next push.
        const theirs = there.get(ref.ref);
        if (theirs === undefined || ancestry.isAncestor(ref.commit, theirs) || await chainHolds(this.#git, this.#cwd, ref.commit, theirs)) continue;
        diverged.push(ref);
      }
      return { diverged, failure: null };
    } catch (error) {
      // Nothing is sent aside that could not be judged: the ref stays refused, as it was.
      return { diverged: [], failure: asWipError(error).message };
    } finally {
      const probes = await readRefTips(this.#git, this.#cwd, [prefix]).catch(() => []);
      if (probes.length > 0) await this.#record(probes.map((tip) => ({ ref: tip.ref, next: null })));
    }
  }

  /**
   * The secret gate: which of `candidates` go, and from which commit. Only wip refs are scanned:
   * the rest are the host's own commits; a ref proven on the remote as it is has nothing new to
   * scan, and is named to the remote all the same. A ref whose whole new part is held back does
   * not go at all.
   */
  async #gate(view: LocalView, candidates: LocalView['refs'], allow: readonly string[]): Promise<{ due: LocalView['refs']; sources: Map<string, string>; heldBack: HeldBack[] }> {
    // The declaration's allowlist goes always; a push's own allow goes this once.
    const allowed = new Set([...view.policy.allow, ...allow]);
    const due: LocalView['refs'] = [];
    const sources = new Map<string, string>();
    const heldBack: HeldBack[] = [];
    for (const ref of candidates) {
      if (ref.class !== 'wip' || !this.#secretScan || ref.replica === ref.commit) {
        due.push(ref);
        continue;
      }
      const decision = await gateRef(this.#git, this.#cwd, ref.ref, ref.commit, view.held, allowed);
      if (decision.held !== null) heldBack.push(decision.held);
      if (decision.source === null) continue;
      if (decision.source !== ref.commit) sources.set(ref.ref, decision.source);
      due.push({ ...ref, commit: decision.source });
    }
    return { due, sources, heldBack };
  }

  /** Starts loading the secret gate's scanner when the push will run the gate. */
  #preload(policy: Policy): void {
    if (this.#secretScan && policy.refs.includes('wip')) preloadScanner();
  }

  /**
   * Records replicas; one that cannot be written (a stale name in the way, a lock held) is left
   * out, never the rest.
   * @returns the writes left out, each with git's reason
   */
  async #record(writes: RefWrite[]): Promise<RefWriteFailure[]> {
    let left = writes;
    const leftOut: RefWriteFailure[] = [];
    for (let tries = 0; tries <= writes.length && left.length > 0; tries += 1) {
      try {
        const failure = await writeRefs(this.#git, this.#cwd, left, 'chant wip: replica', { reflog: false });
        if (failure === null) return leftOut;
        leftOut.push(failure);
        left = left.filter((write) => write.ref !== failure.ref);
      } catch (error) {
        // The remote holds them either way; the next push finds them up to date and records them.
        // What was not written is left out all the same: a record to delete that stays is proof of nothing.
        return [...leftOut, ...left.map((write) => ({ ref: write.ref, reason: error instanceof Error ? error.message : String(error), moved: false }))];
      }
    }
    return leftOut;
  }

  /**
   * Whether the local chain is a prune of a chain the remote's chain at `remote` holds: a prune
   * marker on the local chain (above what the remote reaches), of those `named`, names a tip the
   * remote's chain holds.
   */
  async #pruneOvertaken(named: ReadonlySet<string>, remote: string): Promise<boolean> {
    try {
      for (const replaced of named) {
        if (await chainHolds(this.#git, this.#cwd, remote, replaced)) return true;
      }
    } catch {
      // A tip a marker names that is not here (never fetched) proves nothing.
    }
    return false;
  }

  /**
   * Whether the chain ending at `tip` holds the checkpoint of the last restore (or of one stopped
   * partway) of any worktree of this repository, as its record names it; true while a record is
   * there that does not read whole.
   */
  async #holdsRestoreCheckpoint(tip: string): Promise<boolean> {
    const commonDir = commonDirFromFiles(this.#cwd);
    if (commonDir === null) return false;
    const gitDirs = worktreeGitDirs(commonDir);
    // A record cut short (a power loss) could name any snapshot: the chain is held whole.
    if (unreadableMarks(gitDirs).length > 0) return true;
    for (const checkpoint of markedCheckpoints(gitDirs)) {
      // A record naming a commit this repository no longer has holds nothing to keep.
      if (await chainHolds(this.#git, this.#cwd, tip, checkpoint).catch(() => false)) return true;
    }
    return false;
  }

  /** Empties the staging namespace after a refused fetch, so that it wrote nothing. */
  async #dropStaging(staging: readonly string[]): Promise<void> {
    if (staging.length === 0) return;
    await writeRefs(this.#git, this.#cwd, staging.map((ref) => ({ ref, next: null })), 'chant wip: fetch', { reflog: false }).catch(() => null);
  }

  /**
   * What a fetch would do: from the staging namespace when the remote answered (`fresh`), else
   * from what earlier fetches recorded. The writes are one transaction: the local moves by
   * compare-and-swap, the replicas set to what the remote answered (and pruned), the staging
   * namespace emptied. Replicas whose names collide with a pruned one's (`a` gone, `a/b` new)
   * are written after it, in `later`.
   */
  async #fetchPlan(policy: Policy, fresh: boolean, excluded: ReadonlySet<string>): Promise<{
    refs: FetchRef[]; writes: RefWrite[]; later: RefWrite[]; staging: string[]; staged: string[];
  }> {
    const replicas = replicaPrefix(policy.remote);
    const staging = stagingPrefix(policy.remote);
    const [tips, checkedOut] = await Promise.all([
      readRefTips(this.#git, this.#cwd, [...classPatterns(policy.refs), replicas, staging]),
      checkedOutBranches(this.#git, this.#cwd),
    ]);
    const locals = new Map<string, string>();
    const recorded = new Map<string, string>();
    const stagedTips = new Map<string, string>();
    for (const tip of tips) {
      if (tip.ref.startsWith(replicas)) recorded.set(`refs/${tip.ref.slice(replicas.length)}`, tip.commit);
      else if (tip.ref.startsWith(staging)) stagedTips.set(`refs/${tip.ref.slice(staging.length)}`, tip.commit);
      else locals.set(tip.ref, tip.commit);
    }
    const seen = fresh ? stagedTips : recorded;
    const remotes: Array<RefTip & { class: RefClass }> = [];
    for (const [ref, commit] of seen) {
      const name = classOf(ref);
      // The ledger is fetched by a pattern; anything beside the exact ref is not the ledger.
      if (name !== null && policy.refs.includes(name)) remotes.push({ ref, commit, class: name });
    }
    remotes.sort((a, b) => compareBytes(a.ref, b.ref));
    const pending: Array<{ local: string; remote: string }> = [];
    const decided = remotes.filter((remote) => !excluded.has(remote.ref)).map((remote) => {
      const local = locals.get(remote.ref) ?? null;
      let result: FetchOutcome | null = null;
      if (local === null) result = 'created';
      // Worked out from a record (the remote could not be fetched from), equal says nothing of
      // the remote now: the ref is left out rather than claimed up to date.
      else if (local === remote.commit && !fresh) return null;
      else if (local === remote.commit) result = 'up-to-date';
      else if (checkedOut.has(remote.ref)) result = 'checked-out';
      else pending.push({ local, remote: remote.commit });
      return { remote, local, result };
    }).filter((entry) => entry !== null);
    const ancestry = await ancestryOf(this.#git, this.#cwd, pending);
    const refs: FetchRef[] = [];
    const writes: RefWrite[] = [];
    for (const { remote, local, result } of decided) {
      let outcome: FetchOutcome;
      if (result !== null) outcome = result;
      else if (ancestry.isAncestor(local as string, remote.commit)) outcome = 'fast-forward';
      else if (ancestry.isAncestor(remote.commit, local as string)) outcome = 'ahead';
      else outcome = 'diverged';
      // A wip chain another box pruned is no fast-forward, but its prune marker says whether the
      // local tip was on the chain the prune applied its rules to: then nothing local is lost.
      // One log reads the markers of both sides: the remote's (another box pruned) and this box's own.
      const sides = outcome === 'diverged' && remote.class === 'wip' ? await replacedTipsEachSide(this.#git, this.#cwd, remote.commit, local as string) : null;
      const replaced = sides === null ? null : sides.left;
      // The chain another box pruned may have dropped the checkpoint of a restore here, which
      // that box could not know to keep (a prune keeps the checkpoint of the last restore of its
      // own worktrees only): taking it would leave that restore with no undo once git's gc ran.
      // Such a chain goes aside whole instead, as a chain the marker does not name does.
      const keepsCheckpoint = replaced !== null && replaced.has(local as string) && await this.#holdsRestoreCheckpoint(local as string);
      const pruned = replaced !== null && replaced.has(local as string) && !keepsCheckpoint;
      // A marker that names no tip of this box's (it fell behind the chain the prune applied its
      // rules to, or saved above such a point) would leave the chain diverged for good, its pushes
      // refused: the local chain is moved aside whole (see ASIDE_REF_PREFIX), where the next
      // push sends it as it is, and the ref takes the remote's chain. Nothing is dropped. Where
      // an aside ref of that name holds something else, here or there, the chain stays as it is.
      // This box pruned its own chain, and another box pushed above what that prune replaced
      // before the pruned chain reached the remote: neither holds the other, and the lease of every
      // prune push names what the remote no longer holds. Without more the chain stayed diverged
      // for good and no later snapshot of this box was replicated; it goes aside whole as well.
      // This box pruned its chain and the remote still holds what a marker of that prune names (the
      // prune push has not gone yet): the local chain has moved on, as a prune moves it, and the
      // prune push sends it under its lease on that very value. Moving it aside undid the prune
      // and sent both chains.
      const ownPrune = replaced !== null && !pruned && sides?.right.has(remote.commit) === true;
      const overtaken = replaced !== null && !pruned && !ownPrune && replaced.size === 0 && remote.ref.startsWith(WIP_REF_PREFIX)
        && await this.#pruneOvertaken(sides?.right ?? new Set(), remote.commit);
      if (ownPrune) outcome = 'ahead';
      const asideName = replaced !== null && !pruned && !ownPrune && (replaced.size > 0 || overtaken || keepsCheckpoint) && remote.ref.startsWith(WIP_REF_PREFIX) ? `${ASIDE_REF_PREFIX}${local as string}` : null;
      const asideHere = asideName === null ? undefined : locals.get(asideName);
      const asideThere = asideName === null ? undefined : seen.get(asideName);
      const aside = asideName !== null && (asideHere ?? local) === local && (asideThere ?? local) === local && !excluded.has(asideName) ? asideName : null;
      // The ref is written once: by the remote's own aside ref where the remote holds it, else here.
      if (aside !== null && asideHere === undefined && asideThere === undefined) writes.push({ ref: aside, next: local, check: { expected: null } });
      if (pruned || aside !== null) outcome = 'fast-forward';
      if (outcome === 'created' || outcome === 'fast-forward') writes.push({ ref: remote.ref, next: remote.commit, check: { expected: local } });
      refs.push({ ref: remote.ref, class: remote.class, remote: remote.commit, local, result: outcome, ...(pruned || (aside !== null && !overtaken) ? { pruned: true as const } : {}), ...(aside !== null ? { aside } : {}) });
    }
    const later: RefWrite[] = [];
    if (fresh) {
      const mirrored = (ref: string) => {
        const name = classOf(ref);
        return (name !== null && policy.refs.includes(name)) || (policy.refs.includes('ledger') && ref.startsWith('refs/heads/chant/lifecycle'));
      };
      const pruned = [...recorded.keys()].filter((ref) => mirrored(ref) && !stagedTips.has(ref));
      for (const ref of pruned) writes.push({ ref: replicaRef(policy.remote, ref), next: null });
      for (const [ref, commit] of stagedTips) {
        if (recorded.get(ref) === commit) continue;
        const write = { ref: replicaRef(policy.remote, ref), next: commit };
        // git cannot delete `a` and create `a/b` in one transaction.
        if (pruned.some((gone) => namesCollide(ref, gone))) later.push(write);
        else writes.push(write);
      }
    }
    const stagingRefs = [...stagedTips.keys()].map((ref) => `${staging}${ref.slice('refs/'.length)}`);
    for (const ref of stagingRefs) writes.push({ ref, next: null });
    return { refs, writes, later, staging: stagingRefs, staged: [...new Set(stagedTips.values())] };
  }
}

/**
 * What the remote a policy names was last recorded to hold of the local refs under `prefix`, read
 * from its replicas: nothing is asked of the remote, and no proof is checked (a prune's marker
 * names what was recorded). The replicas of each ref come as a list, so a caller writes what every
 * remote holds and never names one.
 * @param git - the runner
 * @param cwd - a folder inside the checkout
 * @param policy - the policy
 * @param prefix - the local refs' prefix, such as `refs/chant/wip/`
 * @returns the recorded commits by local refname; a ref with none recorded is absent
 * @throws {@link WipError} `git-failed`
 * @internal
 */
export async function recordedReplicas(git: GitRunner, cwd: string, policy: Policy, prefix: string): Promise<Map<string, string[]>> {
  const replicas = replicaPrefix(policy.remote);
  const recorded = new Map<string, string[]>();
  for (const tip of await readRefTips(git, cwd, [replicaRef(policy.remote, prefix)])) recorded.set(`refs/${tip.ref.slice(replicas.length)}`, [tip.commit]);
  return recorded;
}

/**
 * A network timeout as given: a whole number of milliseconds from 1, or absent.
 * @internal
 */
export function checkNetworkTimeout(ms: number | undefined): number | undefined {
  if (ms === undefined) return undefined;
  if (!Number.isSafeInteger(ms) || ms < 1) throw new WipError('write-usage-invalid', `a network timeout is a whole number of milliseconds from 1; it was given ${String(ms)}`);
  return ms;
}

/**
 * What `failed` says of bookkeeping refs a fetch could not write: which, git's reason, and what
 * that costs.
 */
function unwrittenReason(remote: string, unwritten: readonly RefWriteFailure[]): string {
  const named = unwritten.map((left) => `${left.ref} (${left.reason})`).join(', ');
  const lock = unwritten.some((left) => /\.lock': File exists/.test(left.reason))
    ? '; a git process holds its lock file, or one that crashed left it: when none is running, remove the file'
    : '';
  const cost = unwritten.some((left) => left.ref.startsWith(replicaPrefix(remote)))
    ? `the refs were brought home, but what ${remote} holds could not all be recorded, so no ref counts as replicated until a push or fetch records it`
    : 'the refs were brought home; a staging ref left behind is replaced by the next fetch';
  return `chant could not write its own refs in this checkout: ${named}${lock}; ${cost}`;
}

/**
 * The value a prune push leases `ref` on: the replica chant recorded, proof or not (a fetch whose
 * URL is not the push URL withdraws the proof; the remote re-pointed leaves a record of the old
 * one). The remote checks the lease itself, so a record it does not hold is refused (`stale
 * info`), never forced over; without a record, the ref must not exist there. Proof alone left a
 * pruned chain refused for good after any fetch from a remote with its own push URL.
 */
function recordedLease(view: LocalView, ref: string): string | null {
  return view.replicas.get(replicaRef(view.policy.remote, ref)) ?? null;
}

function unknownRemote(policy: Policy): WipError {
  return new WipError('wip-remote-unknown', `the replicate policy of ${policy.box} names the git remote ${policy.remote}, which this checkout does not have: add it with git remote add ${policy.remote} <url>`);
}

/** How long a fetch waits for another process's fetch of the repository before it is refused as `wip-race`. */
const FETCH_LOCK_WAIT_MS = 10 * 60 * 1000;

/** A fetch that would take a pruned chain over a local one, planned without every worktree's lock: planned again under them. */
class EveryLockNeeded extends Error {}

/** The fetch running or queued last in this process, by repository and remote. */
const FETCHES = new Map<string, Promise<void>>();

/**
 * Runs `fetch` once every fetch this process started before it, of the same repository and
 * remote (`key`), has ended. Two at once shared the staging refs: the later one planned from a
 * staging namespace the earlier had just emptied, told of no ref the remote holds, and deleted
 * every replica as gone from the remote.
 */
async function oneFetchAtATime<T>(key: string, signal: AbortSignal | undefined, fetch: () => Promise<T>): Promise<T> {
  const before = FETCHES.get(key) ?? Promise.resolve();
  let ended = (): void => undefined;
  const own = new Promise<void>((resolve) => {
    ended = resolve;
  });
  const last = before.then(() => own);
  FETCHES.set(key, last);
  try {
    await new Promise<void>((resolve, reject) => {
      const aborted = (): void => reject(cancelledError(signal as AbortSignal));
      signal?.addEventListener('abort', aborted, { once: true });
      void before.then(() => {
        signal?.removeEventListener('abort', aborted);
        resolve();
      });
    });
    return await fetch();
  } finally {
    ended();
    if (FETCHES.get(key) === last) FETCHES.delete(key);
  }
}

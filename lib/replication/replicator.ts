import type { FetchOutcome, FetchRef, HeldBack, PolicyDocument, PushResult, RefClass, RefPush, RefState, ReplicationState, Trigger } from '../documents/replication.js';
import type { FetchResult, PushOutcome } from '../documents/wip-write.js';
import { asWipError, WipError } from '../errors.js';
import { compareBytes } from '../order.js';
import { checkedOutBranches, commitGraph, fetchReplicas, moveRefs, pushRefs, readRefTips, readRemoteConfig, recordRefs } from '../git/remote.js';
import type { RefMove, RefTip } from '../git/remote.js';
import { Plumbing } from '../git/plumbing.js';
import { SimpleGitRunner } from '../git/runner.js';
import type { GitRunner } from '../git/runner.js';
import { ancestryOf, countReachable } from './ancestry.js';
import { replacedTips } from '../git/storage.js';
import { gateRef } from './secret-gate.js';
import { Policy, policyOf } from './policy.js';
import { classOf, classPatterns, replicaPrefix, replicaRef, replicaRefspecs } from './ref-classes.js';

/**
 * What a {@link Replicator} works on and with.
 * @public
 */
export interface ReplicatorOptions {
  /** A folder inside the checkout. */
  cwd: string;
  /** How git is run; {@link SimpleGitRunner} when absent. */
  git?: GitRunner;
  /** The replicate policy the declaration states, or null when no box declares one. */
  policy: Policy | PolicyDocument | null;
  /**
   * Receives git's progress during a push or fetch, one line at a time with its terminator
   * (`\r` for an update of the same line), credentials redacted. git is asked for progress only
   * when this is given; the results are the same either way. The CLI passes its stderr's `write`
   * when stderr is a terminal.
   */
  progress?: (line: string) => void;
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
  /** Whether a push runs the secret gate; see {@link ReplicatorOptions.secretScan}. */
  secretScan?: boolean;
}

/**
 * Options of {@link Replicator.push} and {@link Replicator.pushPruned}.
 * @public
 */
export interface PushOptions {
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
export interface AfterOptions {
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
  refs: Array<RefTip & { class: RefClass; replica: string | null }>;
  /** Every commit a ref known to be on the remote names: its replica refs and remote-tracking refs. */
  known: string[];
}

/** How many times a fetch re-reads local refs that another writer moved under it. */
const FETCH_ATTEMPTS = 3;

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
  readonly #secretScan: boolean;

  /**
   * A replicator following a policy already read.
   * @param options - the checkout, its policy, where progress goes, and the runner to swap in tests
   */
  constructor(options: ReplicatorOptions) {
    this.#cwd = options.cwd;
    this.#git = options.git ?? new SimpleGitRunner(options.cwd);
    this.#policy = options.policy === null ? null : policyOf(options.policy);
    this.#progress = options.progress;
    this.#secretScan = options.secretScan ?? process.env.CHANT_WIP_SECRET_SCAN !== 'off';
  }

  /**
   * A replicator for a checkout, following the policy its workspace declaration states.
   * @param options - the checkout, and the runner to swap in tests
   * @returns the replicator (its policy null when no box declares replicate)
   * @throws {@link WipError} `not-a-git-repository`, or a declaration code
   */
  static async open(options: ReplicatorOpenOptions): Promise<Replicator> {
    const git = options.git ?? new SimpleGitRunner(options.cwd);
    const layout = await new Plumbing(git, options.cwd).layout();
    const policy = await Policy.load({ cwd: options.cwd, top: layout.top, git });
    return new Replicator({ cwd: options.cwd, git, policy, progress: options.progress, ...(options.secretScan === undefined ? {} : { secretScan: options.secretScan }) });
  }

  /** The policy this replicator follows, or null. */
  get policy(): PolicyDocument | null {
    return this.#policy === null ? null : this.#policy.toJSON();
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
    return { policy: policy.toJSON(), remoteConfigured: view.remoteConfigured, replicated: behind.length === 0, refs };
  }

  /**
   * Pushes every ref of the policy's classes that the remote does not hold as it is locally, each
   * under its own name, never forced, with no pre-push hook. A ref the remote refuses (one that
   * would rewrite it) is listed in `rejected` with the remote's reason; the refs it took or
   * already held are recorded under `refs/chant/replica/<remote>/`. Before anything goes, the
   * files the wip refs' new snapshots add are scanned for likely secrets (secretlint's
   * recommended rules): a snapshot holding one stays local with every snapshot above it, listed
   * in `heldBack` with the path, rule and line, until the finding is allowed or the file changes.
   * @param options - `allow`: finding ids the host acknowledges, which go this once
   * @returns the policy and what the push did, refs sorted by refname
   * @throws {@link WipError} `wip-policy-none`, `wip-remote-unknown` or `git-failed`
   */
  async push(options: PushOptions = {}): Promise<PushOutcome> {
    const policy = this.#required();
    const view = await this.#view(policy);
    if (!view.remoteConfigured) throw unknownRemote(policy);
    return { policy: policy.toJSON(), replication: await this.#push(view, undefined, options.allow) };
  }

  /**
   * Pushes the wip refs a prune rewrote (every wip ref of the policy the remote does not hold as
   * it is locally), each with a lease on the replica chant recorded
   * (`--force-with-lease=<ref>:<replica>`; a ref with no replica must not exist on the remote).
   * When another box pushed to the ref since chant recorded it, the remote refuses (`stale info`),
   * the ref is listed in `rejected` and the remote keeps every snapshot it held. `push` itself
   * stays never forced. The secret gate applies as it does to {@link Replicator.push}.
   * @param options - `allow`: finding ids the host acknowledges
   * @returns the policy and what the push did
   * @throws {@link WipError} `wip-policy-none`, `wip-remote-unknown` or `git-failed`
   */
  async pushPruned(options: PushOptions = {}): Promise<PushOutcome> {
    const policy = this.#required();
    const view = await this.#view(policy);
    if (!view.remoteConfigured) throw unknownRemote(policy);
    const refs = view.refs.filter((ref) => ref.class === 'wip');
    const leases = new Map(refs.map((ref) => [ref.ref, ref.replica]));
    return { policy: policy.toJSON(), replication: await this.#push({ ...view, refs }, leases, options.allow) };
  }

  /**
   * The push a save makes: like {@link Replicator.push}, except that a missing remote rejects
   * every ref (reason `no git remote named <name> is configured`) instead of throwing.
   * @param options - `leased`: wip refs a prune rewrote, sent with a lease on their replica
   * @returns what the push did
   * @throws {@link WipError} `wip-policy-none`, or `git-failed` when the local refs cannot be read
   */
  async pushOrReport(options: AfterOptions = {}): Promise<PushResult> {
    const policy = this.#required();
    const view = await this.#view(policy);
    if (!view.remoteConfigured) {
      const reason = `no git remote named ${policy.remote} is configured`;
      return { remote: policy.remote, pushed: [], rejected: view.refs.map((ref) => ({ ref: ref.ref, commit: ref.commit, reason })), upToDate: 0 };
    }
    const leased = new Set(options.leased ?? []);
    const leases = new Map(view.refs.filter((ref) => ref.class === 'wip' && leased.has(ref.ref)).map((ref) => [ref.ref, ref.replica]));
    return this.#push(view, leases.size > 0 ? leases : undefined);
  }

  /**
   * Brings the remote's refs of the policy's classes home. They are mirrored into
   * `refs/chant/replica/<remote>/` (pruned, every object checked as it arrives); then each local
   * ref that is missing is created and each that is behind is fast-forwarded, by
   * compare-and-swap. A branch checked out in any worktree, a local ref that moved on (`ahead`)
   * or forked (`diverged`) is left alone. When the remote cannot be fetched from, `failed` says
   * why and `refs` is worked out, the same way, from what earlier fetches recorded.
   * @returns the policy, each remote ref sorted by refname with what was done, and `failed`
   * @throws {@link WipError} `wip-policy-none`, `wip-remote-unknown`, `wip-race` or `git-failed`
   */
  async fetch(): Promise<FetchResult> {
    const policy = this.#required();
    const remote = await readRemoteConfig(this.#git, this.#cwd, policy.remote);
    if (!remote.exists) throw unknownRemote(policy);
    const failed = await fetchReplicas(this.#git, this.#cwd, policy.remote, replicaRefspecs(policy.remote, policy.refs), { sshCommand: remote.sshCommand, secrets: remote.secrets, progress: this.#progress });
    let previous: Map<string, string> | null = null;
    let lastError: unknown = null;
    for (let attempt = 0; attempt < FETCH_ATTEMPTS; attempt += 1) {
      const plan = await this.#fetchPlan(policy);
      if (previous !== null && !movedMeanwhile(previous, plan.locals)) throw asWipError(lastError);
      try {
        await moveRefs(this.#git, this.#cwd, plan.moves, 'chant wip: fetch');
        return { policy: policy.toJSON(), refs: plan.refs, failed };
      } catch (error) {
        // Nothing was written; try again only if another writer moved a local ref meanwhile.
        previous = plan.locals;
        lastError = error;
      }
    }
    throw new WipError('wip-race', `local refs kept moving under ${FETCH_ATTEMPTS} attempts to update them from ${policy.remote}; nothing was lost, try again`);
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

  #required(): Policy {
    if (this.#policy === null) throw new WipError('wip-policy-none', 'no box in the workspace declaration declares replicate, so there is no remote to replicate to');
    return this.#policy;
  }

  async #view(policy: Policy): Promise<LocalView> {
    const replicas = replicaPrefix(policy.remote);
    const tracking = `refs/remotes/${policy.remote}/`;
    const [remote, tips] = await Promise.all([
      readRemoteConfig(this.#git, this.#cwd, policy.remote),
      readRefTips(this.#git, this.#cwd, [...classPatterns(policy.refs), replicas, tracking]),
    ]);
    const known = new Map<string, string>();
    const refs: LocalView['refs'] = [];
    for (const tip of tips) {
      if (tip.ref.startsWith(replicas) || tip.ref.startsWith(tracking)) known.set(tip.ref, tip.commit);
    }
    for (const tip of tips) {
      const name = classOf(tip.ref);
      if (name === null || !policy.refs.includes(name)) continue;
      const replica = known.get(replicaRef(policy.remote, tip.ref))
        ?? (tip.ref.startsWith('refs/heads/') ? known.get(`${tracking}${tip.ref.slice('refs/heads/'.length)}`) : undefined)
        ?? null;
      refs.push({ ...tip, class: name, replica });
    }
    return { policy, remoteConfigured: remote.exists, sshCommand: remote.sshCommand, secrets: remote.secrets, refs, known: [...new Set(known.values())] };
  }

  async #push(view: LocalView, leases?: ReadonlyMap<string, string | null>, allow: readonly string[] = []): Promise<PushResult> {
    const remote = view.policy.remote;
    const { due, sources, heldBack } = await this.#gate(view, allow);
    const statuses = await pushRefs(this.#git, this.#cwd, remote, due.map((ref) => ref.ref), {
      sshCommand: view.sshCommand, secrets: view.secrets, progress: this.#progress, sources, ...(leases === undefined ? {} : { leases }),
    });
    const pushed: RefPush[] = [];
    const rejected: RefPush[] = [];
    const seen: RefTip[] = [];
    let upToDate = view.refs.filter((ref) => ref.replica === ref.commit).length;
    for (const ref of due) {
      const status = statuses.get(ref.ref) ?? { status: 'rejected', reason: 'not pushed' };
      if (status.status === 'rejected') {
        rejected.push({ ref: ref.ref, commit: ref.commit, reason: status.reason });
        continue;
      }
      if (status.status === 'pushed') pushed.push({ ref: ref.ref, commit: ref.commit });
      else upToDate += 1;
      seen.push({ ref: replicaRef(remote, ref.ref), commit: ref.commit });
    }
    try {
      await recordRefs(this.#git, this.#cwd, seen);
    } catch {
      // The remote holds them either way; the next push finds them up to date and records them.
    }
    return { remote, pushed, rejected, upToDate, ...(heldBack.length > 0 ? { heldBack } : {}) };
  }

  /**
   * The secret gate: which refs go, and from which commit. Only wip refs are scanned: the rest
   * are the host's own commits. A ref whose whole new part is held back does not go at all.
   */
  async #gate(view: LocalView, allow: readonly string[]): Promise<{ due: LocalView['refs']; sources: Map<string, string>; heldBack: HeldBack[] }> {
    // The declaration's allowlist goes always; a push's own allow goes this once.
    const allowed = new Set([...view.policy.allow, ...allow]);
    const due: LocalView['refs'] = [];
    const sources = new Map<string, string>();
    const heldBack: HeldBack[] = [];
    for (const ref of view.refs) {
      if (ref.replica === ref.commit) continue;
      if (ref.class !== 'wip' || !this.#secretScan) {
        due.push(ref);
        continue;
      }
      const decision = await gateRef(this.#git, this.#cwd, ref.ref, ref.commit, view.known, allowed);
      if (decision.held !== null) heldBack.push(decision.held);
      if (decision.source === null) continue;
      if (decision.source !== ref.commit) sources.set(ref.ref, decision.source);
      due.push({ ...ref, commit: decision.source });
    }
    return { due, sources, heldBack };
  }

  /** What a fetch would do with the replica namespace as it stands. */
  async #fetchPlan(policy: Policy): Promise<{ refs: FetchRef[]; moves: RefMove[]; locals: Map<string, string> }> {
    const replicas = replicaPrefix(policy.remote);
    const [tips, checkedOut] = await Promise.all([
      readRefTips(this.#git, this.#cwd, [...classPatterns(policy.refs), replicas]),
      checkedOutBranches(this.#git, this.#cwd),
    ]);
    const locals = new Map<string, string>();
    const remotes: Array<RefTip & { class: RefClass }> = [];
    for (const tip of tips) {
      if (tip.ref.startsWith(replicas)) {
        const ref = `refs/${tip.ref.slice(replicas.length)}`;
        const name = classOf(ref);
        // The ledger is fetched by a pattern; anything beside the exact ref is not the ledger.
        if (name !== null && policy.refs.includes(name)) remotes.push({ ref, commit: tip.commit, class: name });
      } else {
        locals.set(tip.ref, tip.commit);
      }
    }
    remotes.sort((a, b) => compareBytes(a.ref, b.ref));
    const pending: Array<{ local: string; remote: string }> = [];
    const decided = remotes.map((remote) => {
      const local = locals.get(remote.ref) ?? null;
      let result: FetchOutcome | null = null;
      if (local === null) result = 'created';
      else if (local === remote.commit) result = 'up-to-date';
      else if (checkedOut.has(remote.ref)) result = 'checked-out';
      else pending.push({ local, remote: remote.commit });
      return { remote, local, result };
    });
    const ancestry = await ancestryOf(this.#git, this.#cwd, pending);
    const refs: FetchRef[] = [];
    const moves: RefMove[] = [];
    for (const { remote, local, result } of decided) {
      let outcome: FetchOutcome;
      if (result !== null) outcome = result;
      else if (ancestry.isAncestor(local as string, remote.commit)) outcome = 'fast-forward';
      else if (ancestry.isAncestor(remote.commit, local as string)) outcome = 'ahead';
      else outcome = 'diverged';
      // A wip chain another box pruned is no fast-forward, but its prune marker says whether the
      // local tip was on the chain the prune applied its rules to: then nothing local is lost.
      const pruned = outcome === 'diverged' && remote.class === 'wip' && (await replacedTips(this.#git, this.#cwd, remote.commit, local as string)).has(local as string);
      if (pruned) outcome = 'fast-forward';
      if (outcome === 'created' || outcome === 'fast-forward') moves.push({ ref: remote.ref, next: remote.commit, expected: local });
      refs.push({ ref: remote.ref, class: remote.class, remote: remote.commit, local, result: outcome, ...(pruned ? { pruned } : {}) });
    }
    return { refs, moves, locals };
  }
}

function unknownRemote(policy: Policy): WipError {
  return new WipError('wip-remote-unknown', `the replicate policy of ${policy.box} names the git remote ${policy.remote}, which this checkout does not have: add it with git remote add ${policy.remote} <url>`);
}

function movedMeanwhile(before: ReadonlyMap<string, string>, now: ReadonlyMap<string, string>): boolean {
  if (before.size !== now.size) return true;
  for (const [ref, commit] of before) if (now.get(ref) !== commit) return true;
  return false;
}

// Replication plumbing: the git calls the Replicator makes, local and over the network. Every
// call names its cwd, output is NUL-separated where a value could hold a newline, and nothing a
// remote or a URL says reaches a message unredacted.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { compareBytes } from '../order.js';
import { asWipError, redactCredentials } from '../errors.js';
import { OBJECT_ID } from './formats/object-format.js';
import { GitCommandError, NETWORK_MIN_BYTES } from './runner.js';
import { sshEnvironment } from './ssh.js';
import type { GitRunner, GitRunOptions } from './runner.js';

/**
 * Milliseconds a network call may go without progress before git is stopped, unless the caller
 * gives its own (`Replicator`'s `timeoutMs`).
 * @internal
 */
export const NETWORK_TIMEOUT_MS = 60_000;

// git shows progress only when its stderr is a terminal, which under the runner it never is. Push
// and fetch ask for it always, watched or not: a pack moving over a slow link then prints how far
// it got, and that output is the progress the runner's timeout measures, so a healthy slow
// transfer is never taken for a hang. Only a sink, when given, shows it to anyone.
const PROGRESS = '--progress';

// Windows caps a command line at 32,767 characters; stay well under it so a push of thousands
// of refs goes in a few processes on every platform.
const PUSH_BATCH_CHARS = 24_000;

/**
 * One ref and the commit it names.
 * @internal
 */
export interface RefTip {
  ref: string;
  commit: string;
}

/**
 * What the checkout's configuration says about a remote.
 * @internal
 */
export interface RemoteConfig {
  /** Whether `remote.<name>.url` is set. */
  exists: boolean;
  /** `core.sshCommand`, or null. */
  sshCommand: string | null;
  /** The passwords (or, over HTTP, tokens standing as the user) in the remote's URLs. */
  secrets: string[];
  /**
   * A digest of the remote's `url` and `pushurl` values: when the host points the remote
   * elsewhere it changes, and what the old URL answered is no longer proof.
   */
  fingerprint: string;
  /**
   * When the remote last answered chant at the URLs of {@link RemoteConfig.fingerprint}, ISO 8601
   * UTC, or null: never, or at other URLs.
   */
  confirmedAt: string | null;
  /** Whether git-lfs's filter is configured (`filter.lfs.process` or `filter.lfs.clean`). */
  lfsFilter: boolean;
  /**
   * Whether a push may go to another URL than the one a fetch reads (a `pushurl` that is not the
   * `url`, a `url` given more than once, a `pushInsteadOf` rule that rewrites it): then what a
   * fetch saw proves nothing of what the push URLs hold.
   */
  pushesElsewhere: boolean;
}

/** The config key recording when a remote last answered, and at which URLs. */
function confirmationKey(remote: string): string {
  return `chant-replica.${remote}.confirmed`;
}

/**
 * How a network call runs.
 * @internal
 */
export interface NetworkOptions {
  /** `core.sshCommand` as configured, so batch mode is added to it rather than replacing it. */
  sshCommand: string | null;
  /** Secrets of the remote's URLs, hidden from reasons even where git prints them bare. */
  secrets?: readonly string[];
  /**
   * Milliseconds without progress (git's `--progress` output, or at least `NETWORK_MIN_BYTES` its
   * processes move) before git and everything it started are stopped; {@link NETWORK_TIMEOUT_MS}
   * when absent.
   */
  timeoutMs?: number;
  /** Receives git's progress, line by line and redacted; git is asked for progress either way. */
  progress?: (line: string) => void;
}

/**
 * What a push did with one ref.
 * @internal
 */
export type RefPushStatus =
  | { status: 'pushed' }
  | { status: 'up-to-date' }
  | { status: 'rejected'; reason: string };

/**
 * Reads whether a remote is configured, and `core.sshCommand`, in one process.
 * @param git - the runner
 * @param cwd - a folder inside the checkout
 * @param remote - the remote's name
 * @returns what the configuration says
 * @throws {@link WipError} `git-failed`
 * @internal
 */
export async function readRemoteConfig(git: GitRunner, cwd: string, remote: string): Promise<RemoteConfig> {
  const out = await run(git, cwd, ['config', '-z', '--get-regexp', '^(remote\\..*\\.(url|pushurl)|url\\..*\\.(insteadof|pushinsteadof)|core\\.sshcommand|chant-replica\\..*\\.confirmed|filter\\.lfs\\.(process|clean))$'], { okExitCodes: [1] });
  let exists = false;
  let sshCommand: string | null = null;
  let confirmation: string | null = null;
  let lfsFilter = false;
  const secrets: string[] = [];
  const urls: string[] = [];
  const fetchUrls: string[] = [];
  const pushUrls: string[] = [];
  const pushRewrites: string[] = [];
  for (const entry of out.split('\0')) {
    const newline = entry.indexOf('\n');
    const key = newline < 0 ? entry : entry.slice(0, newline);
    const value = newline < 0 ? '' : entry.slice(newline + 1);
    if (key === `remote.${remote}.url` || key === `remote.${remote}.pushurl`) {
      if (key.endsWith('.url')) exists = true;
      (key.endsWith('.url') ? fetchUrls : pushUrls).push(value);
      urls.push(`${key.slice(key.lastIndexOf('.') + 1)} ${value}`);
      const secret = urlSecret(value);
      if (secret !== null) secrets.push(secret);
    } else if (key.startsWith('url.') && (key.endsWith('.insteadof') || key.endsWith('.pushinsteadof'))) {
      // A rewrite of URLs (url.<base>.insteadOf) moves the remote as surely as its url does: any
      // rule counts, as which apply to the remote's URLs is git's to say.
      urls.push(`${key} ${value}`);
      if (key.endsWith('.pushinsteadof')) pushRewrites.push(value);
    } else if (key === 'core.sshcommand' && value.length > 0) sshCommand = value;
    else if (key === confirmationKey(remote)) confirmation = value;
    else if (key.startsWith('filter.lfs.') && value.length > 0) lfsFilter = true;
  }
  const fingerprint = createHash('sha256').update(urls.join('\n')).digest('hex').slice(0, 24);
  let confirmedAt: string | null = null;
  const recorded = /^([0-9a-f]+) (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)$/.exec(confirmation ?? '');
  if (recorded !== null && recorded[1] === fingerprint) confirmedAt = recorded[2] as string;
  // git pushes to every pushurl, else to every url (pushInsteadOf rewriting them); a fetch reads the first url.
  const pushesElsewhere = fetchUrls.length > 1 || pushUrls.some((url) => url !== fetchUrls[0])
    || (pushUrls.length === 0 && pushRewrites.some((prefix) => (fetchUrls[0] ?? '').startsWith(prefix)));
  return { exists, sshCommand, secrets, fingerprint, confirmedAt, lfsFilter, pushesElsewhere };
}

/**
 * Records that the remote answered just now at the URLs of `fingerprint`. A failure to write it
 * is swallowed: it costs the next read its proof (the refs read as not replicated until the next
 * push or fetch), never a wrong answer.
 * @param git - the runner
 * @param cwd - a folder inside the checkout
 * @param remote - the remote's name
 * @param fingerprint - {@link RemoteConfig.fingerprint} as read before the network call
 * @param at - the time to record
 * @internal
 */
export async function recordConfirmation(git: GitRunner, cwd: string, remote: string, fingerprint: string, at: Date): Promise<void> {
  try {
    await git.run(['config', '--local', confirmationKey(remote), `${fingerprint} ${at.toISOString()}`], { cwd });
  } catch {
    // See above: the proof is lost, not falsified.
  }
}

/**
 * Forgets when the remote last answered: until a push or fetch records it again, no replica is
 * proof. For a replica chant could not bring up to date (a lock held on it), which would
 * otherwise stand as proof of what the remote no longer holds. A failure is swallowed, as
 * {@link recordConfirmation}'s is.
 * @param git - the runner
 * @param cwd - a folder inside the checkout
 * @param remote - the remote's name
 * @internal
 */
export async function withdrawConfirmation(git: GitRunner, cwd: string, remote: string): Promise<void> {
  try {
    // Exit 5: there was nothing to forget.
    await git.run(['config', '--local', '--unset-all', confirmationKey(remote)], { cwd, okExitCodes: [5] });
  } catch {
    // The record stays; the lock that caused this is named in the fetch's `failed`.
  }
}

/**
 * Every ref under `patterns` (a prefix ending in `/`, or an exact refname) that names a commit,
 * sorted by refname in byte order.
 * @param git - the runner
 * @param cwd - a folder inside the checkout
 * @param patterns - prefixes and exact refnames
 * @returns the refs and their commits
 * @throws {@link WipError} `git-failed`
 * @internal
 */
export async function readRefTips(git: GitRunner, cwd: string, patterns: readonly string[]): Promise<RefTip[]> {
  if (patterns.length === 0) return [];
  const out = await run(git, cwd, [
    'for-each-ref', '--format=%(refname)%00%(objectname)%00%(objecttype)', '--end-of-options', ...patterns.map((pattern) => pattern.replace(/\/$/, '')),
  ]);
  const wanted = (ref: string) => patterns.some((pattern) => (pattern.endsWith('/') ? ref.startsWith(pattern) : ref === pattern));
  const tips: RefTip[] = [];
  // Refnames cannot hold a newline or a NUL, so lines of NUL-separated fields are unambiguous.
  for (const line of out.split('\n')) {
    const [ref, commit, type] = line.split('\0');
    if (ref === undefined || commit === undefined || type !== 'commit' || !wanted(ref)) continue;
    tips.push({ ref, commit });
  }
  return tips.sort((a, b) => compareBytes(a.ref, b.ref));
}

/**
 * Every branch checked out in any worktree of the repository, as full refnames, and every
 * branch a worktree is rebasing or bisecting (its HEAD detached meanwhile), as git's own fetch
 * and checkout count them: moving one would make `git rebase --continue` fail to update it.
 * @param git - the runner
 * @param cwd - a folder inside the checkout
 * @returns the branches
 * @throws {@link WipError} `git-failed`
 * @internal
 */
export async function checkedOutBranches(git: GitRunner, cwd: string): Promise<Set<string>> {
  const out = await run(git, cwd, ['worktree', 'list', '--porcelain', '-z']);
  const branches = new Set<string>();
  let worktree: string | null = null;
  for (const field of out.split('\0')) {
    if (field.startsWith('worktree ')) worktree = field.slice('worktree '.length);
    else if (field.startsWith('branch ')) branches.add(field.slice('branch '.length));
    else if (field === 'detached' && worktree !== null) for (const branch of branchesInOperation(worktree)) branches.add(branch);
  }
  return branches;
}

/** The branches a worktree whose HEAD is detached is rebasing or bisecting, read from its git directory. */
function branchesInOperation(worktree: string): string[] {
  const dotGit = join(worktree, '.git');
  let gitDir = dotGit;
  try {
    if (!statSync(dotGit).isDirectory()) {
      const named = /^gitdir: (.*)$/m.exec(readFileSync(dotGit, 'utf8'))?.[1];
      if (named === undefined) return [];
      gitDir = resolve(worktree, named.trim());
    }
  } catch {
    return [];
  }
  const read = (name: string): string | null => {
    try {
      return readFileSync(join(gitDir, name), 'utf8').trim();
    } catch {
      return null;
    }
  };
  const found: string[] = [];
  for (const name of ['rebase-merge/head-name', 'rebase-apply/head-name']) {
    const head = read(name);
    if (head !== null && head.startsWith('refs/heads/')) found.push(head);
  }
  const bisected = read('BISECT_START');
  if (bisected !== null && bisected.length > 0 && !OBJECT_ID.test(bisected)) found.push(`refs/heads/${bisected}`);
  return found;
}

/**
 * The commits reachable from `tips` and from none of `exclude`, each with its parents, in one
 * `rev-list` fed through standard input (so thousands of refs cost one process).
 * @param git - the runner
 * @param cwd - a folder inside the checkout
 * @param tips - commits to walk from
 * @param exclude - commits whose history is left out
 * @returns each commit walked and its parents
 * @throws {@link WipError} `git-failed`
 * @internal
 */
export async function commitGraph(git: GitRunner, cwd: string, tips: readonly string[], exclude: readonly string[]): Promise<Map<string, string[]>> {
  const graph = new Map<string, string[]>();
  if (tips.length === 0) return graph;
  // git 2.39 takes no --not on standard input, but takes ^<commit>.
  const input = [...new Set(tips)].join('\n') + '\n' + [...new Set(exclude)].map((oid) => `^${oid}\n`).join('');
  const out = await run(git, cwd, ['rev-list', '--parents', '--stdin'], { input });
  for (const line of out.split('\n')) {
    if (line.length === 0) continue;
    const [commit, ...parents] = line.split(' ');
    graph.set(commit as string, parents);
  }
  return graph;
}

/**
 * The best common ancestor of all `commits`, or null when they share none.
 * @param git - the runner
 * @param cwd - a folder inside the checkout
 * @param commits - two or more commits
 * @returns the commit, or null
 * @throws {@link WipError} `git-failed`
 * @internal
 */
export async function octopusBase(git: GitRunner, cwd: string, commits: readonly string[]): Promise<string | null> {
  const out = await run(git, cwd, ['merge-base', '--octopus', '--end-of-options', ...commits], { okExitCodes: [1] });
  const oid = out.trim();
  return OBJECT_ID.test(oid) ? oid : null;
}

/**
 * What a push found out: each ref's fate, and whether the remote answered at all (so that what
 * it said can be recorded as proof).
 * @internal
 */
export interface PushReport {
  statuses: Map<string, RefPushStatus>;
  /** True when the remote answered for at least one ref: what it said is proof. */
  reached: boolean;
}

/** How many pushes a push may add to find which refs a remote refusing them together refuses alone. */
const SPLIT_BUDGET = 32;

/**
 * One compare-and-swap move of a ref.
 * @internal
 */
export interface RefMove {
  ref: string;
  next: string;
  /** The value the ref must still hold, or null when it must not exist. */
  expected: string | null;
}

/**
 * Moves refs by compare-and-swap, creating their reflogs, in one all-or-nothing transaction.
 * @param git - the runner
 * @param cwd - a folder inside the checkout
 * @param moves - each ref, its new value and the value it must hold now
 * @param reason - the reflog message
 * @throws {@link WipError} `git-failed` when any ref moved meanwhile (nothing is written then)
 * @internal
 */
export async function moveRefs(git: GitRunner, cwd: string, moves: readonly RefMove[], reason: string): Promise<void> {
  if (moves.length === 0) return;
  const input = moves
    .map((move) => (move.expected === null ? `create ${move.ref}\0${move.next}\0` : `update ${move.ref}\0${move.next}\0${move.expected}\0`))
    .join('');
  await run(git, cwd, ['update-ref', '-z', '--stdin', '--create-reflog', '-m', reason], { input });
}

/**
 * The leases of a push that may rewrite refs (a pruned chain): for each ref, the value the remote
 * must still hold for the update to go, or null for "must not exist". Refs without a lease are
 * never forced.
 * @internal
 */
export interface PushLeases {
  leases?: ReadonlyMap<string, string | null>;
  /** For a ref the secret gate cut short, the commit that goes in its place (`<commit>:<ref>`). */
  sources?: ReadonlyMap<string, string>;
}

// `--force-with-lease=<ref>:<expect>` names its ref and value, so no ref is forced blindly, and
// git's remote-tracking refs are never what the lease trusts.
function leaseFlags(batch: readonly string[], leases: ReadonlyMap<string, string | null> | undefined): string[] {
  if (leases === undefined) return [];
  return batch.filter((ref) => leases.has(ref)).map((ref) => `--force-with-lease=${ref}:${leases.get(ref) ?? ''}`);
}

/**
 * Pushes each ref under its own name (`<ref>:<ref>`), never forced, with no pre-push hook and no
 * prompt, in as few processes as the command line allows. Never throws.
 *
 * Each ref stands alone: a remote that refuses a whole push for one ref's sake (a pre-receive hook,
 * an object check, a pack over the size it takes) has the refs it refused pushed again in halves,
 * until the ones it refuses are alone, so the others still go. A push that fails as a whole (an
 * unreachable remote, a refused credential) rejects every ref not yet tried with git's cause,
 * redacted.
 * @param git - the runner
 * @param cwd - a folder inside the checkout
 * @param remote - the configured remote's name
 * @param refs - full refnames
 * @param options - the ssh command, secrets, timeout and progress sink
 * @returns what happened to each ref, and whether the remote answered
 * @internal
 */
export async function pushRefs(git: GitRunner, cwd: string, remote: string, refs: readonly string[], options: NetworkOptions & PushLeases): Promise<PushReport> {
  const statuses = new Map<string, RefPushStatus>();
  let reached = false;
  let failure: string | null = null;
  let budget = SPLIT_BUDGET;
  const attempt = async (group: readonly string[]): Promise<void> => {
    if (failure !== null) {
      for (const ref of group) statuses.set(ref, { status: 'rejected', reason: failure });
      return;
    }
    const outcome = await pushOnce(git, cwd, remote, group, options);
    if (outcome.failure !== null) {
      // The remote as a whole is out of reach; the later batches would fail the same way.
      failure = outcome.failure;
      for (const ref of group) statuses.set(ref, { status: 'rejected', reason: failure });
      return;
    }
    reached = true;
    const together = group.filter((ref) => outcome.refusedTogether.has(ref));
    for (const ref of group) {
      const status = outcome.statuses.get(ref) as RefPushStatus;
      if (!together.includes(ref) || together.length < 2) statuses.set(ref, status);
      // Out of pushes to split with: what the remote said of the group is not said of this ref
      // alone, which it may well take; the next push tries it again.
      else if (budget <= 0) statuses.set(ref, status.status === 'rejected' ? { status: 'rejected', reason: `${status.reason} (refused in one push with ${together.length - 1} other refs, some of which the remote refuses; not tried alone: the next push tries it again)` } : status);
    }
    if (together.length < 2 || budget <= 0) return;
    const half = Math.ceil(together.length / 2);
    budget -= 2;
    await attempt(together.slice(0, half));
    await attempt(together.slice(half));
  };
  for (const batch of batches(refs)) await attempt(batch);
  return { statuses, reached };
}

/** One `git push` and what it said about each ref. */
interface PushOnce {
  statuses: Map<string, RefPushStatus>;
  /**
   * Refs the remote refused for a reason that may belong to another ref of the same push: a
   * pre-receive hook's refusal, or an unpacker error of an object check or of a pack over the
   * remote's size, is the whole push's.
   */
  refusedTogether: Set<string>;
  /** Why the push failed as a whole, or null when the remote answered. */
  failure: string | null;
}

async function pushOnce(git: GitRunner, cwd: string, remote: string, refs: readonly string[], options: NetworkOptions & PushLeases): Promise<PushOnce> {
  const secrets = options.secrets ?? [];
  const stderr: string[] = [];
  let stdout: string;
  try {
    ({ stdout } = await git.run(
      [
        // A remote added with --mirror=push refuses refspecs on the command line; chant names its refs.
        // A rejected push's advice (git pull) is about branches a person works on, not chant's refs.
        '-c', 'credential.interactive=false', '-c', `remote.${remote}.mirror=false`, '-c', 'advice.pushUpdateRejected=false',
        // --progress, watched or not: see PROGRESS.
        'push', '--porcelain', '--no-verify', '--no-follow-tags', '--no-signed', '--recurse-submodules=no', PROGRESS,
        ...leaseFlags(refs, options.leases),
        '--end-of-options', remote, ...refs.map((ref) => `${options.sources?.get(ref) ?? ref}:${ref}`),
      ],
      { cwd, env: networkEnvironment(options.sshCommand), timeoutMs: options.timeoutMs ?? NETWORK_TIMEOUT_MS, minBytes: NETWORK_MIN_BYTES, okExitCodes: [1], ...collectStderr(options, stderr) },
    ));
  } catch (error) {
    return failedWhole(refs, failureReason(error, secrets, stderr));
  }
  const reported = parsePorcelain(stdout);
  const lines = stderr.join('');
  const statuses = new Map<string, RefPushStatus>();
  const refusedTogether = new Set<string>();
  const answered = reported.size > 0;
  for (const ref of refs) {
    const entry = reported.get(ref);
    if (entry === undefined) {
      // git stopped before it reported this ref (an HTTP server that died mid-push): its cause.
      statuses.set(ref, { status: 'rejected', reason: redact(explain(answered ? 'git push reported nothing for this ref' : null, lines), secrets) });
    } else if (entry.status !== 'rejected') statuses.set(ref, entry);
    else if (entry.remote) {
      statuses.set(ref, { status: 'rejected', reason: redact(explain(entry.reason, lines), secrets) });
      if (/pre-receive hook declined/.test(entry.reason) || (/unpacker error/.test(entry.reason) && [OBJECT_CHECK, LOCAL_OBJECT, TOO_LARGE].includes(categoryOf(lines) ?? ''))) refusedTogether.add(ref);
    } else statuses.set(ref, { status: 'rejected', reason: redact(entry.reason, secrets) });
  }
  if (!answered && reported.size === 0 && refs.length > 0) return failedWhole(refs, redact(explain(null, lines), secrets));
  return { statuses, refusedTogether, failure: null };
}

/**
 * A push git reported no ref of: the remote is out of reach, unless a web server refused the
 * push's one pack as over the size it takes (HTTP 413: nginx's client_max_body_size is 1 MiB
 * unless set), which is the whole push's: then a ref may go alone.
 */
function failedWhole(refs: readonly string[], failure: string): PushOnce {
  if (categoryOf(failure) !== TOO_LARGE) return { statuses: new Map(), refusedTogether: new Set(), failure };
  return { statuses: new Map(refs.map((ref) => [ref, { status: 'rejected', reason: failure }])), refusedTogether: new Set(refs), failure: null };
}

/**
 * Brings the remote's refs into a staging namespace (`refspecs`, forced and pruned there),
 * checking every object as it arrives, all or nothing (`--atomic`). No replica and no local ref
 * is written here: the caller records them with the local moves in one transaction, so a fetch
 * refused later writes nothing. Never throws.
 * @param git - the runner
 * @param cwd - a folder inside the checkout
 * @param remote - the configured remote's name
 * @param refspecs - what to fetch into which staging refs (see stagingRefspecs)
 * @param options - the ssh command and the timeout
 * @returns null, or why the remote could not be fetched from (git's cause, redacted)
 * @internal
 */
export async function fetchToStaging(git: GitRunner, cwd: string, remote: string, refspecs: readonly string[], options: NetworkOptions): Promise<string | null> {
  const stderr: string[] = [];
  try {
    await git.run(
      [
        '-c', 'fetch.fsckObjects=true', '-c', 'credential.interactive=false',
        // --refmap= keeps the configured refspecs from moving refs/remotes/<remote>/* as well.
        'fetch', '--prune', '--atomic', '--no-tags', '--no-write-fetch-head', '--refmap=', '--no-recurse-submodules', PROGRESS,
        '--end-of-options', remote, ...refspecs,
      ],
      { cwd, env: networkEnvironment(options.sshCommand), timeoutMs: options.timeoutMs ?? NETWORK_TIMEOUT_MS, minBytes: NETWORK_MIN_BYTES, ...collectStderr(options, stderr) },
    );
    return null;
  } catch (error) {
    return failureReason(error, options.secrets ?? [], stderr);
  }
}

/**
 * One line of a ref transaction: set `ref` to `next` (null: delete it), checking that it holds
 * `expected` first when `check` is set (null: that it does not exist).
 * @internal
 */
export interface RefWrite {
  ref: string;
  next: string | null;
  check?: { expected: string | null };
}

/**
 * Why one ref of a transaction could not be written, as `update-ref` says it: the ref and git's
 * words, and whether it was a compare-and-swap that found another value (a race), not a name
 * in the way or a lock held.
 * @internal
 */
export interface RefWriteFailure {
  ref: string;
  reason: string;
  moved: boolean;
}

/**
 * Writes refs in one all-or-nothing `update-ref --stdin` transaction, with reflogs unless
 * `options.reflog` is false.
 * @param git - the runner
 * @param cwd - a folder inside the checkout
 * @param writes - each ref and what to do with it
 * @param reason - the reflog message
 * @param options - whether to create reflogs (the default)
 * @returns null when everything was written; else the ref git could not write, and nothing was written
 * @throws {@link WipError} `git-failed` when the transaction failed and git named no ref
 * @internal
 */
export async function writeRefs(git: GitRunner, cwd: string, writes: readonly RefWrite[], reason: string, options: { reflog?: boolean } = {}): Promise<RefWriteFailure | null> {
  if (writes.length === 0) return null;
  const input = writes
    .map((write) => {
      if (write.next === null) return `delete ${write.ref}\0${write.check?.expected ?? ''}\0`;
      if (write.check === undefined) return `update ${write.ref}\0${write.next}\0\0`;
      return write.check.expected === null ? `create ${write.ref}\0${write.next}\0` : `update ${write.ref}\0${write.next}\0${write.check.expected}\0`;
    })
    .join('');
  try {
    await git.run(['update-ref', '-z', '--stdin', ...(options.reflog === false ? [] : ['--create-reflog']), '-m', reason], { cwd, input });
    return null;
  } catch (error) {
    const said = error instanceof GitCommandError ? error.stderr : '';
    const match = /cannot lock ref '([^']+)': (.*)$/m.exec(said) ?? /Unable to create '(.+?)\.lock': (.*)$/m.exec(said);
    if (match === null) throw asWipError(error);
    let ref = match[1] as string;
    // A held lock is named by its file: find the ref whose file it is.
    if (!ref.startsWith('refs/')) ref = writes.find((write) => ref.endsWith(`/${write.ref}`))?.ref ?? ref;
    if (!writes.some((write) => write.ref === ref)) throw asWipError(error);
    return { ref, reason: (match[2] as string).trim(), moved: /is at [0-9a-f]+ but expected|reference already exists|reference is missing/.test(match[2] as string) };
  }
}

/**
 * The LFS objects of commits, fetched from the remote's LFS store (`git lfs fetch`), so that a
 * restore on this box needs no network. Never throws.
 * @param git - the runner
 * @param cwd - a folder inside the checkout
 * @param remote - the configured remote's name
 * @param commits - the commits whose trees' LFS files are wanted
 * @param options - the ssh command, secrets and timeout
 * @returns null, or why the objects could not be fetched
 * @internal
 */
export async function fetchLfsObjects(git: GitRunner, cwd: string, remote: string, commits: readonly string[], options: NetworkOptions): Promise<string | null> {
  for (const batch of batches([...new Set(commits)])) {
    const stderr: string[] = [];
    try {
      await git.run(['-c', 'credential.interactive=false', 'lfs', 'fetch', remote, ...batch], {
        cwd, env: networkEnvironment(options.sshCommand), timeoutMs: options.timeoutMs ?? NETWORK_TIMEOUT_MS, minBytes: NETWORK_MIN_BYTES, ...collectStderr(options, stderr),
      });
    } catch (error) {
      return `the LFS objects could not be fetched: ${failureReason(error, options.secrets ?? [], stderr)}`;
    }
  }
  return null;
}

/**
 * Pushes the LFS objects that the commits of `refs` need and the remote's LFS store lacks
 * (`git lfs push <remote> --stdin`), which git-lfs's pre-push hook would have done had chant run
 * hooks. Never throws.
 * @param git - the runner
 * @param cwd - a folder inside the checkout
 * @param remote - the configured remote's name
 * @param refs - full refnames
 * @param options - the ssh command, secrets and timeout
 * @returns null, or why the objects could not be pushed
 * @internal
 */
export async function pushLfsObjects(git: GitRunner, cwd: string, remote: string, refs: readonly string[], options: NetworkOptions): Promise<string | null> {
  if (refs.length === 0) return null;
  const stderr: string[] = [];
  try {
    await git.run(['-c', 'credential.interactive=false', 'lfs', 'push', remote, '--stdin'], {
      cwd, input: refs.map((ref) => `${ref}\n`).join(''), env: networkEnvironment(options.sshCommand),
      timeoutMs: options.timeoutMs ?? NETWORK_TIMEOUT_MS, minBytes: NETWORK_MIN_BYTES, ...collectStderr(options, stderr),
    });
    return null;
  } catch (error) {
    return `its LFS objects could not be pushed: ${failureReason(error, options.secrets ?? [], stderr)}`;
  }
}

/**
 * Whether git-lfs keeps objects for this repository: its filter is configured and its object
 * store (`<git dir>/lfs/objects`, or wherever `lfs.storage` says) exists. A repository that never
 * stored an LFS object has none to push, and is spared the scan.
 * @param git - the runner
 * @param cwd - a folder inside the checkout
 * @returns true when LFS objects may need to go with a push
 * @internal
 */
export async function usesLfs(git: GitRunner, cwd: string): Promise<boolean> {
  const out = await run(git, cwd, ['rev-parse', '--git-common-dir'], {});
  const common = resolve(cwd, out.trim());
  if (existsSync(join(common, 'lfs', 'objects'))) return true;
  const storage = await run(git, cwd, ['config', '--get', 'lfs.storage'], { okExitCodes: [1] });
  return storage.trim().length > 0;
}

/**
 * The environment of a network call: ssh in batch mode however the host named it (the ambient
 * `GIT_SSH_COMMAND`, else `core.sshCommand`, else a `GIT_SSH` program, else `ssh`), with the batch
 * option its variant takes; see {@link sshEnvironment}.
 * @param sshCommand - `core.sshCommand`, or null
 * @returns the variables to add
 * @internal
 */
export function networkEnvironment(sshCommand: string | null): Record<string, string> {
  return sshEnvironment({ sshCommand, sshVariant: null });
}

/** Splits refs into runs whose refspecs fit one command line. */
function batches(refs: readonly string[]): string[][] {
  const out: string[][] = [];
  let current: string[] = [];
  let chars = 0;
  for (const ref of refs) {
    const cost = ref.length * 2 + 2;
    if (current.length > 0 && chars + cost > PUSH_BATCH_CHARS) {
      out.push(current);
      current = [];
      chars = 0;
    }
    current.push(ref);
    chars += cost;
  }
  if (current.length > 0) out.push(current);
  return out;
}

/** One ref's line of `git push --porcelain`. */
type PorcelainEntry = { status: 'pushed' } | { status: 'up-to-date' } | { status: 'rejected'; reason: string; remote: boolean };

/**
 * Reads `git push --porcelain`: `<flag> TAB <from>:<to> TAB <summary>`, the flag `=` for up to
 * date, `!` for rejected with the reason in parentheses (`[remote rejected]` when the remote, not
 * git, refused it), anything else for a ref that went.
 *
 * A remote with several push URLs (`url` or `pushurl` given more than once) is pushed to at each,
 * one `To <url>` block after another, while a fetch reads the first alone: a ref went only where
 * every block says it went or was there. One block's refusal, or a ref one block leaves out, is
 * the ref's, whatever the others said.
 */
function parsePorcelain(stdout: string): Map<string, PorcelainEntry> {
  const blocks: Array<Map<string, PorcelainEntry>> = [];
  for (const line of stdout.split('\n')) {
    if (line.startsWith('To ') || blocks.length === 0) blocks.push(new Map());
    const reported = blocks.at(-1) as Map<string, PorcelainEntry>;
    const match = /^([ +*=!-])\t[^\t:]*:([^\t]+)\t(.*)$/.exec(line);
    if (match === null) continue;
    const [, flag, ref, summary] = match as unknown as [string, string, string, string];
    if (flag === '=') reported.set(ref, { status: 'up-to-date' });
    else if (flag === '!') {
      const reason = /\(([^)]*)\)\s*$/.exec(summary)?.[1] ?? summary.replace(/^\[|\]$/g, '');
      reported.set(ref, { status: 'rejected', reason: reason.trim() || 'rejected', remote: summary.startsWith('[remote rejected]') });
    } else reported.set(ref, { status: 'pushed' });
  }
  const answering = blocks.filter((block) => block.size > 0);
  const merged = new Map<string, PorcelainEntry>();
  for (const ref of new Set(answering.flatMap((block) => [...block.keys()]))) {
    const entries = answering.map((block) => block.get(ref));
    const refused = entries.find((entry) => entry?.status === 'rejected');
    if (refused !== undefined) merged.set(ref, refused);
    else if (entries.includes(undefined)) merged.set(ref, { status: 'rejected', reason: 'one of the remote\'s push URLs did not report this ref', remote: false });
    else merged.set(ref, entries.some((entry) => entry?.status === 'pushed') ? { status: 'pushed' } : { status: 'up-to-date' });
  }
  return merged;
}

// A lock file left in this checkout: git's own `error:` line, not a remote's `remote: error:`.
const LOCAL_LOCK = /^(?:error|fatal): .*Unable to create '[^']+\.lock': File exists/m;
// What a failure is, for a person: the first category whose pattern git's or the remote's words
// match names it, and git's own lines follow.
const OBJECT_CHECK = "the remote's object check refused it";
/** git could not read an object of what it packs, here: the push of every ref beside it fails, though the fault is one ref's. */
const LOCAL_OBJECT = 'an object it needs is missing or damaged in this repository, not on the remote, so none of it was sent (git fsck names what is damaged)';
/**
 * The remote takes no pack over a size (receive.maxInputSize, GitHub's 2 GiB, or a web server's
 * limit on a request: HTTP 413): the pack is the whole push's, and a ref may go alone.
 */
const TOO_LARGE = 'the push is larger than the remote takes at once';
const CATEGORIES: ReadonlyArray<readonly [RegExp, string]> = [
  [/(?:^|[\n\r])fatal: unable to read [0-9a-f]{40}(?:[0-9a-f]{24})?\s*(?:\n|$)/, LOCAL_OBJECT],
  [LOCAL_LOCK, 'a lock file is in the way in this checkout (a git process holds it, or one that crashed left it: when none is running, remove the file git names)'],
  [/No space left on device|Disk quota exceeded|disk full/i, "the remote's disk is full"],
  [/pack exceeds maximum allowed size|\bHTTP 413\b/, TOO_LARGE],
  [/fsck error|object [0-9a-f]{7,}: \w+:|hasDotgit|bad (tree|commit|object)|missing necessary objects/i, OBJECT_CHECK],
  [/pre-receive hook declined/, "the remote's pre-receive hook declined it"],
  [/Permission denied \((?:publickey|password|keyboard-interactive|hostbased)[^)]*\)/, 'ssh refused the login (batch mode: no password or passphrase is asked for)'],
  [/insufficient permission|Permission denied|Read-only file system|unable to create temporary object directory|Operation not permitted/i, 'the remote cannot write there (permission denied or read-only)'],
  [/RPC failed|unexpected disconnect|hung up unexpectedly|Empty reply from server|Connection reset|remote end hung up/i, 'the connection to the remote broke off'],
];

// git's boilerplate around a cause, which says nothing a person can act on.
const BOILERPLATE = [
  /^error: failed to push some refs to /,
  /^fatal: Could not read from remote repository\.?$/,
  /^Please make sure you have the correct access rights$/,
  /^and the repository exists\.?$/,
  /^(?:hint|To) /,
  /^Done$/,
  /^Everything up-to-date$/,
  // git's advice under a held lock; the lock's own line names the file.
  /^Another git process seems to be running in this repository/,
  /^an editor opened by 'git commit'/,
  /^are terminated then try again/,
  /^may have crashed in this repository earlier/,
  /^remove the file manually to continue\.?$/,
];
// A remote's progress, blank lines and trace lines say nothing of a cause.
const REMOTE_NOISE = /^remote: *(?:$|(?:Enumerating|Counting|Compressing|Total|Resolving|Writing|Finding)\b|\d+% \(|\d\d:\d\d:\d\d\.\d+ \S+:\d+ +trace: )/;
const TRACE = /^\d\d:\d\d:\d\d\.\d+ \S+:\d+ +trace: /;
// git's own progress on this side (`Resolving deltas: 100% (1/1)`), which says nothing of a cause either.
const LOCAL_PROGRESS = /^(?:[A-Z][a-z]+ objects|Enumerating|Counting|Compressing|Writing|Total|Delta|Resolving deltas|Checking connectivity|Auto packing)/;
// A fetch's report of the refs it updated (`From <url>`, `* [new branch] a -> b`, `+ a...b a -> b
// (forced update)`, `a..b a -> b`, `- [deleted]`): what went well. A ref it refused (`!`) stays.
const FETCH_UPDATES = /^(?:From \S|[*+=t-] (?:\[[^\]]+\]|[0-9a-f]+\.\.\.?[0-9a-f]+) |[0-9a-f]+\.\.[0-9a-f]+ )/;
/** At most this many of git's lines go into one reason. */
const CAUSE_LINES = 6;

function categoryOf(text: string): string | null {
  for (const [pattern, name] of CATEGORIES) if (pattern.test(text)) return name;
  return null;
}

/**
 * A reason a person can act on: what kind of failure it is, when that is clear, then git's
 * `summary` (such as the porcelain's `unpacker error`), git's `error:` and `fatal:` lines, then
 * the remote's own `remote:` lines and ssh's, progress, updated refs and boilerplate left out,
 * each once. The error lines come first so that a long report never cuts the cause.
 */
function explain(summary: string | null, stderr: string): string {
  const errors: string[] = [];
  const others: string[] = [];
  for (const raw of stderr.split(/\r?\n|\r/)) {
    const line = raw.trim();
    if (line.length === 0 || TRACE.test(line) || REMOTE_NOISE.test(line) || LOCAL_PROGRESS.test(line) || FETCH_UPDATES.test(line)) continue;
    if (BOILERPLATE.some((pattern) => pattern.test(line))) continue;
    const text = line.replace(/^(?:error|fatal): /, '').replace(/\s+$/, '');
    if (errors.includes(text) || others.includes(text) || text === summary) continue;
    (text === line ? others : errors).push(text);
  }
  const kept = [...errors, ...others].slice(0, CAUSE_LINES);
  const detail = [...(summary === null ? [] : [summary]), ...kept].join('; ');
  const category = categoryOf(`${summary ?? ''}\n${stderr}`);
  const body = detail.length > 0 ? detail : 'git gave no reason';
  return category === null ? body : `${category}: ${body}`;
}

/** Collects git's standard error as it comes, and hands it, redacted, to the progress sink when there is one. */
function collectStderr(options: NetworkOptions, into: string[]): Pick<GitRunOptions, 'onStderr'> {
  const sink = options.progress;
  const secrets = options.secrets ?? [];
  return {
    onStderr: (line) => {
      into.push(line);
      if (sink !== undefined) sink(redact(line, secrets));
    },
  };
}

function failureReason(error: unknown, secrets: readonly string[], collected: readonly string[] = []): string {
  if (!(error instanceof GitCommandError)) return redact(error instanceof Error ? error.message : String(error), secrets);
  const stderr = error.stderr.trim().length > 0 ? error.stderr : collected.join('');
  const stopped = (error as { stopped?: unknown }).stopped;
  if (stopped === 'stalled' || stopped === 'deadline' || /block timeout reached/.test(stderr)) {
    const said = explain(null, collected.join('') || stderr.replace(/.*block timeout reached.*/g, ''));
    return redact(`the remote did not answer in time and git was stopped${said === 'git gave no reason' ? '' : `: ${said}`}`, secrets);
  }
  return redact(explain(null, stderr), secrets);
}

/**
 * The secret a URL carries in its user-info: the password of `user:password@`, or over HTTP a
 * lone `token@`. A lone ssh user (`ssh://git@host`) is no secret.
 */
function urlSecret(url: string): string | null {
  // The user-info runs to the last `@` before the path: a password may hold a raw `@` or a space,
  // which git takes as they are.
  const match = /^([a-z][a-z0-9+.-]*):\/\/([^/]*)@/i.exec(url);
  if (match === null) return null;
  const [, scheme, userInfo] = match as unknown as [string, string, string];
  const colon = userInfo.indexOf(':');
  if (colon >= 0) return colon + 1 < userInfo.length ? userInfo.slice(colon + 1) : null;
  return /^https?$/i.test(scheme) ? userInfo : null;
}

/**
 * Hides credentials: user-info after a URL scheme, and the remote's own secrets wherever they
 * appear, since git prints some URLs bare (`unable to look up user:password@host`).
 */
function redact(text: string, secrets: readonly string[]): string {
  // The remote's own secrets go first, while they stand whole: hiding user-info first could cut
  // a password holding an `@` in two and leave its second half.
  let out = text;
  for (const secret of secrets) out = out.split(secret).join('***');
  return redactCredentials(out);
}

async function run(git: GitRunner, cwd: string, args: readonly string[], options: GitRunOptions = {}): Promise<string> {
  try {
    return (await git.run(args, { cwd, ...options })).stdout;
  } catch (error) {
    throw asWipError(error);
  }
}


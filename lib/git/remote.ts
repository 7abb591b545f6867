// Replication plumbing: the git calls the Replicator makes, local and over the network. Every
// call names its cwd, output is NUL-separated where a value could hold a newline, and nothing a
// remote or a URL says reaches a message unredacted.
import { compareBytes } from '../order.js';
import { asWipError, redactCredentials } from '../errors.js';
import { OBJECT_ID } from './formats/object-format.js';
import { GitCommandError } from './runner.js';
import { sshEnvironment } from './ssh.js';
import type { GitRunner, GitRunOptions } from './runner.js';

/**
 * Milliseconds a network call may go without output before git is stopped.
 * @internal
 */
export const NETWORK_TIMEOUT_MS = 60_000;

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
  /** Milliseconds without output before git is stopped; {@link NETWORK_TIMEOUT_MS} when absent. */
  timeoutMs?: number;
  /** Receives git's progress, line by line and redacted; git is asked for progress only when given. */
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
  const out = await run(git, cwd, ['config', '-z', '--get-regexp', '^(remote\\..*\\.(url|pushurl)|core\\.sshcommand)$'], { okExitCodes: [1] });
  let exists = false;
  let sshCommand: string | null = null;
  const secrets: string[] = [];
  for (const entry of out.split('\0')) {
    const newline = entry.indexOf('\n');
    const key = newline < 0 ? entry : entry.slice(0, newline);
    const value = newline < 0 ? '' : entry.slice(newline + 1);
    if (key === `remote.${remote}.url` || key === `remote.${remote}.pushurl`) {
      if (key.endsWith('.url')) exists = true;
      const secret = urlSecret(value);
      if (secret !== null) secrets.push(secret);
    } else if (key === 'core.sshcommand' && value.length > 0) sshCommand = value;
  }
  return { exists, sshCommand, secrets };
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
 * Every branch checked out in any worktree of the repository, as full refnames.
 * @param git - the runner
 * @param cwd - a folder inside the checkout
 * @returns the branches
 * @throws {@link WipError} `git-failed`
 * @internal
 */
export async function checkedOutBranches(git: GitRunner, cwd: string): Promise<Set<string>> {
  const out = await run(git, cwd, ['worktree', 'list', '--porcelain', '-z']);
  const branches = new Set<string>();
  for (const field of out.split('\0')) {
    if (field.startsWith('branch ')) branches.add(field.slice('branch '.length));
  }
  return branches;
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
 * Sets refs without checking their old values, in one all-or-nothing transaction: what chant
 * last saw on a remote.
 * @param git - the runner
 * @param cwd - a folder inside the checkout
 * @param tips - each ref and the commit to record
 * @throws {@link WipError} `git-failed`
 * @internal
 */
export async function recordRefs(git: GitRunner, cwd: string, tips: readonly RefTip[]): Promise<void> {
  if (tips.length === 0) return;
  const input = tips.map((tip) => `update ${tip.ref}\0${tip.commit}\0\0`).join('');
  await run(git, cwd, ['update-ref', '-z', '--stdin', '-m', 'chant wip: replica'], { input });
}

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
 * prompt, in as few processes as the command line allows. Never throws: a push that fails as a
 * whole (an unreachable remote, a refused credential) rejects every ref not yet tried with git's
 * cause (its `error:` and `fatal:` lines, see GitCommandError.summary), redacted.
 * @param git - the runner
 * @param cwd - a folder inside the checkout
 * @param remote - the configured remote's name
 * @param refs - full refnames
 * @param options - the ssh command and the timeout
 * @returns what happened to each ref
 * @internal
 */
export async function pushRefs(git: GitRunner, cwd: string, remote: string, refs: readonly string[], options: NetworkOptions & PushLeases): Promise<Map<string, RefPushStatus>> {
  const statuses = new Map<string, RefPushStatus>();
  let failure: string | null = null;
  for (const batch of batches(refs)) {
    if (failure === null) {
      try {
        const { stdout } = await git.run(
          [
            '-c', 'credential.interactive=false', ...quietAdvice(options),
            'push', '--porcelain', '--no-verify', '--no-follow-tags', '--no-signed', '--recurse-submodules=no', ...progressFlag(options),
            ...leaseFlags(batch, options.leases),
            '--end-of-options', remote, ...batch.map((ref) => `${options.sources?.get(ref) ?? ref}:${ref}`),
          ],
          { cwd, env: networkEnvironment(options.sshCommand), timeoutMs: options.timeoutMs ?? NETWORK_TIMEOUT_MS, okExitCodes: [1], ...progressSink(options) },
        );
        const reported = parsePorcelain(stdout, options.secrets ?? []);
        for (const ref of batch) statuses.set(ref, reported.get(ref) ?? { status: 'rejected', reason: 'git push reported nothing for this ref' });
        continue;
      } catch (error) {
        // The remote as a whole is out of reach; the later batches would fail the same way.
        failure = failureReason(error, options.secrets ?? []);
      }
    }
    for (const ref of batch) statuses.set(ref, { status: 'rejected', reason: failure });
  }
  return statuses;
}

/**
 * Mirrors the remote's refs of `classes` into `refs/chant/replica/<remote>/`, pruning what the
 * remote no longer holds, checking every object as it arrives. Never throws.
 * @param git - the runner
 * @param cwd - a folder inside the checkout
 * @param remote - the configured remote's name
 * @param refspecs - what to fetch into which replica refs (see replicaRefspecs)
 * @param options - the ssh command and the timeout
 * @returns null, or why the remote could not be fetched from (git's error: and fatal: lines, redacted)
 * @internal
 */
export async function fetchReplicas(git: GitRunner, cwd: string, remote: string, refspecs: readonly string[], options: NetworkOptions): Promise<string | null> {
  try {
    await git.run(
      [
        '-c', 'fetch.fsckObjects=true', '-c', 'credential.interactive=false',
        // --refmap= keeps the configured refspecs from moving refs/remotes/<remote>/* as well.
        'fetch', '--prune', '--no-tags', '--no-write-fetch-head', '--refmap=', '--no-recurse-submodules', ...progressFlag(options),
        '--end-of-options', remote, ...refspecs,
      ],
      { cwd, env: networkEnvironment(options.sshCommand), timeoutMs: options.timeoutMs ?? NETWORK_TIMEOUT_MS, ...progressSink(options) },
    );
    return null;
  } catch (error) {
    return failureReason(error, options.secrets ?? []);
  }
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

// git shows progress only when its own stderr is a terminal, which under the runner it never is:
// ask for it when someone is watching, and never otherwise.
function progressFlag(options: NetworkOptions): string[] {
  return options.progress === undefined ? [] : ['--progress'];
}

// A rejected push's advice ("integrate the remote changes, e.g. git pull") is about branches a
// person works on, not chant's refs; the document says what was rejected and why.
function quietAdvice(options: NetworkOptions): string[] {
  return options.progress === undefined ? [] : ['-c', 'advice.pushUpdateRejected=false'];
}

/** The runner's stderr hook for a progress sink: git may print a remote's URL with its credential. */
function progressSink(options: NetworkOptions): Pick<GitRunOptions, 'onStderr'> {
  const sink = options.progress;
  if (sink === undefined) return {};
  const secrets = options.secrets ?? [];
  return { onStderr: (line) => sink(redact(line, secrets)) };
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

/**
 * Reads `git push --porcelain`: `<flag> TAB <from>:<to> TAB <summary>`, the flag `=` for up to
 * date, `!` for rejected with the reason in parentheses, anything else for a ref that went.
 */
function parsePorcelain(stdout: string, secrets: readonly string[]): Map<string, RefPushStatus> {
  const reported = new Map<string, RefPushStatus>();
  for (const line of stdout.split('\n')) {
    const match = /^([ +*=!-])\t[^\t:]*:([^\t]+)\t(.*)$/.exec(line);
    if (match === null) continue;
    const [, flag, ref, summary] = match as unknown as [string, string, string, string];
    if (flag === '=') reported.set(ref, { status: 'up-to-date' });
    else if (flag === '!') {
      const reason = /\(([^)]*)\)\s*$/.exec(summary)?.[1] ?? summary.replace(/^\[|\]$/g, '');
      reported.set(ref, { status: 'rejected', reason: redact(reason.trim() || 'rejected', secrets) });
    } else reported.set(ref, { status: 'pushed' });
  }
  return reported;
}

function failureReason(error: unknown, secrets: readonly string[]): string {
  if (!(error instanceof GitCommandError)) return redact(error instanceof Error ? error.message : String(error), secrets);
  // git's error: and fatal: lines, not the last alone: a pack refused by fsck ends in
  // "index-pack failed", and the error: line before it names the object and the problem.
  return redact(error.summary, secrets);
}

/**
 * The secret a URL carries in its user-info: the password of `user:password@`, or over HTTP a
 * lone `token@`. A lone ssh user (`ssh://git@host`) is no secret.
 */
function urlSecret(url: string): string | null {
  const match = /^([a-z][a-z0-9+.-]*):\/\/([^/@\s]+)@/i.exec(url);
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
  let out = redactCredentials(text);
  for (const secret of secrets) out = out.split(secret).join('***');
  return out;
}

async function run(git: GitRunner, cwd: string, args: readonly string[], options: GitRunOptions = {}): Promise<string> {
  try {
    return (await git.run(args, { cwd, ...options })).stdout;
  } catch (error) {
    throw asWipError(error);
  }
}


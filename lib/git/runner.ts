// The one place git processes are started, watched and stopped. Every git runs in a process
// group of its own (a new session, so without a controlling terminal), so that a deadline stops
// git together with everything it started: transport helpers, ssh, filters, what hooks left.
// See "Git processes" in docs/design.md for the rules written here.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { lstatSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { StringDecoder } from 'node:string_decoder';

/**
 * One git invocation: what to run it with beyond its arguments.
 * @public
 */
export interface GitRunOptions {
  /** The folder git runs in; the runner's own when absent. */
  cwd?: string;
  /** Written to git's standard input. */
  input?: string | Uint8Array;
  /** Variables added to the curated environment (such as `GIT_INDEX_FILE`). */
  env?: Readonly<Record<string, string>>;
  /** Exit codes other than 0 that are answers, not failures (`symbolic-ref -q` exits 1 when detached). */
  okExitCodes?: readonly number[];
  /**
   * Milliseconds without progress before git, and everything it started, is stopped; 120,000
   * when absent. Progress is output on standard output or standard error (a network call's
   * `--progress` lines) and, where `/proc` shows it, a process of git's group starting or ending,
   * CPU time spent by them, or {@link GitRunOptions.minBytes} moved by them: a long `git add` of a
   * big file is working, a filter asleep is not.
   */
  timeoutMs?: number;
  /**
   * How many bytes git's group must move (read, write, or drain from its sockets' queues) before
   * moving bytes counts as progress: a network call gives 1,024, as git's own
   * `http.lowSpeedLimit` bounds a transfer's rate, so that a remote trickling a byte a second is
   * stopped after `timeoutMs` while a link moving a kilobyte in that time never is. Output, a
   * process starting or ending and CPU time count on their own. 1 when absent: any byte.
   */
  minBytes?: number;
  /**
   * The time (milliseconds since the epoch, as `Date.now()`) past which git is stopped whatever
   * it is doing: a step of a save that has an overall deadline. A call begun at or after it
   * fails at once without starting git.
   */
  deadline?: number;
  /**
   * Receives git's standard error while git runs, one line at a time with its terminator: `\n`,
   * or `\r` for a progress update that rewrites the line, so that writing each to a terminal as
   * it comes shows what git would. Standard error is still collected for errors as usual.
   */
  onStderr?: (line: string) => void;
  /**
   * Receives standard output as it arrives, chunk by chunk, while git still runs: a caller that
   * parses a long output can do so alongside git instead of after it. The output is then not
   * kept a second time: this package's runner resolves `stdout` empty. A runner that does not
   * stream resolves it with the whole output instead, so a caller takes the chunks when any came,
   * else `stdout`.
   */
  onStdout?: (chunk: Buffer) => void;
  /**
   * Stops git when aborted: a caller that has read all it needs from a long output ends the
   * walk early. The call then rejects; the caller that aborted it knows why.
   */
  signal?: AbortSignal;
}

/**
 * What git answered.
 * @public
 */
export interface GitOutput {
  /** Standard output, not trimmed. */
  stdout: string;
  /** The exit code: 0, or one of the call's `okExitCodes`. */
  exitCode: number;
}

/**
 * Runs git. The SDK's only way to reach git, so tests can wrap it to count or fail calls.
 * @public
 */
export interface GitRunner {
  /**
   * Runs `git <args>` and resolves with its output, or rejects with a {@link GitCommandError}.
   * @param args - the arguments after `git`
   * @param options - where and how it runs
   * @returns standard output and the exit code
   * @throws {@link GitCommandError} when git exits with a code the call did not expect
   */
  run(args: readonly string[], options?: GitRunOptions): Promise<GitOutput>;
}

/**
 * Why the runner stopped git before it exited: `stalled` when it made no progress for the
 * call's `timeoutMs`, `deadline` when the call's `deadline` passed.
 * @public
 */
export type GitStopReason = 'stalled' | 'deadline';

/**
 * git exited with a code the call did not expect, could not be started, or was stopped.
 * @public
 */
export class GitCommandError extends Error {
  /** The arguments git was given. */
  readonly args: readonly string[];
  /** Its exit code, or null when it never ran to an exit (not found, stopped, killed). */
  readonly exitCode: number | null;
  /** Its standard error. */
  readonly stderr: string;
  /** Why the runner stopped it, or null when it was not stopped by the runner's clock. */
  readonly stopped: GitStopReason | null;

  /**
   * Records a failed git call.
   * @param args - the arguments git was given
   * @param exitCode - its exit code, or null
   * @param stderr - its standard error
   * @param stopped - why the runner stopped it, when it did
   */
  constructor(args: readonly string[], exitCode: number | null, stderr: string, stopped: GitStopReason | null = null) {
    super(`git ${subcommandOf(args)} failed${exitCode === null ? '' : ` (exit ${exitCode})`}: ${causeOf(stderr)}`);
    this.name = 'GitCommandError';
    this.args = args;
    this.exitCode = exitCode;
    this.stderr = stderr;
    this.stopped = stopped;
  }

  /** git's own last line of standard error. */
  get lastLine(): string {
    return lastLine(this.stderr);
  }

  /**
   * What went wrong, in git's words: its `error:` and `fatal:` lines (the `error:` lines name the
   * path and the system's reason, where the last `fatal:` line often says only "adding files
   * failed"), the remote's `remote:` lines, what a transport such as ssh said, the stop's own
   * reason; progress, hints, warnings and git's boilerplate left out; each line once, the last
   * eight, in order.
   */
  get summary(): string {
    return causeOf(this.stderr);
  }
}

/** How many lines {@link GitCommandError.summary} keeps. */
const CAUSE_MAX_LINES = 8;

function lastLine(text: string): string {
  const lines = text.split(/\r?\n|\r/).map((line) => line.trim()).filter((line) => line.length > 0);
  return lines.at(-1) ?? 'no message';
}

// Lines that say nothing of a cause: progress (git's and a remote's), hints, warnings, git's
// boilerplate after a transport failed, and the header of a push's report.
const NOISE = [
  /^(?:remote: *)?(?:Enumerating|Counting|Compressing|Writing|Receiving|Resolving|Unpacking|Finding) [a-z ]+:/i,
  /^(?:remote: *)?Total \d+ \(delta/,
  /^remote: *$/,
  /^(?:hint|warning): /,
  /^Please make sure you have the correct access rights$/,
  /^and the repository exists\.$/,
  /^(?:To|From) \S+$/,
];

function causeOf(stderr: string): string {
  const kept: string[] = [];
  for (const raw of stderr.split(/\r?\n|\r/)) {
    const line = raw.trim();
    if (line.length === 0 || NOISE.some((noise) => noise.test(line))) continue;
    const seen = kept.indexOf(line);
    if (seen >= 0) kept.splice(seen, 1);
    kept.push(line);
  }
  return kept.length === 0 ? lastLine(stderr) : kept.slice(-CAUSE_MAX_LINES).join('; ');
}

/** Hands every complete line of `text` to `sink` and returns what is left of an unfinished one. */
function emitLines(text: string, sink: (line: string) => void): string {
  let start = 0;
  for (const match of text.matchAll(/\r\n|\r|\n/g)) {
    const end = (match.index ?? 0) + match[0].length;
    deliver(text.slice(start, end), sink);
    start = end;
  }
  return text.slice(start);
}

function deliver(line: string, sink: (line: string) => void): void {
  try {
    const returned: unknown = sink(line);
    // An async sink's rejection, left unhandled, ended the whole process mid-push.
    if (typeof returned === 'object' && returned !== null && typeof (returned as { then?: unknown }).then === 'function') {
      Promise.resolve(returned as PromiseLike<unknown>).then(undefined, () => undefined);
    }
  } catch {
    // Progress is for people watching; a sink that fails must never fail the git call.
  }
}

/** A line splitter for a child's standard error, fed chunk by chunk. */
function lineSplitter(sink: (line: string) => void): { write(chunk: Buffer): void; end(): void } {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  return {
    write: (chunk) => {
      pending = emitLines(pending + decoder.write(chunk), sink);
    },
    end: () => {
      const rest = pending + decoder.end();
      pending = '';
      if (rest.length > 0) deliver(rest, sink);
    },
  };
}

// Ambient variables git legitimately needs, and the settings a host may pass on to git through
// the environment (docs/design.md, "Git processes"); everything else, GIT_* above all, stays out.
const PASSED_THROUGH = [
  'PATH', 'HOME', 'XDG_CONFIG_HOME', 'USER', 'LOGNAME', 'TMPDIR', 'TMP', 'TEMP', 'SYSTEMROOT',
  'SSH_AUTH_SOCK', 'HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'no_proxy',
  'SSL_CERT_FILE', 'SSL_CERT_DIR',
  'GIT_AUTHOR_NAME', 'GIT_AUTHOR_EMAIL', 'GIT_AUTHOR_DATE',
  'GIT_COMMITTER_NAME', 'GIT_COMMITTER_EMAIL', 'GIT_COMMITTER_DATE',
  'GIT_CONFIG_NOSYSTEM', 'GIT_CONFIG_GLOBAL', 'GIT_CONFIG_SYSTEM',
  'GIT_SSL_CAINFO', 'GIT_SSL_CAPATH',
  'GIT_SSH_COMMAND', 'GIT_SSH', 'GIT_SSH_VARIANT', 'GIT_TRACE2_EVENT',
] as const;

const FIXED_ENV: Readonly<Record<string, string>> = {
  LC_ALL: 'C',
  LANGUAGE: 'C',
  GIT_TERMINAL_PROMPT: '0',
  SSH_ASKPASS: '',
  GCM_INTERACTIVE: 'never',
  GIT_OPTIONAL_LOCKS: '0',
};

/**
 * `GIT_CONFIG_COUNT` and its `GIT_CONFIG_KEY_<n>`/`GIT_CONFIG_VALUE_<n>` pairs, read from
 * `source`: none when the count is not a number or a key is missing (git would refuse to run).
 */
function configPairs(source: Readonly<Record<string, string | undefined>>): Array<[string, string]> {
  const count = source.GIT_CONFIG_COUNT;
  if (count === undefined || !/^\d{1,4}$/.test(count)) return [];
  const pairs: Array<[string, string]> = [];
  for (let i = 0; i < Number(count); i += 1) {
    const key = source[`GIT_CONFIG_KEY_${i}`];
    if (key === undefined || key.length === 0) return [];
    pairs.push([key, source[`GIT_CONFIG_VALUE_${i}`] ?? '']);
  }
  return pairs;
}

function withoutConfigPairs(env: Record<string, string>): void {
  for (const key of Object.keys(env)) {
    if (/^GIT_CONFIG_(?:COUNT|KEY_\d+|VALUE_\d+)$/.test(key)) delete env[key];
  }
}

/**
 * The environment a git call runs with: the pass-through list, a host's deliberate
 * `GIT_ASKPASS` and `GIT_CONFIG_COUNT` settings, the fixed settings, then the call's own; the
 * call's configuration pairs come after the host's, so for one key the call's wins.
 * @internal
 */
export function gitEnvironment(callEnv: Readonly<Record<string, string>> = {}, ambient: Readonly<Record<string, string | undefined>> = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of PASSED_THROUGH) {
    const value = ambient[key];
    if (value !== undefined) env[key] = value;
  }
  // An empty GIT_ASKPASS turns off every askpass (core.askPass and SSH_ASKPASS too); a host's
  // credential broker named in GIT_ASKPASS is its own choice.
  const askpass = ambient.GIT_ASKPASS;
  Object.assign(env, FIXED_ENV, { GIT_ASKPASS: askpass !== undefined && askpass.length > 0 ? askpass : '' });
  const pairs = [...configPairs(ambient), ...configPairs(callEnv)];
  Object.assign(env, callEnv);
  withoutConfigPairs(env);
  if (pairs.length > 0) {
    env.GIT_CONFIG_COUNT = String(pairs.length);
    pairs.forEach(([key, value], i) => {
      env[`GIT_CONFIG_KEY_${i}`] = key;
      env[`GIT_CONFIG_VALUE_${i}`] = value;
    });
  }
  return env;
}

/**
 * Options every git call gets before its own: no hook ever runs. `core.hooksPath` given on the
 * command line wins over every configuration file and `GIT_CONFIG_COUNT`; git looks each hook up
 * as `<hooksPath>/<name>`, which under `/dev/null` is never a file. `core.fsmonitor` names a
 * program git asks which files changed and trusts: one that misses an edit would have a save keep
 * the index's content instead, so git looks at every file itself. For the same reason git compares
 * all of a file's stat data with the index's, whatever `core.trustctime` and `core.checkStat` say:
 * with either relaxed, a file rewritten at its size and with its mtime kept (`cp -p`, `rsync -t`,
 * a tar or backup put back) read as unchanged, and the save kept the index's content.
 */
const NO_HOOKS = ['-c', 'core.hooksPath=/dev/null', '-c', 'core.fsmonitor=false', '-c', 'core.trustctime=true', '-c', 'core.checkStat=default'] as const;

/**
 * `core.ignorecase=false` where the checkout around `cwd` is on a file system that tells names
 * apart by case (its `.git` is not found as `.GIT`): `core.ignorecase=true` there (a repository
 * copied from macOS or Windows) has git take `README` beside a tracked `readme` for it, and a
 * save would leave `README` out in silence. Nothing where no `.git` is found, or where the file
 * system ignores case as the setting says.
 */
function caseOptions(cwd: string): readonly string[] {
  try {
    for (let dir = resolve(cwd); ; dir = dirname(dir)) {
      const found = lstatSync(join(dir, '.git'), { throwIfNoEntry: false });
      if (found !== undefined) {
        const upper = lstatSync(join(dir, '.GIT'), { throwIfNoEntry: false });
        return upper !== undefined && upper.ino === found.ino && upper.dev === found.dev ? [] : ['-c', 'core.ignorecase=false'];
      }
      if (dirname(dir) === dir) return [];
    }
  } catch {
    // A folder on the way that cannot be looked at: git's setting stands.
    return [];
  }
}

/** Milliseconds git may go without progress when the call names no timeout. */
const DEFAULT_STALL_MS = 120_000;
/**
 * The bytes a network call must move within its timeout for them to count as progress (its
 * {@link GitRunOptions.minBytes}).
 * @internal
 */
export const NETWORK_MIN_BYTES = 1024;
/** After git exits, how long its standard output and error may stay open (held by what it left running). */
const EXIT_GRACE_MS = 200;
/** After that group is killed, how long a pipe held by a process that left the group is waited for. */
const ESCAPED_GRACE_MS = 2_000;
/** After SIGTERM, how long git has to remove its lock files before its group is killed. */
const TERM_GRACE_MS = 1_000;
/** The longest wait setTimeout holds (2^31 - 1 ms, about 24.8 days). */
const MAX_TIMER_MS = 2_147_483_647;
/** How often progress is sampled, at most and at least, while a call runs long. */
const SAMPLE_MAX_MS = 2_000;
const SAMPLE_MIN_MS = 100;

const PROC = process.platform === 'linux' && existsDir('/proc/self/fd');
const GROUPS = process.platform !== 'win32';

function existsDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The default {@link GitRunner}: spawns git itself, in a process group of its own, with a
 * strict exit-code check, a curated environment (`LC_ALL=C`, no prompts, no ambient `GIT_*` but
 * the documented ones), no hooks, a timeout that measures progress rather than silence and an
 * optional deadline, both of which stop git with everything it started.
 * @public
 */
export class GitProcessRunner implements GitRunner {
  readonly #cwd: string;
  readonly #binary: string;

  /**
   * A runner for one checkout.
   * @param cwd - the folder git runs in unless a call names another
   * @param binary - the git executable; `git` from PATH when absent
   */
  constructor(cwd: string, binary = 'git') {
    this.#cwd = cwd;
    this.#binary = binary;
  }

  /**
   * Runs `git <args>`.
   * @param args - the arguments after `git`
   * @param options - where and how it runs
   * @returns standard output and the exit code
   * @throws {@link GitCommandError} when git exits with a code the call did not expect, cannot be
   *   started, makes no progress for the call's timeout or runs past its deadline
   */
  run(args: readonly string[], options: GitRunOptions = {}): Promise<GitOutput> {
    return runGit(this.#binary, options.cwd ?? this.#cwd, args, options);
  }
}

/**
 * The name this runner had when simple-git started its processes: the same runner.
 * @deprecated Use {@link GitProcessRunner}.
 * @public
 */
export class SimpleGitRunner extends GitProcessRunner {}

/** Every git group running, so that a signal that ends this process ends them too. */
const LIVE = new Set<ChildProcess>();
let signalsWatched = false;

function watchSignals(): void {
  if (signalsWatched || !GROUPS) return;
  signalsWatched = true;
  // The groups are not in this process's group, so a terminal's Ctrl-C does not reach them.
  process.on('exit', endGroups);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const handler = (): void => {
      // Another listener is the host's: it decides what the signal does (the CLI cancels the
      // call, which stops its git as a cancel does), and an exit ends the groups above. Killing
      // them here would fail a step the call does not cancel, such as a restore's index reset.
      if (process.listenerCount(signal) !== 1) return;
      // Alone, a listener would keep this process alive: when nobody else listens, the signal
      // does what it would have done, once git has let its locks go.
      endGroups();
      process.removeListener(signal, handler);
      process.kill(process.pid, signal);
    };
    process.on(signal, handler);
  }
}

/**
 * Ends every git group running as this process ends (by a signal, or an exit): SIGTERM first, on which
 * git removes its lock files (`index.lock`, a ref's lock), then SIGKILL for what is left once
 * each git has exited, or after {@link TERM_GRACE_MS}. A git killed outright would leave its
 * `index.lock` behind, and every git command in the checkout refused until someone removes it.
 * The wait is synchronous: nothing else of this process runs before it ends.
 */
function endGroups(): void {
  const children = [...LIVE];
  if (children.length === 0) return;
  for (const child of children) signalGroup(child, 'SIGTERM');
  const until = Date.now() + (PROC ? TERM_GRACE_MS : 100);
  const pause = new Int32Array(new SharedArrayBuffer(4));
  while (Date.now() < until && (!PROC || children.some((child) => !exited(child)))) Atomics.wait(pause, 0, 0, 5);
  for (const child of children) signalGroup(child, 'SIGKILL');
}

/** Whether a child has exited, reaped or not yet (a zombie): read from `/proc`. */
function exited(child: ChildProcess): boolean {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return true;
  try {
    const stat = readFileSync(`/proc/${child.pid}/stat`, 'latin1');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state === 'Z' || state === 'X';
  } catch {
    return true;
  }
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    if (GROUPS) process.kill(-child.pid, signal);
    else child.kill(signal);
  } catch {
    // Gone already.
  }
}

function runGit(binary: string, cwd: string, args: readonly string[], options: GitRunOptions): Promise<GitOutput> {
  const ok = new Set([0, ...(options.okExitCodes ?? [])]);
  const deadline = options.deadline;
  if (deadline !== undefined && Date.now() >= deadline) {
    return Promise.reject(new GitCommandError(args, null, `the deadline had passed before git ${subcommandOf(args)} could start`, 'deadline'));
  }
  if (options.signal?.aborted) return Promise.reject(new GitCommandError(args, null, 'aborted before it started'));
  watchSignals();
  return new Promise<GitOutput>((resolve, reject) => {
    let child: ChildProcess;
    try {
      child = spawn(binary, [...NO_HOOKS, ...caseOptions(cwd), ...args], {
        cwd,
        env: gitEnvironment(options.env),
        // A new session: its own process group, and no controlling terminal to prompt on.
        detached: GROUPS,
        stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
        windowsHide: true,
      });
    } catch (error) {
      reject(new GitCommandError(args, null, error instanceof Error ? error.message : String(error)));
      return;
    }
    LIVE.add(child);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const lines = options.onStderr === undefined ? null : lineSplitter(options.onStderr);
    let outputSeen = false;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
    let open = 2;
    let stopped: GitStopReason | 'aborted' | null = null;
    let settled = false;
    let spawnError: Error | null = null;
    const timers = new Set<NodeJS.Timeout>();
    // setTimeout takes at most 2^31 - 1 ms and fires at once for more (a deadline of 600h): wait in steps.
    const later = (ms: number, fn: () => void): void => {
      const step = Math.min(ms, MAX_TIMER_MS);
      const timer = setTimeout(() => {
        timers.delete(timer);
        if (ms > step) later(ms - step, fn);
        else fn();
      }, step);
      timers.add(timer);
    };

    const finish = (): void => {
      if (settled || exit === null || open > 0 || stopping) return;
      settled = true;
      for (const timer of timers) clearTimeout(timer);
      LIVE.delete(child);
      options.signal?.removeEventListener('abort', onAbort);
      lines?.end();
      const stderr = Buffer.concat(err).toString('utf8');
      if (stopped !== null) {
        reject(new GitCommandError(args, null, stoppedMessage(args, stderr, stopped, options), stopped === 'aborted' ? null : stopped));
        return;
      }
      if (spawnError !== null) {
        reject(new GitCommandError(args, null, stderr.length > 0 ? stderr : spawnError.message));
        return;
      }
      const code = exit.code;
      if (code === null || !ok.has(code)) {
        const why = code === null ? `${stderr}${stderr.endsWith('\n') || stderr.length === 0 ? '' : '\n'}git was ended by ${exit.signal ?? 'a signal'}` : stderr;
        reject(new GitCommandError(args, code, why));
        return;
      }
      resolve({ stdout: Buffer.concat(out).toString('utf8'), exitCode: code });
    };

    const closed = (): void => {
      open -= 1;
      finish();
    };
    child.stdout?.on('data', (chunk: Buffer) => {
      outputSeen = true;
      // Streamed output is the caller's: kept and decoded here too, a save's 1.6 MB of trees
      // from cat-file cost 31 ms more (a CPU profile of a CLI save of 40,000 files in wide folders).
      if (options.onStdout !== undefined) options.onStdout(chunk);
      else out.push(chunk);
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      outputSeen = true;
      err.push(chunk);
      lines?.write(chunk);
    });
    child.stdout?.once('close', closed);
    child.stderr?.once('close', closed);
    child.once('error', (error) => {
      // Not started (ENOENT, EACCES): no exit will come.
      spawnError = error;
      if (child.pid === undefined && exit === null) {
        exit = { code: null, signal: null };
        open = 0;
        finish();
      }
    });
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      if (open > 0) {
        // What git started may still hold the pipes (a hook's or filter's background job):
        // git's own output is complete, so stop waiting for theirs.
        // Killing the group closes the pipes once what is left in them has been read (this
        // process may have been too busy to read it yet); only a holder that left the group
        // makes the runner drop the pipes, later.
        later(EXIT_GRACE_MS, () => {
          if (open === 0) return;
          signalGroup(child, 'SIGKILL');
          later(ESCAPED_GRACE_MS, () => {
            child.stdout?.destroy();
            child.stderr?.destroy();
          });
        });
      }
      finish();
    });
    if (options.input !== undefined && child.stdin) {
      // git may exit before reading everything (a failure): its closed pipe is not our failure.
      child.stdin.on('error', () => undefined);
      child.stdin.end(typeof options.input === 'string' ? options.input : Buffer.from(options.input.buffer, options.input.byteOffset, options.input.byteLength));
    }

    let stopping = false;
    const stop = (reason: GitStopReason | 'aborted'): void => {
      if (stopping || settled || exit !== null) return;
      stopping = true;
      stopped = reason;
      // What the group was writing is collected before it is stopped, to be removed after: a
      // partial object, a pack or a lock a stopped git leaves behind (git itself removes its
      // locks on SIGTERM, but not its temporary objects, and SIGKILL leaves everything). A
      // caller's cancel stops git as a stall does, and leaves as little.
      // The group is paused while it is looked at: git writes one object after another, and a
      // file noted a moment before SIGTERM was often renamed into place by then, the one it
      // opened next left behind. SIGTERM reaches it, pending, as it is let go.
      const paused = PROC && GROUPS && child.pid !== undefined && exit === null && pauseGroup(child.pid);
      let leftovers: Leftover[] = [];
      try {
        if (PROC && child.pid !== undefined) leftovers = filesBeingWritten(child.pid);
      } finally {
        signalGroup(child, 'SIGTERM');
        if (paused) signalGroup(child, 'SIGCONT');
      }
      const killAndClean = (): void => {
        signalGroup(child, 'SIGKILL');
        removeLeftovers(leftovers);
        stopping = false;
        finish();
      };
      if (exit !== null) killAndClean();
      else {
        child.once('exit', () => killAndClean());
        later(TERM_GRACE_MS, () => signalGroup(child, 'SIGKILL'));
      }
    };
    const onAbort = (): void => stop('aborted');
    options.signal?.addEventListener('abort', onAbort, { once: true });

    if (deadline !== undefined) later(Math.max(0, deadline - Date.now()), () => stop('deadline'));
    const stallMs = options.timeoutMs ?? DEFAULT_STALL_MS;
    if (stallMs > 0) {
      // Nothing is sampled for a call that ends within one interval: the common case costs one timer.
      const every = Math.min(SAMPLE_MAX_MS, Math.max(SAMPLE_MIN_MS, Math.floor(stallMs / 4)));
      const minBytes = Math.max(1, options.minBytes ?? 1);
      let lastProgress = Date.now();
      let previous: GroupUsage | null = null;
      // Bytes moved since the last progress: a trickle adds up to nothing within the timeout,
      // where a slow transfer reaches minBytes many times over.
      let bytes = 0;
      const check = (): void => {
        if (settled || stopping || exit !== null) return;
        const now = Date.now();
        const usage = PROC && child.pid !== undefined ? groupUsage(child.pid) : null;
        if (usage !== null && previous !== null) bytes += moved(previous, usage);
        if (outputSeen || bytes >= minBytes || (usage !== null && (previous === null || working(previous, usage)))) {
          lastProgress = now;
          bytes = 0;
        }
        outputSeen = false;
        previous = usage;
        if (now - lastProgress >= stallMs) stop('stalled');
        else later(Math.min(every, stallMs - (now - lastProgress)), check);
      };
      later(Math.min(every, stallMs), check);
    }
  });
}

/**
 * The git command `args` run, for messages: the first word that is neither an option nor the
 * value of a `-c` or `-C` before it (chant passes config as `-c key=value` first).
 * @internal
 */
export function subcommandOf(args: readonly string[]): string {
  let at = 0;
  while (at < args.length && (args[at] as string).startsWith('-')) at += args[at] === '-c' || args[at] === '-C' ? 2 : 1;
  return args[at] ?? '';
}

function stoppedMessage(args: readonly string[], stderr: string, reason: GitStopReason | 'aborted', options: GitRunOptions): string {
  const said = stderr.trim().length > 0 ? `${stderr}${stderr.endsWith('\n') ? '' : '\n'}` : '';
  const verb = `git ${subcommandOf(args)}`;
  if (reason === 'aborted') return `${said}${verb} was stopped by its caller`;
  if (reason === 'deadline') return `${said}${verb} was stopped: the deadline passed while it ran`;
  const seconds = (options.timeoutMs ?? DEFAULT_STALL_MS) / 1000;
  const minBytes = options.minBytes ?? 1;
  const io = minBytes > 1 ? `under ${minBytes.toLocaleString('en-US')} bytes moved` : 'no reading or writing';
  return `${said}${verb} was stopped: it made no progress for ${seconds} s (no output, ${io}, no work)`;
}

/** What a process group has done so far, as `/proc` counts it. */
interface GroupUsage {
  /** Bytes read and written by each member, by pid, through any file, pipe or socket. */
  io: Map<number, number>;
  /** CPU time of every member, in clock ticks. */
  cpu: number;
  /** The members, by pid. */
  members: string;
  /**
   * The send and receive queues of the members' TCP sockets, by inode: a queue that changes is
   * bytes the network moved after git handed them to the kernel (a pack draining over a slow
   * link while git waits for the remote's answer), which no read or write of git's shows.
   */
  sockets: Map<string, readonly [number, number]>;
  at: number;
}

/**
 * How many bytes the group moved between two samples: what its members read and wrote, and
 * how far each socket's queues changed. A member that ended takes its last bytes with it, but
 * its ending is progress of its own.
 */
function moved(before: GroupUsage, now: GroupUsage): number {
  let bytes = 0;
  for (const [pid, io] of now.io) bytes += Math.max(0, io - (before.io.get(pid) ?? 0));
  for (const [inode, [send, receive]] of now.sockets) {
    const [send0, receive0] = before.sockets.get(inode) ?? [0, 0];
    bytes += Math.abs(send - send0) + Math.abs(receive - receive0);
  }
  return bytes;
}

/**
 * Whether the group worked between two samples, bytes aside: started or lost a member, opened
 * or closed a socket, or computed for a tenth of the time (so that a process waking now and
 * then to poll a silent socket, or to read a trickle, is not taken for one at work, while git
 * compressing deltas, which prints nothing for a while, is).
 */
function working(before: GroupUsage, now: GroupUsage): boolean {
  if (now.members !== before.members || [...now.sockets.keys()].join(',') !== [...before.sockets.keys()].join(',')) return true;
  const ticks = ((now.at - before.at) / 1000) * 100;
  return now.cpu - before.cpu >= Math.max(1, ticks / 10);
}

/** The pids of a process group, read from `/proc`. */
function groupMembers(pgid: number): number[] {
  const members: number[] = [];
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return members;
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const fields = statFields(name);
    if (fields !== null && Number(fields[2]) === pgid) members.push(Number(name));
  }
  return members;
}

/**
 * Stops every member of a process group (SIGSTOP) and waits, at most 100 ms, until `/proc` shows
 * each stopped or gone, so what they hold open can be read while none of them moves on.
 * @returns whether the group was signalled (it must then be sent SIGCONT)
 */
function pauseGroup(pgid: number): boolean {
  try {
    process.kill(-pgid, 'SIGSTOP');
  } catch {
    return false;
  }
  const until = Date.now() + 100;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  while (Date.now() < until) {
    const running = groupMembers(pgid).some((pid) => {
      const state = statFields(String(pid))?.[0];
      return state !== undefined && state !== 'T' && state !== 't' && state !== 'Z' && state !== 'X';
    });
    if (!running) break;
    Atomics.wait(pause, 0, 0, 1);
  }
  return true;
}

/** The fields of `/proc/<pid>/stat` after the command's name: state first, so pgrp is [2]. */
function statFields(pid: string): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

function groupUsage(pgid: number): GroupUsage {
  const io = new Map<number, number>();
  let cpu = 0;
  const members = groupMembers(pgid);
  for (const pid of members) {
    const fields = statFields(String(pid));
    // utime and stime are the 14th and 15th fields of the whole line.
    if (fields !== null) cpu += Number(fields[11]) + Number(fields[12]);
    try {
      const text = readFileSync(`/proc/${pid}/io`, 'latin1');
      io.set(pid, Number(/^rchar: (\d+)$/m.exec(text)?.[1] ?? 0) + Number(/^wchar: (\d+)$/m.exec(text)?.[1] ?? 0));
    } catch {
      // Not ours to read, or gone.
    }
  }
  return { io, cpu, members: members.join(','), sockets: socketQueues(members), at: Date.now() };
}

/**
 * The TCP sockets the members hold, each with its send and receive queue in bytes as
 * `/proc/net/tcp` and `tcp6` show them, by inode in sorted order; none when they hold none.
 */
function socketQueues(members: readonly number[]): Map<string, readonly [number, number]> {
  const inodes = new Set<string>();
  for (const pid of members) {
    for (const { target } of descriptors(pid)) {
      const match = /^socket:\[(\d+)\]$/.exec(target);
      if (match !== null) inodes.add(match[1] as string);
    }
  }
  const queues: Array<[string, readonly [number, number]]> = [];
  if (inodes.size === 0) return new Map(queues);
  for (const table of ['tcp', 'tcp6']) {
    let text: string;
    try {
      // The members' network namespace: that of the first, as they share git's.
      text = readFileSync(`/proc/${members[0]}/net/${table}`, 'latin1');
    } catch {
      continue;
    }
    for (const line of text.split('\n')) {
      // sl local remote st tx_queue:rx_queue tr:when retransmits uid timeout inode ...
      const fields = line.trim().split(/\s+/);
      const inode = fields[9];
      if (inode === undefined || !inodes.has(inode)) continue;
      const [send, receive] = (fields[4] ?? '').split(':').map((hex) => Number.parseInt(hex, 16) || 0);
      queues.push([inode, [send ?? 0, receive ?? 0]]);
    }
  }
  return new Map(queues.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** What each open descriptor of a process points at, as `/proc/<pid>/fd` shows it; none when unreadable. */
function descriptors(pid: number): { fd: string; target: string }[] {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return [];
  }
  const found: { fd: string; target: string }[] = [];
  for (const fd of fds) {
    try {
      found.push({ fd, target: readlinkSync(`/proc/${pid}/fd/${fd}`) });
    } catch {
      // Closed meanwhile.
    }
  }
  return found;
}

/** A file some member of a stopped group had open for writing. */
interface Leftover {
  path: string;
  dev: number;
  ino: number;
}

// git's temporary objects, packs and their indexes, written under names it renames into place.
const GIT_TEMPORARY = /^tmp_(?:obj|pack|idx|rev|mtimes|bitmap)_/;

/**
 * The temporary objects and packs, and the lock files inside a git directory, that members of
 * the group hold open for writing: what a stopped git would leave half written.
 */
function filesBeingWritten(pgid: number): Leftover[] {
  const found: Leftover[] = [];
  for (const pid of groupMembers(pgid)) {
    for (const { fd, target: path } of descriptors(pid)) {
      try {
        if (!path.startsWith('/') || path.endsWith(' (deleted)')) continue;
        const name = basename(path);
        if (!GIT_TEMPORARY.test(name) && !(name.endsWith('.lock') && insideGitDir(path))) continue;
        const flags = Number.parseInt(/^flags:\s*([0-7]+)$/m.exec(readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'latin1'))?.[1] ?? '0', 8);
        // O_WRONLY or O_RDWR: being written, not read.
        if ((flags & 3) === 0) continue;
        const stats = statSync(`/proc/${pid}/fd/${fd}`);
        if (stats.isFile()) found.push({ path, dev: stats.dev, ino: stats.ino });
      } catch {
        // The descriptor closed meanwhile.
      }
    }
  }
  return found;
}

/** Whether a lock file lies in a git directory (a folder holding HEAD and objects, or a worktree's). */
function insideGitDir(path: string): boolean {
  let dir = dirname(path);
  for (let depth = 0; depth < 8; depth += 1) {
    try {
      const names = readdirSync(dir);
      if (names.includes('HEAD') && (names.includes('objects') || names.includes('commondir'))) return true;
    } catch {
      return false;
    }
    const parent = dirname(dir);
    if (parent === dir) return false;
    dir = parent;
  }
  return false;
}

/** Removes what a stopped group left half written, each only while it is still the same file. */
function removeLeftovers(leftovers: readonly Leftover[]): void {
  for (const leftover of leftovers) {
    try {
      const stats = lstatSync(leftover.path);
      if (stats.dev === leftover.dev && stats.ino === leftover.ino) rmSync(leftover.path, { force: true });
    } catch {
      // Renamed into place before the stop, or removed by git itself.
    }
  }
}

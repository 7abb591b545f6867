import { StringDecoder } from 'node:string_decoder';
import { simpleGit } from 'simple-git';
import type { SimpleGitOptions } from 'simple-git';

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
  /** Milliseconds without output before git is stopped; 120,000 when absent. */
  timeoutMs?: number;
  /**
   * Receives git's standard error while git runs, one line at a time with its terminator: `\n`,
   * or `\r` for a progress update that rewrites the line, so that writing each to a terminal as
   * it comes shows what git would. The runner's own trace lines are left out. Standard error is
   * still collected for errors as usual.
   */
  onStderr?: (line: string) => void;
  /**
   * Receives standard output as it arrives, chunk by chunk, while git still runs: a caller that
   * parses a long output can do so alongside git instead of after it. The resolved `stdout`
   * holds it all as well.
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
 * git exited with a code the call did not expect, or could not be started.
 * @public
 */
export class GitCommandError extends Error {
  /** The arguments git was given. */
  readonly args: readonly string[];
  /** Its exit code, or null when it never ran to an exit (not found, timed out). */
  readonly exitCode: number | null;
  /** Its standard error. */
  readonly stderr: string;

  /**
   * Records a failed git call.
   * @param args - the arguments git was given
   * @param exitCode - its exit code, or null
   * @param stderr - its standard error
   */
  constructor(args: readonly string[], exitCode: number | null, stderr: string) {
    super(`git ${args[0] ?? ''} failed${exitCode === null ? '' : ` (exit ${exitCode})`}: ${lastLine(stderr)}`);
    this.name = 'GitCommandError';
    this.args = args;
    this.exitCode = exitCode;
    this.stderr = stderr;
  }

  /** git's own last line of standard error, the part that says what went wrong. */
  get lastLine(): string {
    return lastLine(this.stderr);
  }
}

function lastLine(text: string): string {
  const lines = text.split('\n').map((line) => line.trim()).filter((line) => line.length > 0);
  return lines.at(-1) ?? 'no message';
}

// git's own trace lines, which the runner asks for (see FIXED_ENV) and then removes.
const TRACE_LINE = /^\d\d:\d\d:\d\d\.\d+ \S+:\d+ +trace: .*\n?/gm;

function withoutTrace(stderr: string): string {
  return stderr.replace(TRACE_LINE, '');
}

// A local remote's git inherits GIT_TRACE too, and its lines come back prefixed with `remote: `.
const ONE_TRACE_LINE = /^(?:remote: )?\d\d:\d\d:\d\d\.\d+ \S+:\d+ +trace: /;

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
  if (ONE_TRACE_LINE.test(line)) return;
  try {
    sink(line);
  } catch {
    // Progress is for people watching; a sink that fails must never fail the git call.
  }
}

/** Streams a child's standard error to `sink` line by line, without disturbing simple-git's own capture. */
function streamLines(stderr: NodeJS.ReadableStream, sink: (line: string) => void): void {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  stderr.on('data', (chunk: Buffer | string) => {
    pending = emitLines(pending + (typeof chunk === 'string' ? chunk : decoder.write(chunk)), sink);
  });
  stderr.on('end', () => {
    const rest = pending + decoder.end();
    if (rest.length > 0) deliver(rest, sink);
  });
}

// Ambient variables git legitimately needs; everything else, GIT_* above all, stays out.
const PASSED_THROUGH = [
  'PATH', 'HOME', 'XDG_CONFIG_HOME', 'USER', 'LOGNAME', 'TMPDIR', 'TMP', 'TEMP', 'SYSTEMROOT',
  'SSH_AUTH_SOCK', 'HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'no_proxy',
  'GIT_AUTHOR_NAME', 'GIT_AUTHOR_EMAIL', 'GIT_AUTHOR_DATE',
  'GIT_COMMITTER_NAME', 'GIT_COMMITTER_EMAIL', 'GIT_COMMITTER_DATE',
  'GIT_CONFIG_NOSYSTEM', 'GIT_SSH_COMMAND', 'GIT_SSH', 'GIT_TRACE2_EVENT',
] as const;

const FIXED_ENV: Readonly<Record<string, string>> = {
  LC_ALL: 'C',
  LANGUAGE: 'C',
  GIT_TERMINAL_PROMPT: '0',
  GIT_ASKPASS: '',
  SSH_ASKPASS: '',
  GCM_INTERACTIVE: 'never',
  GIT_OPTIONAL_LOCKS: '0',
  // simple-git waits 50 ms after any process that printed nothing at all (update-ref, read-tree,
  // add): git's one trace line on stderr spares every silent call that wait. It is removed from
  // stderr before anyone reads it.
  GIT_TRACE: '1',
};

function baseEnvironment(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of PASSED_THROUGH) {
    const value = process.env[key];
    if (value !== undefined) env[key] = value;
  }
  return { ...env, ...FIXED_ENV };
}

/**
 * The default {@link GitRunner}: simple-git, one short-lived instance per call so that its
 * environment and standard input never leak into another call, with a strict exit-code check
 * (simple-git alone treats a failure with empty stderr as success), a curated environment
 * (`LC_ALL=C`, no prompts, no ambient `GIT_*` but identity) and a timeout.
 * @public
 */
export class SimpleGitRunner implements GitRunner {
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
   * Runs `git <args>` through a fresh simple-git instance.
   * @param args - the arguments after `git`
   * @param options - where and how it runs
   * @returns standard output and the exit code
   * @throws {@link GitCommandError} when git exits with a code the call did not expect, cannot be
   *   started or times out
   */
  async run(args: readonly string[], options: GitRunOptions = {}): Promise<GitOutput> {
    const env = { ...baseEnvironment(), ...options.env };
    let exitCode = 0;
    let stderr = '';
    const ok = new Set([0, ...(options.okExitCodes ?? [])]);
    const config: Partial<SimpleGitOptions> = {
      baseDir: options.cwd ?? this.#cwd,
      binary: this.#binary,
      maxConcurrentProcesses: 8,
      trimmed: false,
      timeout: { block: options.timeoutMs ?? 120_000 },
      // Settle on 'close' alone: the 'exit' fallback timer otherwise holds a CLI's exit back 50 ms.
      completion: { onClose: true, onExit: false },
      allowEnvironment: Object.keys(env).filter((key) => /^git_/i.test(key) || key === 'SSH_ASKPASS'),
      // The environment is the runner's own (ambient GIT_* never reaches git), so what it sets is chant's choice.
      unsafe: { allowUnsafeSshCommand: true, allowUnsafeAskPass: true, allowUnsafeConfigEnvCount: true },
      errors: (error, result) => {
        exitCode = result.exitCode;
        stderr = withoutTrace(Buffer.concat(result.stdErr).toString('utf8'));
        if (error instanceof Error && !ok.has(result.exitCode)) return error;
        return ok.has(result.exitCode) ? undefined : new Error(stderr);
      },
    };
    if (options.input !== undefined) {
      const input = typeof options.input === 'string' || Buffer.isBuffer(options.input) ? options.input : Buffer.from(options.input);
      config.input = () => input;
    }
    if (options.signal !== undefined) config.abort = options.signal;
    try {
      const instance = simpleGit(config).env(env);
      const sink = options.onStderr;
      const reader = options.onStdout;
      if (sink !== undefined || reader !== undefined) {
        instance.outputHandler((_command, stdout, stderr) => {
          if (sink !== undefined) streamLines(stderr, sink);
          if (reader !== undefined) stdout.on('data', reader);
        });
      }
      const stdout = await instance.raw([...args]);
      return { stdout, exitCode };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new GitCommandError(args, exitCode === 0 ? null : exitCode, stderr.length > 0 ? stderr : message);
    }
  }
}

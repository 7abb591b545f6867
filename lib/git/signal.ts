// A caller's AbortSignal, carried into every git call a verb makes: the runner stops git when
// it is aborted (GitRunOptions.signal), and the verb answers `wip-cancelled`. And a deadline,
// carried the same way: what a stopped call becomes is the caller's to say.
import { GitCommandError } from './runner.js';
import type { GitRunner } from './runner.js';

/**
 * `git` with `signal` added to every call (alongside any signal the call has of its own).
 * @param git - the runner
 * @param signal - the caller's signal; `git` itself when absent
 */
export function withSignal(git: GitRunner, signal: AbortSignal | undefined): GitRunner {
  if (signal === undefined) return git;
  return {
    run: (args, options = {}) => git.run(args, { ...options, signal: options.signal === undefined ? signal : AbortSignal.any([signal, options.signal]) }),
  };
}

/**
 * `git` with a deadline (as `Date.now()` counts) added to every call: git is stopped at it with
 * everything it started, and the call fails with what `stopped` makes of its error.
 * @param git - the runner
 * @param deadline - when every call must have ended, asked at each call (it may move once the
 *   caller knows more, as a save's does once the declaration is read)
 * @param stopped - the error a call stopped at the deadline throws, given git's
 */
export function withDeadline(git: GitRunner, deadline: () => number, stopped: (args: readonly string[], error: GitCommandError) => Error): GitRunner {
  return {
    run: async (args, options = {}) => {
      try {
        return await git.run(args, { ...options, deadline: Math.min(options.deadline ?? Number.POSITIVE_INFINITY, deadline()) });
      } catch (error) {
        if (error instanceof GitCommandError && error.stopped === 'deadline') throw stopped(args, error);
        throw error;
      }
    },
  };
}

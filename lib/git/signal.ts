// A caller's AbortSignal, carried into every git call a verb makes: the runner stops git when
// it is aborted (GitRunOptions.signal), and the verb answers `wip-cancelled`.
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

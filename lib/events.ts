// Progress and events: what a host shows while a call runs and learns after it, typed, through
// one option (`onProgress`) and one method (`on`). A listener that throws never fails the call.

/**
 * Where a long call stands: `{phase, done, total}`.
 * @public
 */
export interface Progress {
  /**
   * The step under way: for a save `staging` and `recording` (then a push's phases when the
   * policy pushes on save); for a restore `staging`, `checkpoint`, `writing`, `index`; for push
   * and fetch git's own phases as it names them, in lower case (`counting objects`,
   * `writing objects`, `receiving objects`, `resolving deltas`, ...), then `refs`.
   */
  phase: string;
  /** How much of the phase is done, in the phase's units (objects, paths, steps). */
  done: number;
  /** How much the phase has in all, or null while git does not know yet. */
  total: number | null;
}

/**
 * Receives {@link Progress} while a call runs.
 * @public
 */
export type ProgressListener = (progress: Progress) => void;

/** Calls a listener, never letting it fail the call. */
export function report(listener: ProgressListener | undefined, phase: string, done: number, total: number | null): void {
  if (listener === undefined) return;
  try {
    settled(listener({ phase, done, total }));
  } catch {
    // Progress is for people watching; a listener that fails must never fail the work.
  }
}

/**
 * What a caller's listener returned, a rejection it may hold caught: a listener typed to return
 * nothing may be an async function, and its rejected promise, left unhandled, ended the whole
 * process (Node's default), a restore with it halfway through its files.
 * @param returned - the listener's return value
 */
export function settled(returned: unknown): void {
  if (typeof returned === 'object' && returned !== null && typeof (returned as { then?: unknown }).then === 'function') {
    Promise.resolve(returned as PromiseLike<unknown>).then(undefined, () => undefined);
  }
}

// git's progress lines: "Writing objects:  50% (5/10)", "remote: Counting objects: 12", with a
// "done." or ", 1.2 MiB | 3 MiB/s" tail.
const PROGRESS_LINE = /^(?:remote: )?([A-Za-z][A-Za-z ]*?):\s+(?:\d+% \((\d+)\/(\d+)\)|(\d+))/;

/**
 * The progress a line of git's standard error states, or null when it states none.
 * @param line - one line as the runner's `onStderr` hands it over
 */
export function parseGitProgress(line: string): Progress | null {
  const match = PROGRESS_LINE.exec(line);
  if (match === null) return null;
  const phase = (match[1] as string).toLowerCase();
  if (match[2] !== undefined) return { phase, done: Number(match[2]), total: Number(match[3]) };
  return { phase, done: Number(match[4]), total: null };
}

/**
 * A small typed event emitter: `on(name, listener)` returns the function that removes it.
 * Listeners run in the order added; one that throws is skipped, never failing the call that
 * emitted.
 */
export class Events<E extends object> {
  readonly #listeners = new Map<keyof E, Set<(event: never) => void>>();

  on<K extends keyof E>(name: K, listener: (event: E[K]) => void): () => void {
    let set = this.#listeners.get(name);
    if (set === undefined) this.#listeners.set(name, (set = new Set()));
    set.add(listener as (event: never) => void);
    return () => {
      set.delete(listener as (event: never) => void);
    };
  }

  emit<K extends keyof E>(name: K, event: E[K]): void {
    for (const listener of [...(this.#listeners.get(name) ?? [])]) {
      try {
        settled((listener as (event: E[K]) => unknown)(event));
      } catch {
        // An event is news; a listener that fails must never fail the work that made it.
      }
    }
  }
}

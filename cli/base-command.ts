import { Command, Option } from 'clipanion';
import type { BaseContext } from 'clipanion';
import { asWipError, GitCommandError, isVerb, VERB_DOCUMENTS, WIP_READ_ID, WipError, writeDocument, writeFailureDocument } from '../lib/index.js';
import type { Verb, WriteResults } from '../lib/index.js';
import { documentChunks } from './print.js';

/**
 * What every chant command runs with: clipanion's streams, plus the folder it runs in (empty
 * when the process could not learn it: the folder was deleted under it) and the environment it
 * reads (`CHANT_AGENT`).
 */
export interface ChantContext extends BaseContext {
  cwd: string;
  /** The command line's words as given, when `main` runs it: clipanion keeps no `--` of them. */
  argv?: readonly string[];
  /** The indexes of the words whose bytes were not UTF-8 (each read as U+FFFD), where the bin could tell. */
  argvNotUtf8?: readonly number[];
}

/** `--timeout`, on every verb that reaches a remote: a push, a fetch, a save that pushes, a prune that pushes. */
export function timeoutOption() {
  return Option.String('--timeout', {
    description: 'Seconds a network step may go without progress (git reporting how far it got, or at least 1 KiB moving) before git and everything it started are stopped; 60 when absent. A remote that trickles a few bytes at a time is stopped; a slow but healthy link never is.',
  });
}

/** `--timeout`'s seconds as milliseconds, or undefined when it was not given. */
export function timeoutMs(seconds: string | undefined): number | undefined {
  if (seconds === undefined) return undefined;
  if (!/^[1-9][0-9]{0,5}$/.test(seconds)) throw new WipError('write-usage-invalid', `--timeout takes a whole number of seconds from 1; it was given ${JSON.stringify(seconds)}`);
  return Number(seconds) * 1000;
}

/**
 * `--branch`'s value as the SDK takes it, null when absent; `refs/heads/` is left off where the
 * verb takes that form (the read). An empty name is refused: it would select every chain.
 */
export function branchOption(value: string | undefined, refsHeads = false): string | null {
  if (value === undefined) return null;
  const branch = refsHeads ? value.replace(/^refs\/heads\//, '') : value;
  if (branch.length === 0) throw new WipError('write-usage-invalid', `--branch must name a branch (its full name${refsHeads ? ', or refs/heads/<name>' : ''}); it was given ${JSON.stringify(value)}`);
  return branch;
}

/**
 * Prints a document, each record on one line (`documentText`): stdout carries it and nothing
 * else. Every chunk is printed before the first is written, and corked, so a pipe takes them in
 * one write.
 */
export function printDocument(context: ChantContext, document: unknown): void {
  const chunks = documentChunks(document);
  context.stdout.cork();
  for (const chunk of chunks) context.stdout.write(chunk);
  context.stdout.uncork();
}

/** The signals a terminal, a supervisor or a closed session ends a command with. */
const INTERRUPTS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * Runs `run` with a signal that the first SIGINT, SIGTERM or SIGHUP aborts, for a verb a signal
 * would otherwise end halfway (a restore between moving its files and resetting the index): the
 * SDK call stops where its contract says it can (a restore puts the working tree back from its
 * checkpoint) and its document is printed. A second signal ends the process as it would have been.
 */
export async function interruptible<T>(context: ChantContext, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const handlers = new Map<NodeJS.Signals, () => void>();
  const release = (): void => {
    for (const [name, handler] of handlers) process.removeListener(name, handler);
  };
  for (const name of INTERRUPTS) {
    const handler = (): void => {
      if (!controller.signal.aborted) {
        context.stderr.write(`chant: ${name}: stopping where nothing is left half done (${name} again stops at once)\n`);
        controller.abort(new Error(`interrupted by ${name}`));
        return;
      }
      release();
      process.kill(process.pid, name);
    };
    handlers.set(name, handler);
    process.on(name, handler);
  }
  try {
    return await run(controller.signal);
  } finally {
    release();
  }
}

/**
 * The refusal a caught value becomes in a document. A failure of git or of the system (a full
 * disk, a file that cannot be written) is `git-failed` as the SDK wraps it; anything else is a
 * fault of chant-wip itself, `internal-error`, never a stack trace.
 */
export function refusalOf(error: unknown): WipError {
  if (error instanceof WipError || error instanceof GitCommandError) return asWipError(error);
  if (error instanceof Error && typeof (error as NodeJS.ErrnoException).syscall === 'string') return asWipError(error);
  const what = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return new WipError('internal-error', `chant-wip failed unexpectedly (${what.split('\n')[0]}); nothing more is known, please report it`, { cause: error });
}

/**
 * A verb that prints a document of its own (`VERB_DOCUMENTS`: the writes and the storage verbs):
 * parse flags, call one SDK method, print its document whether or not `--json` is given. A
 * refusal prints the verb's failure document and exits 1. The verb is the last word of its path.
 */
export abstract class WriteCommand<A extends Verb> extends Command<ChantContext> {
  /** The schema of what the verb prints, from the verb table by the last word of its path. */
  static get document(): string | null {
    const verb = this.paths?.[0]?.at(-1);
    return isVerb(verb) ? VERB_DOCUMENTS[verb] : null;
  }

  json = Option.Boolean('--json', false, { description: 'Print the JSON document (printed either way).' });

  abstract readonly action: A;

  /** Calls the one SDK method this verb is. */
  abstract perform(): Promise<WriteResults[A]>;

  async execute(): Promise<number> {
    let document;
    try {
      document = writeDocument(this.action, await this.perform());
    } catch (error) {
      printDocument(this.context, writeFailureDocument(this.action, refusalOf(error)));
      return 1;
    }
    // Printed outside the try: the write happened, whatever becomes of stdout (a reader that
    // went away), and the exit code says so.
    printDocument(this.context, document);
    return 0;
  }
}

/** The schema of what the read prints. */
export const READ_DOCUMENT = WIP_READ_ID;

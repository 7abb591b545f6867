import { Command, Option } from 'clipanion';
import type { BaseContext } from 'clipanion';
import { asWipError, writeDocument, writeFailureDocument } from '../lib/index.js';
import type { WriteAction, WriteResults } from '../lib/index.js';

/**
 * What every chant command runs with: clipanion's streams, plus the folder it runs in and the
 * environment it reads (`CHANT_AGENT`).
 */
export interface ChantContext extends BaseContext {
  cwd: string;
}

/** Prints a document: stdout carries it and nothing else. */
export function printDocument(context: ChantContext, document: unknown): void {
  context.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
}

/**
 * A write verb: parse flags, call one SDK method, print its document whether or not `--json`
 * is given. A refusal prints the failure document and exits 1.
 */
export abstract class WriteCommand<A extends WriteAction> extends Command<ChantContext> {
  json = Option.Boolean('--json', false, { description: 'Print the JSON document (the writes print it either way).' });

  abstract readonly action: A;

  /** Calls the one SDK method this verb is. */
  abstract perform(): Promise<WriteResults[A]>;

  async execute(): Promise<number> {
    try {
      printDocument(this.context, writeDocument(this.action, await this.perform()));
      return 0;
    } catch (error) {
      printDocument(this.context, writeFailureDocument(this.action, asWipError(error)));
      return 1;
    }
  }
}

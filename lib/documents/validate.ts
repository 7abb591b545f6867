import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { publishedSchemas } from './schemas.js';

/**
 * Why a document does not follow its schema.
 * @public
 */
export interface DocumentProblem {
  /** The JSON pointer of the offending value. */
  path: string;
  /** What is wrong with it. */
  message: string;
}

let ajv: Ajv2020 | undefined;

function instance(): Ajv2020 {
  if (ajv === undefined) {
    ajv = new Ajv2020({ allErrors: true, strict: false });
    const addFormats = addFormatsModule as unknown as (target: Ajv2020) => void;
    addFormats(ajv);
    for (const { schema } of publishedSchemas()) ajv.addSchema(schema);
  }
  return ajv;
}

/**
 * Checks a document against the chant-wip schema its `$schema` names. The schemas are added
 * once, on first use.
 * @param document - a document the CLI printed or the SDK built
 * @returns the problems found; empty when it validates
 * @public
 */
export function validateDocument(document: unknown): DocumentProblem[] {
  const id = typeof document === 'object' && document !== null ? (document as { $schema?: unknown }).$schema : undefined;
  if (typeof id !== 'string') return [{ path: '', message: 'has no $schema naming its schema' }];
  const validate: ValidateFunction | undefined = instance().getSchema(id);
  if (validate === undefined) return [{ path: '/$schema', message: `names no chant-wip schema: ${id}` }];
  if (validate(document)) return [];
  return (validate.errors ?? []).map((error) => ({ path: error.instancePath, message: error.message ?? 'is invalid' }));
}

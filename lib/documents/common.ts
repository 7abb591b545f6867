import { Type } from 'typebox';
import type { TLiteral, TSchema, TUnion } from 'typebox';

import { WIP_ERROR_CODES } from '../error-codes.js';
import { CONTRACT } from './ids.js';

export { CONTRACT, WIP_CHANGES_ID, WIP_READ_ID, WIP_STORAGE_ID, WIP_WRITE_ID } from './ids.js';

/** An object id: SHA-1 or SHA-256, lower-case hex. */
export const ObjectId = Type.String({ pattern: '^[0-9a-f]{40,64}$' });

/** The header every document starts with. */
export function header(id: string) {
  return {
    $schema: Type.Literal(id),
    contract: Type.Literal(CONTRACT),
    chant: Type.String({ description: "The version of the tool that wrote the document." }),
  };
}

/** A success document forbids `error`, so a reader tells success from refusal by its presence. */
export const NoError = Type.Optional(Type.Never());

/** A union of the string literals of a list, in its order: one list gives the type and the schema. */
export function LiteralUnion<const T extends readonly string[]>(values: T, options: { description?: string } = {}): TUnion<{ -readonly [K in keyof T]: TLiteral<T[K]> }> {
  return Type.Union(values.map((value) => Type.Literal(value)), options) as never;
}

/** `T | null`, the way JSON Schema readers expect it. */
export function Nullable<T extends TSchema>(schema: T, description?: string) {
  return Type.Union([Type.Null(), schema], description === undefined ? {} : { description });
}

/** The codes a write can refuse with: every code. */
export const WriteErrorCode = LiteralUnion(WIP_ERROR_CODES);

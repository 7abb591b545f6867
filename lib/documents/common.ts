import { Type } from 'typebox';
import type { TLiteral, TNever, TObject, TOptional, TSchema, TString, TUnion } from 'typebox';

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

/**
 * One verb's entry in a table of verbs: the result its SDK method returns, and what its document says on success.
 * @public
 */
export interface VerbEntry {
  /** The TypeBox type of what the verb's SDK method returns. */
  readonly result: TObject;
  /** What the success document means, and its exit code. */
  readonly description: string;
}

/**
 * A verb's success document: the header, no `error`, the verb as `action`, then the result's fields.
 * @public
 */
export type SuccessDocument<A extends string, R extends TObject> = TObject<{ $schema: TLiteral<string>; contract: TLiteral<1>; chant: TString; error: TOptional<TNever>; action: TLiteral<A> } & R['properties']>;

/** A verb's success document: the header of the document `id`, no `error`, the verb as `action`, then the result's fields. */
export function verbSuccess<A extends string, R extends TObject>(id: string, action: A, result: R, description: string): SuccessDocument<A, R> {
  return Type.Object({ ...header(id), error: NoError, action: Type.Literal(action), ...result.properties }, { description }) as unknown as SuccessDocument<A, R>;
}

/**
 * Each verb's success document, by verb, made from a table of verbs.
 * @public
 */
export type SuccessDocuments<T extends Readonly<Record<string, VerbEntry>>> = { [A in keyof T & string]: SuccessDocument<A, T[A]['result']> };

/** Every verb's success document of a table, by verb, in the order of `verbs`. */
export function successDocuments<const V extends readonly string[], T extends { readonly [A in V[number]]: VerbEntry }>(id: string, verbs: V, table: T): SuccessDocuments<T> {
  return Object.fromEntries(verbs.map((verb) => [verb, verbSuccess(id, verb, table[verb as V[number]].result, table[verb as V[number]].description)])) as SuccessDocuments<T>;
}

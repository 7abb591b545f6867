import { WipError } from './errors.js';

/** The most characters a label or principal may hold. */
export const MAX_TEXT_LENGTH = 200;

// C0, DEL, C1, the line and paragraph separators, and the bidirectional marks, embeddings,
// overrides and isolates that can make a listing read other than it is; and unpaired surrogates,
// which no UTF-8 commit message can hold (git would record U+FFFD, not the value given).
const FORBIDDEN = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069\p{Cs}]/u;

/**
 * Checks a `--label` or `--by` value: one line of at most 200 characters, not empty, without
 * control or bidirectional-override characters.
 * @param option - the option's name, for the message (`--label`)
 * @param value - the value, or undefined when not given
 * @returns the value as given, or null when not given
 * @throws {@link WipError} `write-usage-invalid` when the value breaks a rule
 * @public
 */
export function checkText(option: string, value: string | null | undefined): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw new WipError('write-usage-invalid', `${option} must be a string`);
  if (value.length === 0) throw new WipError('write-usage-invalid', `${option} must not be empty`);
  const length = [...value].length;
  if (length > MAX_TEXT_LENGTH) {
    throw new WipError('write-usage-invalid', `${option} must be at most ${MAX_TEXT_LENGTH} characters; it has ${length}`);
  }
  const bad = FORBIDDEN.exec(value);
  if (bad) {
    const code = (bad[0].codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0');
    throw new WipError('write-usage-invalid', `${option} must be one line without control or bidirectional-override characters; it holds U+${code} at character ${[...value.slice(0, bad.index)].length + 1}`);
  }
  return value;
}

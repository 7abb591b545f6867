// The `retain` block of a box: the retention rules a prune applies when given none, validated by
// hand as `replicate` is (nothing on the save path compiles a schema), with located messages.
import { EXTENSION_KEY_PATTERN, KEEP_WITHIN_PATTERN } from '../documents/replicate-rules.js';
import type { RetentionRules } from '../documents/storage.js';
import { boxBlock, invalid, isObject, kind, show } from './declaration.js';
import type { Declaration, FieldPath, Locator } from './declaration.js';

/**
 * The one box of a declaration that declares `retain`, validated.
 * @public
 */
export interface DeclaredRetain {
  /** The member's `name`, or `members[i]` when it has none. */
  box: string;
  /** The rules, absent ones null (`keepLabelled` false). */
  rules: RetentionRules;
  /** Whether every save prunes its branch's chain. */
  onSave: boolean;
}

const KEEP_WITHIN = new RegExp(KEEP_WITHIN_PATTERN);
const EXTENSION_KEY = new RegExp(EXTENSION_KEY_PATTERN);
const KNOWN_KEYS = new Set(['keepLast', 'keepWithin', 'keepLabelled', 'onSave']);

/**
 * The one box of a declaration that declares `retain`, validated; the shape of the path to it
 * (`members` an array of objects, each `box` an object) is checked as for `replicate`.
 * @param declaration - a parsed declaration
 * @returns the box and its rules, or null when no box declares retain
 * @throws {@link WipError} `declaration-invalid` when a block is wrong or two boxes declare retain
 * @public
 */
export function declaredRetain(declaration: Declaration): DeclaredRetain | null {
  const block = boxBlock(declaration, 'retain');
  return block === null ? null : { box: block.box, ...checkRetain(block.value, block.field, declaration.where) };
}

/**
 * Validates a `retain` block the way the published declaration schema does.
 * @param value - the block as written
 * @param field - where it sits, for messages
 * @param where - says where a field is in the file, or null when there is no file
 * @returns the rules and onSave
 * @throws {@link WipError} `declaration-invalid`, naming the first offending field
 * @internal
 */
export function checkRetain(value: unknown, field: FieldPath, where: Locator): Omit<DeclaredRetain, 'box'> {
  if (!isObject(value)) throw invalid(where, field, `must be an object; it is ${kind(value)}`);
  for (const key of Object.keys(value)) {
    if (!KNOWN_KEYS.has(key) && !EXTENSION_KEY.test(key)) {
      throw invalid(where, [...field, key], 'is not a retain key: the keys are keepLast, keepWithin, keepLabelled and onSave, and x- keys are left to other tools', 'key');
    }
  }
  let keepLast: number | null = null;
  if (Object.hasOwn(value, 'keepLast')) {
    if (typeof value.keepLast !== 'number' || !Number.isInteger(value.keepLast) || value.keepLast < 1) {
      throw invalid(where, [...field, 'keepLast'], `must be a whole number of at least 1; it is ${show(value.keepLast)}`);
    }
    keepLast = value.keepLast;
  }
  let keepWithin: string | null = null;
  if (Object.hasOwn(value, 'keepWithin')) {
    if (typeof value.keepWithin !== 'string' || !KEEP_WITHIN.test(value.keepWithin)) {
      throw invalid(where, [...field, 'keepWithin'], `must be an age: a number and one of s, m, h, d, w (such as "7d"); it is ${show(value.keepWithin)}`);
    }
    keepWithin = value.keepWithin;
  }
  const flag = (name: 'keepLabelled' | 'onSave'): boolean => {
    if (!Object.hasOwn(value, name)) return false;
    if (typeof value[name] !== 'boolean') throw invalid(where, [...field, name], `must be true or false; it is ${show(value[name])}`);
    return value[name] as boolean;
  };
  const keepLabelled = flag('keepLabelled');
  const onSave = flag('onSave');
  if (keepLast === null && keepWithin === null && !keepLabelled) {
    throw invalid(where, field, 'needs a rule: keepLast, keepWithin or keepLabelled: true (without one a prune would keep only the newest snapshot)');
  }
  return { rules: { keepLast, keepWithin, keepLabelled }, onSave };
}

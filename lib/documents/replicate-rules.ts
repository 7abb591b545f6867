// Kept apart from the TypeBox types so that reading a declaration on the save path never loads
// TypeBox: the hand validation in lib/workspace/declaration.ts and the published schema share these.

/**
 * The ref classes a replicate policy can name, in their canonical order.
 * @public
 */
export const REF_CLASSES = ['work', 'kept', 'wip', 'ledger'] as const;

/**
 * The triggers a replicate policy can name, in their canonical order.
 * @public
 */
export const TRIGGERS = ['save', 'release'] as const;

/**
 * What a `remote` must match: a git remote's name, never a URL.
 * @public
 */
export const REMOTE_NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$';

/**
 * What an `every` must match: a whole number of seconds, minutes or hours (`10m`).
 * @public
 */
export const EVERY_PATTERN = '^[1-9][0-9]*[smh]$';

/**
 * What a retention age (`keepWithin`, `--keep-within`) must match: a number and s, m, h, d or w (`7d`).
 * @public
 */
export const KEEP_WITHIN_PATTERN = '^[1-9][0-9]{0,9}[smhdw]$';

/**
 * What a secret finding's id is: 20 lower-case hex digits.
 * @public
 */
export const FINDING_ID_PATTERN = '^[0-9a-f]{20}$';

/**
 * The keys of `replicate` and `retain` that are tolerated beyond the known ones.
 * @public
 */
export const EXTENSION_KEY_PATTERN = '^x-';

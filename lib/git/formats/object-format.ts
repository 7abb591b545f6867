// What an object id looks like, and how a repository's object format hashes: one place for the
// sha1 and sha256 repositories git 2.29 and newer can hold.

/** A full object id, sha1 (40 hex digits) or sha256 (64). */
export const OBJECT_ID = /^[0-9a-f]{40,64}$/;

/** An id of exactly a sha1's or a sha256's length, as git writes one in a ref file. */
export const EXACT_OBJECT_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/**
 * The hash of a repository's object format (`sha1` or `sha256`): the name node:crypto knows it
 * by and the bytes of a raw id.
 */
export function objectHash(objectFormat: string): { algorithm: 'sha1' | 'sha256'; bytes: 20 | 32 } {
  return objectFormat === 'sha256' ? { algorithm: 'sha256', bytes: 32 } : { algorithm: 'sha1', bytes: 20 };
}

// The classes of refs a policy replicates, where each lives, and the replica refs that record
// what a remote held of them. Names only: nothing here runs git.
import type { RefClass } from '../documents/replication.js';
import { REF_CLASSES } from '../documents/replicate-rules.js';
import { ASIDE_REF_PREFIX, WIP_REF_PREFIX } from '../snapshot/format.js';

/**
 * Where each class of replicated ref lives: under prefixes, or (the ledger) one exact ref. A wip
 * chain moved aside (`refs/chant/wip-aside/<tip>`: its name was in the way of another branch's)
 * is a wip chain all the same, replicated with the others so that a lost box loses none of it.
 * @internal
 */
export const REF_CLASS_NAMES: Readonly<Record<RefClass, { prefixes: readonly string[] } | { exact: string }>> = {
  work: { prefixes: ['refs/heads/chant/work/'] },
  kept: { prefixes: ['refs/chant/kept/'] },
  wip: { prefixes: [WIP_REF_PREFIX, ASIDE_REF_PREFIX] },
  ledger: { exact: 'refs/heads/chant/lifecycle' },
};

/**
 * The class a full refname belongs to, or null when it is none of them.
 * @param ref - a full refname
 * @returns its class
 * @internal
 */
export function classOf(ref: string): RefClass | null {
  for (const name of REF_CLASSES) {
    const place = REF_CLASS_NAMES[name];
    if ('exact' in place ? ref === place.exact : place.prefixes.some((prefix) => ref.startsWith(prefix) && ref.length > prefix.length)) return name;
  }
  return null;
}

/**
 * Whether git could not hold both refs at once: one names a folder the other lives in
 * (`refs/chant/wip/a` and `refs/chant/wip/a/b`).
 * @param a - a full refname
 * @param b - another
 * @returns true when either is a folder of the other
 * @internal
 */
export function namesCollide(a: string, b: string): boolean {
  return a.startsWith(`${b}/`) || b.startsWith(`${a}/`);
}

/**
 * The ref recording what `remote` held of `ref` when chant last saw it:
 * `refs/chant/replica/<remote>/<ref without the leading refs/>`.
 * @param remote - the git remote's name
 * @param ref - a full refname under `refs/`
 * @returns the replica ref
 * @internal
 */
export function replicaRef(remote: string, ref: string): string {
  return `${replicaPrefix(remote)}${ref.slice('refs/'.length)}`;
}

/**
 * The namespace holding every replica ref of `remote`, ending in `/`.
 * @param remote - the git remote's name
 * @returns the prefix
 * @internal
 */
export function replicaPrefix(remote: string): string {
  return `refs/chant/replica/${remote}/`;
}

/**
 * The for-each-ref patterns of some classes.
 * @param classes - the classes
 * @returns one pattern per class
 * @internal
 */
export function classPatterns(classes: readonly RefClass[]): string[] {
  return classes.flatMap((name) => {
    const place = REF_CLASS_NAMES[name];
    return 'exact' in place ? [place.exact] : place.prefixes;
  });
}

/**
 * The namespace a fetch brings the remote's refs into before anything else is written, ending in
 * `/`: `refs/chant/fetching/<remote>/`. It is emptied by the same transaction that records the
 * replicas and moves the local refs, or, when that is refused, right after.
 * @param remote - the git remote's name
 * @returns the prefix
 * @internal
 */
export function stagingPrefix(remote: string): string {
  return `refs/chant/fetching/${remote}/`;
}

/**
 * The namespace a push brings the remote's value of a wip ref it refused as no fast-forward
 * into, to tell a chain the remote's holds from one it lacks, ending in `/`:
 * `refs/chant/probing/<remote>/`. Emptied by the push that wrote it.
 * @param remote - the git remote's name
 * @returns the prefix
 * @internal
 */
export function probingPrefix(remote: string): string {
  return `refs/chant/probing/${remote}/`;
}

/**
 * The fetch refspecs that bring the remote's values of `refs` into the probing namespace.
 * @param remote - the git remote's name
 * @param refs - full refnames under `refs/`
 * @returns one forced refspec per ref
 * @internal
 */
export function probingRefspecs(remote: string, refs: readonly string[]): string[] {
  return refs.map((ref) => `+${ref}:${probingPrefix(remote)}${ref.slice('refs/'.length)}`);
}

/**
 * The fetch refspecs that bring a remote's refs of some classes into the staging namespace.
 * @param remote - the git remote's name
 * @param classes - the policy's classes
 * @returns one forced refspec per place a class lives
 * @internal
 */
export function stagingRefspecs(remote: string, classes: readonly RefClass[]): string[] {
  return classes.flatMap((name) => {
    const place = REF_CLASS_NAMES[name];
    // An exact source the remote lacks fails the whole fetch, so the ledger goes by a pattern
    // that matches it; readers keep only the exact ref.
    const sources = 'exact' in place ? [`${place.exact}*`] : place.prefixes.map((prefix) => `${prefix}*`);
    return sources.map((source) => `+${source}:${stagingPrefix(remote)}${source.slice('refs/'.length)}`);
  });
}

// Wip refs a crash or a power loss left broken (their loose file emptied or cut short), put
// back at the newest commit their reflog moved them to (see ref-writer.ts).
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { objectHash } from './formats/object-format.js';
import type { Plumbing, RepositoryLayout } from './plumbing.js';
import { brokenRefFile, reflogValues, replaceBrokenRef } from './ref-writer.js';

/**
 * Puts back each wip ref of `refs` (a full name, or a prefix ending in `/`: every loose ref under
 * it) whose loose file a crash or a power loss emptied or cut short, at the newest commit its
 * reflog moved it to that the repository holds. git takes such a ref as absent and refuses to
 * move it: the chain read as gone, and every save failed on it.
 * @returns the refs put back
 * @internal
 */
export async function repairBrokenRefs(plumbing: Pick<Plumbing, 'objectInfo'>, layout: Pick<RepositoryLayout, 'commonDir' | 'objectFormat'>, refs: readonly string[]): Promise<string[]> {
  const length = objectHash(layout.objectFormat).bytes * 2;
  const broken = refs.flatMap((ref) => (ref.endsWith('/') ? looseRefsUnder(layout.commonDir, ref.slice(0, -1)) : [ref])).filter((ref) => brokenRefFile(layout.commonDir, ref, length));
  const repaired: string[] = [];
  for (const ref of broken) {
    const values = reflogValues(layout.commonDir, ref, length);
    if (values.length === 0) continue;
    const info = await plumbing.objectInfo(values);
    const next = values.find((value) => info.get(value)?.type === 'commit');
    if (next !== undefined && replaceBrokenRef(layout.commonDir, ref, next)) repaired.push(ref);
  }
  return repaired;
}

/** The names of the loose ref files under `prefix` (a ref folder), at any depth; none where it cannot be read. */
function looseRefsUnder(commonDir: string, prefix: string): string[] {
  let names: string[];
  try {
    names = readdirSync(join(commonDir, prefix), { recursive: true, encoding: 'utf8' });
  } catch {
    return [];
  }
  return names.map((name) => `${prefix}/${name.split('\\').join('/')}`).filter((ref) => !ref.endsWith('.lock'));
}

/**
 * Whether any loose ref under each prefix of `prefixes` (a ref folder ending in `/`) is broken
 * for either length of object id: a look at the files alone, before the layout is read.
 * @internal
 */
export function anyBrokenRef(commonDir: string, prefixes: readonly string[]): boolean {
  return prefixes.some((prefix) => looseRefsUnder(commonDir, prefix.slice(0, -1)).some((ref) => brokenRefFile(commonDir, ref, 40) && brokenRefFile(commonDir, ref, 64)));
}

// The paths two trees differ on, read from their loose files, as `git diff-tree -r --no-renames`
// lists them: a restore's trees are a save's own writes, loose, and reading them here spares it
// a git process. Anything git could read otherwise (an object not there loose, a mode git would
// canonicalize, entries out of git's order) or decide otherwise (a gitlink, whose change
// .gitmodules' ignore settings may hide) is left to git.
import { readCheckedLoose } from './loose-objects.js';
import type { CheckedReads } from './loose-objects.js';
import { objectHash } from './formats/object-format.js';
import { rawPathText } from './formats/path-text.js';
import type { TreeChange } from './plumbing.js';

/** At most this many trees are read; a larger diff is git's. */
const MOST_TREES = 4096;

const ABSENT = '000000';

/** The modes git writes, as a tree holds them, and as diff-tree prints them. */
const MODES = new Map([['100644', '100644'], ['100755', '100755'], ['120000', '120000'], ['40000', '040000']]);

interface TreeItem {
  /** The name's bytes, one character a byte. */
  name: string;
  /** The name with `/` after a tree's: the key git sorts entries by. */
  key: string;
  mode: string;
  oid: string;
  tree: boolean;
}

/**
 * The changes from the tree `from` to the tree `to`, in diff-tree's order and form, or null for
 * the caller to ask git (see the file's head). Replace refs, which git would follow, are the
 * caller's to rule out.
 * @param objectsDir - the objects folder
 * @param from - the tree the changes start from
 * @param to - the tree they lead to
 * @param objectFormat - `sha1` or `sha256`
 * @param reads - the objects this call has read and checked already, which it adds to
 * @internal
 */
export function diffLooseTrees(objectsDir: string, from: string, to: string, objectFormat: string, reads?: CheckedReads): TreeChange[] | null {
  const zero = '0'.repeat(objectHash(objectFormat).bytes * 2);
  const changes: TreeChange[] = [];
  let treeReads = 0;
  const itemsOf = (oid: string | null): TreeItem[] | null => {
    if (oid === null) return [];
    if ((treeReads += 1) > MOST_TREES) return null;
    const content = readCheckedLoose(objectsDir, oid, 'tree', objectFormat, reads);
    return content === null ? null : treeItems(content, objectFormat);
  };
  const push = (path: string, oldMode: string, newMode: string, oldOid: string, newOid: string, status: string): void => {
    changes.push({ path: rawPathText(path), raw: path, oldMode, newMode, oldOid, newOid, status });
  };
  const walk = (prefix: string, a: string | null, b: string | null): boolean => {
    const left = itemsOf(a);
    const right = itemsOf(b);
    if (left === null || right === null) return false;
    let i = 0;
    let j = 0;
    while (i < left.length || j < right.length) {
      const x = left[i];
      const y = right[j];
      const order = x === undefined ? 1 : y === undefined ? -1 : x.key < y.key ? -1 : x.key > y.key ? 1 : 0;
      if (order < 0) {
        const gone = x as TreeItem;
        i += 1;
        if (gone.tree) {
          if (!walk(`${prefix}${gone.name}/`, gone.oid, null)) return false;
        } else {
          push(`${prefix}${gone.name}`, gone.mode, ABSENT, gone.oid, zero, 'D');
        }
        continue;
      }
      if (order > 0) {
        const come = y as TreeItem;
        j += 1;
        if (come.tree) {
          if (!walk(`${prefix}${come.name}/`, null, come.oid)) return false;
        } else {
          push(`${prefix}${come.name}`, ABSENT, come.mode, zero, come.oid, 'A');
        }
        continue;
      }
      const was = x as TreeItem;
      const now = y as TreeItem;
      i += 1;
      j += 1;
      if (was.oid === now.oid && was.mode === now.mode) continue;
      if (was.tree) {
        if (!walk(`${prefix}${was.name}/`, was.oid, now.oid)) return false;
      } else {
        // A regular file's executable bit is a change of mode; a symlink in a file's place is one of type.
        push(`${prefix}${was.name}`, was.mode, now.mode, was.oid, now.oid, was.mode === '120000' || now.mode === '120000' ? (was.mode === now.mode ? 'M' : 'T') : 'M');
      }
    }
    return true;
  };
  if (from === to) return [];
  return walk('', from, to) ? changes : null;
}

/**
 * A tree's entries, or null where git might read them otherwise: a mode other than the four
 * git writes (a gitlink among them), or entries not strictly in git's order.
 */
function treeItems(content: Buffer, objectFormat: string): TreeItem[] | null {
  const hashBytes = objectHash(objectFormat).bytes;
  const items: TreeItem[] = [];
  let at = 0;
  while (at < content.length) {
    const space = content.indexOf(0x20, at);
    const nul = space < 0 ? -1 : content.indexOf(0, space + 1);
    if (space < 0 || nul < 0 || nul + 1 + hashBytes > content.length) return null;
    const mode = MODES.get(content.toString('latin1', at, space));
    const name = content.toString('latin1', space + 1, nul);
    if (mode === undefined || name === '' || name.includes('/')) return null;
    const tree = mode === '040000';
    const item = { name, key: tree ? `${name}/` : name, mode, oid: content.toString('hex', nul + 1, nul + 1 + hashBytes), tree };
    const last = items[items.length - 1];
    if (last !== undefined && !(last.key < item.key)) return null;
    items.push(item);
    at = nul + 1 + hashBytes;
  }
  return items;
}

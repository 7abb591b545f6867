// The record loop: a tree becomes a snapshot on the branch's wip ref by compare-and-swap.
import type { Snapshot, SnapshotKind, Unsaved } from '../documents/snapshot.js';
import { WipError } from '../errors.js';
import { commitContent, commitIdents, keptAsUtf8 } from '../git/formats/commit.js';
import { objectId } from '../git/formats/loose.js';
import { looseTarget } from '../git/loose-target.js';
import { moveRefInProcess, removeStaleRefLock } from '../git/ref-writer.js';
import type { LooseTarget } from '../git/loose-target.js';
import type { Plumbing, RefRecord, RepositoryLayout } from '../git/plumbing.js';
import { identityInputs, readIdentityMemo, saveIdentityMemo } from '../managers/identity-memo.js';
import type { Idents } from '../managers/identity-memo.js';
import { ASIDE_REF_PREFIX, indexTrailer, INDEX_TRAILER, intentLines, intentTrailers, modeLines, modeTrailers, readSnapshot, refsInTheWay, sameFields, snapshotFields, snapshotMessage } from '../snapshot/format.js';
import type { FileMode, SnapshotNotes } from '../snapshot/format.js';
import type { BranchCheckout } from './checkout.js';
import { readTip, tipFromFiles } from './checkout.js';

/** How many times a save re-reads the tip after another writer moved it. */
const CAS_ATTEMPTS = 8;

/**
 * Thrown by {@link recordSnapshot} when the wip tip's tree is no longer the one through which
 * the tree's objects were known to be on disk (`pinned`), nor the tree itself: the tree may name
 * objects a prune took since, and is recorded nowhere. The caller reads the working tree again,
 * looking at every object.
 */
export class PinnedTipMoved extends Error {
  constructor(ref: string) {
    super(`${ref} moved while the snapshot was being made`);
    this.name = 'PinnedTipMoved';
  }
}

/**
 * Records `tree` as a snapshot on the branch's wip ref by compare-and-swap, unless the tip
 * already is it: with the same fields (kind and notes, `exact`), or with any (`tree-and-head`,
 * for a checkpoint, whose only job is that the tree is kept). What the tree does not hold
 * (`unsaved`) is recorded with it, and is one of the fields `exact` compares. A tree built on
 * objects known to be on disk only through a tip of the tree `pinned` (see WorkingTree.pinned)
 * goes only onto a tip of that tree or of its own, else {@link PinnedTipMoved}. A tip taken as
 * the snapshot is read again first: one moved since is not given back.
 */
export async function recordSnapshot(plumbing: Plumbing, clock: () => Date, checkout: BranchCheckout, tree: string, base: { kind: SnapshotKind; unsaved: Unsaved | undefined }, notes: SnapshotNotes, reuse: 'exact' | 'tree-and-head', staged: string | null = null, pinned: string | null = null, intents: readonly string[] = [], modes: readonly FileMode[] = []): Promise<{ created: boolean; snapshot: Snapshot }> {
  let tip = checkout.tip;
  const kind = base.kind;
  const fields = snapshotFields({ branch: checkout.branch, head: checkout.head, kind, ...(base.unsaved === undefined ? {} : { unsaved: base.unsaved }) }, notes);
  // A checkpoint of an index that is not HEAD's tree records it (`staged`): a commit of that
  // tree on HEAD as a middle parent, which keeps it reachable and replicated, and a trailer
  // naming the tree, which tells the restore of the checkpoint to put the index back.
  // Its intent-to-add entries (`intents`), which the index's tree leaves out, each a trailer.
  // And the permission bits of files it removes that git would not give them back (`modes`).
  const message = `${snapshotMessage(fields)}${intentLines(intents)}${modeLines(modes)}${staged === null ? '' : `${INDEX_TRAILER}: ${staged}\n`}`;
  let stagedCommit: string | null = null;
  const writer = commitWriter(plumbing, checkout.layout);
  for (let attempt = 0; attempt < CAS_ATTEMPTS; attempt += 1) {
    if (pinned !== null && (tip === null || (tip.tree !== pinned && tip.tree !== tree))) throw new PinnedTipMoved(checkout.ref);
    const current = tip === null ? null : readSnapshot(tip);
    if (current !== null && current.tree === tree && current.head === checkout.head && indexTrailer((tip as RefRecord).message) === staged
      && intentTrailers((tip as RefRecord).message).join('\0') === intents.join('\0')
      && modeLines(modeTrailers((tip as RefRecord).message)) === modeLines(modes)
      && (reuse === 'tree-and-head' || sameFields(current, fields))) {
      // The tip read earlier must still be the ref's: a snapshot given back that another hand
      // deleted since (and a prune took) would hold the working tree nowhere.
      const now = tipFromFiles(checkout.layout, checkout.ref);
      const still = (now === undefined ? await readTip(plumbing, checkout.ref) : now)?.commit === current.commit;
      if (still) return { created: false, snapshot: current };
      tip = await readTip(plumbing, checkout.ref);
      continue;
    }
    // git takes no date before 1970 (commit-tree refuses one, and a commit written with one fails
    // fsck, a strict remote's too): a clock set before then dates the snapshot at 1970.
    const seconds = Math.max(0, Math.floor(clock().getTime() / 1000));
    if (staged !== null && stagedCommit === null) {
      stagedCommit = await writer.write(staged, [checkout.head], `chant wip: the index of ${checkout.branch}\n`, seconds);
    }
    const parents = [...(tip === null ? [] : [tip.commit]), ...(stagedCommit === null ? [] : [stagedCommit]), checkout.head];
    const commit = await writer.write(tree, parents, message, seconds);
    if (await updateRef(plumbing, checkout, commit, tip?.commit ?? null, kind, writer.committer())) {
      const snapshot = readSnapshot({ commit, tree, parents, committedAt: seconds, message });
      if (snapshot === null) throw new WipError('git-failed', `snapshot ${commit} does not read back`);
      return { created: true, snapshot };
    }
    tip = await readTip(plumbing, checkout.ref);
  }
  throw new WipError('wip-race', `${checkout.ref} kept moving under ${CAS_ATTEMPTS} attempts to write it; nothing was lost, try again`);
}

/**
 * Moves the wip ref by compare-and-swap; false when another writer moved it first. The usual
 * move (the ref there, naming `expected`, and the committer git gives its reflog known) is
 * written without a process, as `update-ref` writes it (lib/git/ref-writer.ts); every other
 * goes through git. A first snapshot whose ref cannot be created because a chain of another
 * branch's name is in the way (a deleted `feature` and a new `feature/login`) moves that chain
 * aside first (see {@link ASIDE_REF_PREFIX}): nothing is deleted, and the read lists it. Asked
 * only when the update fails, so the usual save spends nothing on it.
 */
async function updateRef(plumbing: Plumbing, checkout: BranchCheckout, commit: string, expected: string | null, kind: SnapshotKind, committer: Buffer | null): Promise<boolean> {
  const reason = `chant wip: ${kind}`;
  // A lock a save or restore killed mid-move left would fail this move and every one after.
  removeStaleRefLock(checkout.layout.commonDir, checkout.ref);
  if (expected !== null && committer !== null) {
    const { commonDir, gitDir, objectsDir } = checkout.layout;
    if (moveRefInProcess({ commonDir, gitDir, objectsDir, ref: checkout.ref, next: commit, expected, reason, committer }) === true) return true;
  }
  try {
    return await plumbing.updateRefCas(checkout.ref, commit, expected, reason);
  } catch (error) {
    if (expected !== null) throw error;
    const inTheWay = await plumbing.readRefs(refsInTheWay(checkout.ref));
    if (inTheWay.length === 0) throw error;
    await plumbing.moveRefs(inTheWay.map((record) => ({ from: record.ref, to: `${ASIDE_REF_PREFIX}${record.commit}`, commit: record.commit })), `chant wip: moved aside for ${checkout.branch}`);
    return plumbing.updateRefCas(checkout.ref, commit, expected, reason);
  }
}

/**
 * Writes commits of snapshots, both dates `seconds` at +0000, as `git commit-tree` writes them.
 * Once git has written one under the same identity inputs (the identity memo), the commit is
 * written without a process: the same bytes, so the same id. A message git would rewrite (bytes
 * it does not keep as UTF-8), an identity it has not told yet, or an object that cannot be
 * written goes through git. `committer` is the ident git gives a reflog line under the same
 * inputs, once known: the commits' committer, where git found it itself.
 */
function commitWriter(plumbing: Plumbing, layout: RepositoryLayout): { write: (tree: string, parents: readonly string[], message: string, seconds: number) => Promise<string>; committer: () => Buffer | null } {
  const inputs = identityInputs(layout);
  let idents: Idents | null = inputs === null ? null : readIdentityMemo(layout.gitDir, inputs);
  let target: LooseTarget | null | undefined;
  const write = async (tree: string, parents: readonly string[], message: string, seconds: number): Promise<string> => {
    const bytes = Buffer.from(message, 'utf8');
    const kept = keptAsUtf8(bytes);
    if (target === undefined && idents !== null && kept) target = looseTarget(layout);
    if (idents !== null && kept && target !== null && target !== undefined) {
      try {
        return plumbing.writeLooseObject(target, 'commit', commitContent({ tree, parents, author: idents.author, committer: idents.committer, seconds, message: bytes }), layout.objectFormat);
      } catch {
        // git writes it, or says why it cannot.
      }
    }
    const date = `@${seconds} +0000`;
    const { commit, fallback } = await plumbing.commitTree(tree, parents, message, { GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date });
    if (idents === null && inputs !== null && kept) {
      // What git wrote, read back: its idents are kept only when the commit made from them here is git's, byte for byte.
      const written = plumbing.readLooseObject(layout.objectsDir, commit);
      const learned = written?.type === 'commit' ? commitIdents(written.content) : null;
      if (learned !== null && objectId('commit', commitContent({ tree, parents, ...learned, seconds, message: bytes }), layout.objectFormat) === commit) {
        idents = { ...learned, configured: !fallback };
        await saveIdentityMemo(layout.gitDir, inputs, idents);
      }
    }
    return commit;
  };
  return { write, committer: () => (idents !== null && idents.configured ? idents.committer : null) };
}

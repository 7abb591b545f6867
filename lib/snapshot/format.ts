import { OBJECT_ID } from '../git/formats/object-format.js';
import type { CommitRecord } from '../git/formats/commit.js';
import type { Snapshot, SnapshotKind, Unsaved } from '../documents/snapshot.js';
import { readUnsaved, unsavedValue, writeUnsaved } from './left-out.js';
import { pathBytes, quotePath } from '../git/formats/path-text.js';

/** The ref namespace snapshots live under. */
export const WIP_REF_PREFIX = 'refs/chant/wip/';

/**
 * Where a chain goes when its ref's name is in the way of another branch's (`refs/chant/wip/a`
 * and `refs/chant/wip/a/b` cannot both exist): `refs/chant/wip-aside/<tip>`, named by its tip's
 * commit so that it can never be in the way of anything itself. Its branch is its snapshots'.
 */
export const ASIDE_REF_PREFIX = 'refs/chant/wip-aside/';

/**
 * The refs whose names are in the way of `ref`: the ones it would be a folder of, and the ones
 * that would be files inside it.
 * @returns names to read: each folder above `ref` under the prefix exactly, and `ref/` as a prefix
 */
export function refsInTheWay(ref: string): string[] {
  const names: string[] = [];
  for (let slash = ref.indexOf('/', WIP_REF_PREFIX.length); slash >= 0; slash = ref.indexOf('/', slash + 1)) names.push(ref.slice(0, slash));
  return [...names, `${ref}/`];
}

/**
 * The ref a branch's snapshots live on.
 * @param branch - the branch's full name without `refs/heads/`
 * @returns `refs/chant/wip/<branch>`
 * @public
 */
export function wipRef(branch: string): string {
  return `${WIP_REF_PREFIX}${branch}`;
}

/**
 * What a caller records on a snapshot it takes, each one line of at most 200 characters
 * (`checkText`), null or absent for none. Each is a field of the snapshot format that a
 * caller gives (its `--label` or `--by` option).
 * @public
 */
export interface SnapshotNotes {
  /** What to call the snapshot, such as `turn:7`. */
  label?: string | null;
  /** Who takes it, such as `github:alex`. */
  by?: string | null;
}

/** How one field is held: in its trailer, and in the memo of snapshot chains. */
interface FieldCodec<V> {
  /** The value a trailer's text reads as; undefined when the trailer is absent. Invalid: {@link INVALID}. */
  read(text: string | undefined): V | typeof INVALID;
  /** The trailer's text, or null to write none. */
  write(value: V): string | null;
  /** The value as the memo keeps it; `text` names a string once per line. */
  store(value: V, text: (value: string) => number): unknown;
  /** The value the memo kept, or {@link INVALID}; `text` reads a named string back (null: not one; `id` checks it is an object id). */
  load(stored: unknown, text: (at: unknown, id: boolean) => string | null): V | typeof INVALID;
}

/** What a field reads as when the commit is not a snapshot, or the memo cannot be trusted. */
export const INVALID: unique symbol = Symbol('invalid');

/** A string a snapshot needs: not empty, as written. */
const required: FieldCodec<string> = {
  read: (text) => (text === undefined || text === '' ? INVALID : text),
  write: (value) => value,
  store: (value, text) => text(value),
  load: (stored, text) => {
    const value = text(stored, false);
    return value === null || value === '' ? INVALID : value;
  },
};

/** An object id a snapshot needs, surrounding blanks ignored. */
const objectId: FieldCodec<string> = {
  read: (text) => {
    const value = text?.trim();
    return value === undefined || !OBJECT_ID.test(value) ? INVALID : value;
  },
  write: (value) => value,
  store: (value, text) => text(value),
  load: (stored, text) => text(stored, true) ?? INVALID,
};

/** The kind: `pre-restore`, and anything else (a kind from a newer chant) reads as `save`. */
const kind: FieldCodec<SnapshotKind> = {
  read: (text) => (text?.trim() === 'pre-restore' ? 'pre-restore' : 'save'),
  write: (value) => value,
  store: (value) => (value === 'save' ? 0 : 1),
  load: (stored) => (stored === 0 ? 'save' : stored === 1 ? 'pre-restore' : INVALID),
};

/**
 * What the snapshot left out: one trailer of JSON (see left-out.ts), absent (undefined, the key
 * left out of the snapshot) when it holds everything.
 */
const unsaved: FieldCodec<Unsaved | undefined> = {
  read: readUnsaved,
  write: (value) => writeUnsaved(value),
  store: (value) => (value === undefined ? null : { count: value.count, paths: value.paths }),
  load: (stored) => (stored === null ? undefined : unsavedValue(stored) ?? INVALID),
};

/** A text a caller may give, written only when given. */
const optional: FieldCodec<string | null> = {
  read: (text) => text ?? null,
  write: (value) => value,
  store: (value, text) => (value === null ? null : text(value)),
  load: (stored, text) => (stored === null ? null : text(stored, false) ?? INVALID),
};

/**
 * The fields a snapshot's message records, in the order of its trailers, of the memo's entries
 * and of a snapshot's keys: the one list the trailers, the memo and the record loop are driven
 * by. A field a caller gives names its option (`given`) and is a member of {@link SnapshotNotes}.
 * Adding a field here and to the `Snapshot` type is all `lib/` needs.
 */
export const SNAPSHOT_FIELDS = [
  { name: 'branch', trailer: 'Chant-Wip-Branch', codec: required },
  { name: 'head', trailer: 'Chant-Wip-Head', codec: objectId },
  { name: 'kind', trailer: 'Chant-Wip-Kind', codec: kind },
  { name: 'label', trailer: 'Chant-Wip-Label', codec: optional, given: '--label' },
  { name: 'by', trailer: 'Chant-Wip-By', codec: optional, given: '--by' },
  { name: 'unsaved', trailer: 'Chant-Wip-Unsaved', codec: unsaved },
] as const satisfies ReadonlyArray<{ name: keyof Snapshot; trailer: string; codec: FieldCodec<unknown>; given?: `--${string}` }>;

type Field = (typeof SNAPSHOT_FIELDS)[number];
type GivenField = Extract<Field, { given: string }>;
// Every given field is a note a caller can pass, and every note a given field.
const NOTES_MATCH: [GivenField['name']] extends [keyof SnapshotNotes] ? ([keyof SnapshotNotes] extends [GivenField['name']] ? true : never) : never = true;
void NOTES_MATCH;

/** What a snapshot commit's message records. */
export type SnapshotFields = Pick<Snapshot, Field['name']>;

/** The given fields' names and options. */
export const GIVEN_FIELDS: ReadonlyArray<{ name: GivenField['name']; option: string }> = SNAPSHOT_FIELDS
  .filter((field): field is GivenField => 'given' in field)
  .map((field) => ({ name: field.name, option: field.given }));

/**
 * A snapshot's fields from its kind, what its ref says (branch, head), what the save found (what
 * it left out) and the notes given, each note absent recorded as null; a field neither given
 * nor found is left out (undefined).
 */
export function snapshotFields(base: Pick<Snapshot, 'branch' | 'head' | 'kind'> & Partial<Pick<Snapshot, 'unsaved'>>, notes: SnapshotNotes): SnapshotFields {
  const fields: Record<string, unknown> = {};
  for (const field of SNAPSHOT_FIELDS) {
    const value = field.name in base ? base[field.name as keyof typeof base] : 'given' in field ? notes[field.name as keyof SnapshotNotes] ?? null : undefined;
    if (value !== undefined) fields[field.name] = value;
  }
  return fields as SnapshotFields;
}

/** Whether two snapshots record the same fields, the branch aside (the ref they are on says it): the same trailers. */
export function sameFields(a: SnapshotFields, b: SnapshotFields): boolean {
  return SNAPSHOT_FIELDS.every((field) => {
    if (field.name === 'branch') return true;
    const codec = field.codec as FieldCodec<unknown>;
    return codec.write(a[field.name]) === codec.write(b[field.name]);
  });
}

/**
 * The commit message of a snapshot: subject `chant wip: <branch>` (with ` (<label>)`), a blank
 * line, then the `Chant-Wip-*` trailers.
 */
export function snapshotMessage(fields: SnapshotFields): string {
  const subject = `chant wip: ${fields.branch}${fields.label === null ? '' : ` (${fields.label})`}`;
  const trailers: string[] = [];
  for (const field of SNAPSHOT_FIELDS) {
    const text = (field.codec as FieldCodec<unknown>).write(fields[field.name]);
    if (text !== null) trailers.push(`${field.trailer}: ${text}`);
  }
  return `${subject}\n\n${trailers.join('\n')}\n`;
}

/**
 * A snapshot from its commit's id, tree and time and the texts of its trailers (undefined:
 * absent), in {@link SNAPSHOT_FIELDS} order; null when a field is invalid.
 */
function snapshotOf(commit: CommitRecord, texts: ReadonlyArray<string | undefined>): Snapshot | null {
  const snapshot: Record<string, unknown> = { commit: commit.commit, tree: commit.tree };
  for (const [index, field] of SNAPSHOT_FIELDS.entries()) {
    const value = field.codec.read(texts[index]);
    if (value === INVALID) return null;
    if (value !== undefined) snapshot[field.name] = value;
  }
  snapshot.at = new Date(commit.committedAt * 1000).toISOString();
  return snapshot as unknown as Snapshot;
}

/**
 * A snapshot as the memo keeps it: `[tree, ...each field, at]` after the commit and its link,
 * strings named through `text`.
 */
export function storeSnapshot(snapshot: Snapshot, text: (value: string) => number): unknown[] {
  return [text(snapshot.tree), ...SNAPSHOT_FIELDS.map((field) => (field.codec as FieldCodec<unknown>).store(snapshot[field.name], text)), snapshot.at];
}

/** How many values {@link storeSnapshot} gives. */
export const STORED_SNAPSHOT_LENGTH = SNAPSHOT_FIELDS.length + 2;

/**
 * The snapshot a memo entry's values hold (see {@link storeSnapshot}), from `stored[from]` on, or
 * null when they are not what a read could have written.
 */
export function loadSnapshot(commit: string, stored: readonly unknown[], text: (at: unknown, id: boolean) => string | null, from = 0): Snapshot | null {
  if (stored.length < from + STORED_SNAPSHOT_LENGTH) return null;
  const tree = text(stored[from], true);
  const at = stored[from + STORED_SNAPSHOT_LENGTH - 1];
  if (tree === null || typeof at !== 'string') return null;
  const snapshot: Record<string, unknown> = { commit, tree };
  // An indexed loop: the whole read loads tens of thousands of these.
  for (let index = 0; index < SNAPSHOT_FIELDS.length; index += 1) {
    const field = SNAPSHOT_FIELDS[index] as Field;
    const value = (field.codec as FieldCodec<unknown>).load(stored[from + index + 1], text);
    if (value === INVALID) return null;
    if (value !== undefined) snapshot[field.name] = value;
  }
  snapshot.at = at;
  return snapshot as unknown as Snapshot;
}

const KEY_PREFIX = 'chant-wip-';
/** Each field's trailer key after the prefix, lower-case, in {@link SNAPSHOT_FIELDS} order. */
const KEYS: readonly string[] = SNAPSHOT_FIELDS.map((field) => field.trailer.slice(KEY_PREFIX.length).toLowerCase());

/** Whether `text` from `at` starts with the lower-case `prefix`, without regard to ASCII case. */
function startsWithFolded(text: string, at: number, prefix: string): boolean {
  for (let i = 0; i < prefix.length; i += 1) {
    const want = prefix.charCodeAt(i);
    const code = text.charCodeAt(at + i);
    // Folding by the 0x20 bit is only right for letters: '-' must be '-' itself.
    if (code !== want && !(want >= 0x61 && want <= 0x7a && (code | 0x20) === want)) return false;
  }
  return true;
}

/** Which field's key `text[from, to)` names, without regard to case: its position in {@link KEYS}, or -1. */
function keyAt(text: string, from: number, to: number): number {
  for (const [index, key] of KEYS.entries()) {
    if (key.length === to - from && startsWithFolded(text, from, key)) return index;
  }
  return -1;
}

/** A line of only spaces and tabs ends a paragraph. */
function isBlank(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i += 1) {
    const code = text.charCodeAt(i);
    if (code !== 32 && code !== 9) return false;
  }
  return true;
}

/**
 * Reads a commit as a snapshot: null unless its last paragraph carries the trailers of
 * {@link SNAPSHOT_FIELDS}, `Chant-Wip-Branch` and `Chant-Wip-Head` at least (keys match without
 * regard to case; a kind other than `pre-restore` reads as `save`).
 */
export function readSnapshot(commit: CommitRecord): Snapshot | null {
  // Walks the last paragraph backwards, line by line: the read parses one message per
  // snapshot, ten thousand at a time, so no pass over the whole message is spent on the rest.
  const message = commit.message;
  let end = message.length;
  while (end > 0 && message.charCodeAt(end - 1) === 10) end -= 1;
  const texts = new Array<string | undefined>(KEYS.length);
  let closed = false;
  while (end > 0) {
    const start = message.lastIndexOf('\n', end - 1) + 1;
    if (isBlank(message, start, end)) {
      closed = true;
      break;
    }
    // Only the fields' Chant-Wip keys matter, and each is a valid trailer key, so matching the
    // text before the colon against them, without regard to case, is the whole check. Indices
    // rather than slices: the read does this for every line of ten thousand messages.
    const colon = message.indexOf(':', start);
    if (colon > start + KEY_PREFIX.length && colon < end && startsWithFolded(message, start, KEY_PREFIX)) {
      const key = keyAt(message, start + KEY_PREFIX.length, colon);
      if (key >= 0) {
        const from = message.charCodeAt(colon + 1) === 32 && colon + 1 < end ? colon + 2 : colon + 1;
        // Going backwards, so the earliest occurrence of a key is the one left standing.
        texts[key] = message.slice(from, end);
      }
    }
    end = start - 1;
  }
  // A message of one paragraph has a subject and no trailers.
  return closed ? snapshotOf(commit, texts) : null;
}

/**
 * The trailer of a checkpoint that records the checkout's index: the tree it held, kept
 * reachable by a middle parent (a commit of that tree on HEAD).
 */
export const INDEX_TRAILER = 'Chant-Wip-Index';

/** A commit message's last paragraph, where its trailers are, trailing blank space left off. */
function trailerBlock(message: string): string {
  const trimmed = message.replace(/\s+$/, '');
  return trimmed.slice(trimmed.lastIndexOf('\n\n') + 1);
}

/**
 * The trailer of a checkpoint that records an intent-to-add entry of the checkout's index
 * (`git add -N`), one a path, always quoted (see quotePath): the index's tree leaves such
 * entries out, and the restore of the checkpoint adds them again.
 */
export const INTENT_TRAILER = 'Chant-Wip-Intent-To-Add';

/**
 * The trailer lines that record `paths` (byte strings) as intent-to-add, each path in git's
 * C-style quoting, always: a line break, a backslash or a quote in a name is escaped (one between
 * quotes as it stood split the trailer, and the checkpoint, read back, was no snapshot).
 */
export function intentLines(paths: readonly string[]): string {
  return paths.map((path) => `${INTENT_TRAILER}: ${quotePath(Buffer.from(path, 'latin1'))}\n`).join('');
}

/** The paths a snapshot's message records as intent-to-add, as byte strings (one character a byte), in its order. */
export function intentTrailers(message: string): string[] {
  return [...trailerBlock(message).matchAll(/^chant-wip-intent-to-add: ?(.+)$/gim)].map((match) => pathBytes(match[1] as string).toString('latin1'));
}

/**
 * The trailer of a checkpoint that records the permission bits of a file the restore removes,
 * where they are not those git gives a file it writes (the umask's): `<octal> <quoted path>`.
 * git records only the executable bit, and the undo, which writes the file anew, sets them back.
 */
export const MODE_TRAILER = 'Chant-Wip-Mode';

/** A file's permission bits, by its path (a byte string, one character a byte). */
export interface FileMode {
  raw: string;
  mode: number;
}

/** The trailer lines that record `modes`, each path in git's C-style quoting, always (see {@link intentLines}). */
export function modeLines(modes: readonly FileMode[]): string {
  return modes.map(({ raw, mode }) => `${MODE_TRAILER}: ${mode.toString(8).padStart(4, '0')} ${quotePath(Buffer.from(raw, 'latin1'))}\n`).join('');
}

/** The permission bits a snapshot's message records, in its order. */
export function modeTrailers(message: string): FileMode[] {
  return [...trailerBlock(message).matchAll(/^chant-wip-mode: ?([0-7]{3,4}) (".*")$/gim)].map((match) => ({ raw: pathBytes(match[2] as string).toString('latin1'), mode: parseInt(match[1] as string, 8) }));
}

/**
 * The snapshot below a snapshot on its chain, from its commit's parents and message: its first
 * parent when it has more parents than its own (the commit of the index a checkpoint recorded,
 * when its message names one, then its head), else null (a chain's first snapshot).
 */
export function parentBelow(parents: readonly string[], message: string): string | null {
  const own = indexTrailer(message) === null ? 1 : 2;
  return parents.length > own ? (parents[0] as string) : null;
}

/** The index tree a snapshot's message records in its trailers, or null. */
export function indexTrailer(message: string): string | null {
  const match = /^chant-wip-index: ?([0-9a-f]{40,64})[ \t]*$/im.exec(trailerBlock(message));
  return match === null ? null : (match[1] as string).toLowerCase();
}

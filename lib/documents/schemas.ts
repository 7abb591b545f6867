import type { TSchema } from 'typebox';
import { REPLICATE_DECLARATION_ID, WIP_CHANGES_ID, WIP_READ_ID, WIP_STORAGE_ID, WIP_WRITE_ID, WORKSPACE_DECLARATION_ID } from './ids.js';
import { CHANGES_DOCUMENTS, ChangesFailure } from './changes.js';
import { ReplicateDeclaration } from './replication.js';
import { PolicyDocument, PushResult, RefPush, ReplicationState } from './replication.js';
import { Snapshot } from './snapshot.js';
import { WorkspaceDeclaration } from './workspace-declaration.js';
import { CHANGES_ACTIONS, STORAGE_ACTIONS, WRITE_ACTIONS } from './ids.js';
import { STORAGE_DOCUMENTS, StorageFailure } from './storage.js';
import { WipReadFailure, WipReadSuccess } from './wip-read.js';
import { WRITE_DOCUMENTS, WriteFailure } from './wip-write.js';

/**
 * A published JSON Schema: where it is written and what it holds.
 * @public
 */
export interface PublishedSchema {
  /** Its path in the repository and the package (`schemas/...`). */
  path: string;
  /** The schema itself, draft 2020-12. */
  schema: Record<string, unknown>;
}

type Named = Readonly<Record<string, TSchema>>;

// Fragments that several documents share are published once, under $defs, and referenced.
const SHARED: Named = { snapshot: Snapshot, policy: PolicyDocument, replication: ReplicationState, replicationPush: PushResult, refPush: RefPush };

function plain(schema: unknown): unknown {
  return JSON.parse(JSON.stringify(schema));
}

/** Replaces every copy of a shared fragment (but the definition itself) by a `$ref` to it. */
function hoist(value: unknown, fragments: ReadonlyMap<string, string>, self?: string): unknown {
  if (Array.isArray(value)) return value.map((item) => hoist(item, fragments));
  if (value === null || typeof value !== 'object') return value;
  const text = JSON.stringify(value);
  const name = fragments.get(text);
  if (name !== undefined && name !== self) return { $ref: `#/$defs/${name}` };
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, hoist(item, fragments)]));
}

type Json = unknown;

/** Whether a schema only pins a value: `{const}`, `{type, const}`, `{enum}`, or `{type: 'null'}`. */
function pinned(value: Json): value is Record<string, Json> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  const record = value as Record<string, Json>;
  if (keys.every((key) => key === 'type' || key === 'const') && 'const' in record) return true;
  if (keys.every((key) => key === 'type' || key === 'enum') && Array.isArray(record.enum)) return true;
  return keys.length === 1 && record.type === 'null';
}

function jsonType(value: Json): string {
  if (value === null) return 'null';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/**
 * Rewrites what TypeBox writes into what code generators read well, meaning the same to a
 * validator: a union of constants becomes one `enum` (json-schema-to-typescript and quicktype
 * then keep the closed set, where an `anyOf` of consts became a plain string); an integer
 * constant is typed `integer` (quicktype made `contract` a float); and the success shapes say
 * nothing of `error` (json-schema-to-typescript turned `{"not": {}}` into an open object, and
 * quicktype refuses a `false` schema): only the failure shape has one, and its required fields
 * keep the `oneOf` exclusive, since no success shape holds only the header and `error`.
 */
function forGenerators(value: Json, key?: string): Json {
  if (Array.isArray(value)) return value.map((item) => forGenerators(item));
  if (value === null || typeof value !== 'object') return value;
  const record = Object.fromEntries(Object.entries(value).map(([name, item]) => [name, forGenerators(item, name)])) as Record<string, Json>;
  if (key === 'properties') {
    for (const [name, item] of Object.entries(record)) {
      if (item !== null && typeof item === 'object' && JSON.stringify(item) === '{"not":{}}') delete record[name];
    }
    return record;
  }
  if (typeof record.const === 'number' && Number.isInteger(record.const) && record.type === 'number') record.type = 'integer';
  const members = record.anyOf;
  if (Array.isArray(members) && members.length > 0 && members.every(pinned)) {
    const values: Json[] = [];
    for (const member of members as Array<Record<string, Json>>) {
      if ('const' in member) values.push(member.const);
      else if (Array.isArray(member.enum)) values.push(...member.enum);
      else values.push(null);
    }
    const types = [...new Set(values.map(jsonType))];
    const { anyOf: _members, ...rest } = record;
    return { type: types.length === 1 ? types[0] : types, enum: values, ...rest };
  }
  return record;
}

/** A verb's success variant, titled for code generators: `save` is `WipSaveDocument`. */
function verbTitle(verb: string): string {
  return `Wip${verb.charAt(0).toUpperCase()}${verb.slice(1)}Document`;
}

/** The title of each `$defs` entry: the name generated code gives the type. */
const TITLES: Readonly<Record<string, string>> = {
  snapshot: 'Snapshot',
  policy: 'ReplicatePolicy',
  replication: 'ReplicationState',
  replicationPush: 'ReplicationPush',
  refPush: 'RefPush',
  result: 'WipReadResult',
  ...Object.fromEntries([...WRITE_ACTIONS, ...STORAGE_ACTIONS, ...CHANGES_ACTIONS].map((verb) => [verb, verbTitle(verb)])),
};

/** The variants of a document of verbs: each verb's success document, in the order of its list, then the failure. */
function verbVariants<V extends string>(verbs: readonly V[], documents: Readonly<Record<V, TSchema>>, failure: TSchema): Named {
  return { ...Object.fromEntries(verbs.map((verb) => [verb, documents[verb]])), failure };
}

function document(id: string, title: string, description: string, variants: Named, names: { failure: string; error: string; code: string }): Record<string, unknown> {
  const fragments = new Map<string, string>();
  for (const [name, schema] of Object.entries(SHARED)) fragments.set(JSON.stringify(plain(schema)), name);
  const defs: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(variants)) defs[name] = hoist(plain(schema), fragments);
  const used = new Set<string>();
  const scan = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(scan);
    else if (value !== null && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) {
        if (key === '$ref' && typeof item === 'string' && item.startsWith('#/$defs/')) used.add(item.slice('#/$defs/'.length));
        else scan(item);
      }
    }
  };
  for (let grew = true; grew;) {
    const before = used.size;
    scan(defs);
    for (const name of used) if (!(name in defs)) defs[name] = hoist(plain(SHARED[name]), fragments, name);
    grew = used.size > before;
  }
  // The failure's error object and its code list get $defs of their own, so generated code
  // names them (WipWriteError, WipWriteErrorCode) and a host can switch on the code.
  const failure = defs.failure as { properties: Record<string, { properties: Record<string, unknown> }> };
  const error = failure.properties.error as { properties: Record<string, unknown> };
  defs.errorCode = { title: names.code, description: 'Why nothing was done: one of a closed list, each described in docs/sdk.md.', ...(error.properties.code as object) };
  error.properties.code = { $ref: '#/$defs/errorCode' };
  defs.error = { title: names.error, description: 'What went wrong: a stable code, a message for people, and for some codes the paths concerned.', ...error };
  failure.properties.error = { $ref: '#/$defs/error' } as never;
  const titled: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(forGenerators(defs) as Record<string, Record<string, unknown>>)) {
    const heading = name === 'failure' ? names.failure : TITLES[name];
    titled[name] = heading === undefined || 'title' in schema ? schema : { title: heading, ...schema };
  }
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: id,
    title,
    description,
    oneOf: Object.keys(variants).map((name) => ({ $ref: `#/$defs/${name}` })),
    $defs: titled,
  };
}

/** A schema of a fragment people write, published as it is rather than as a union of documents. */
function fragment(id: string, title: string, description: string, schema: TSchema): Record<string, unknown> {
  const { description: _own, ...shape } = forGenerators(plain(schema)) as Record<string, unknown>;
  return { $schema: 'https://json-schema.org/draft/2020-12/schema', $id: id, title, description, ...shape };
}

/**
 * The JSON Schemas chant-wip publishes, generated from its TypeBox types: the read document,
 * the write documents, the `replicate` block of a declaration and the declaration as a whole,
 * draft 2020-12.
 * @returns each schema with the path it is published at
 * @public
 */
export function publishedSchemas(): PublishedSchema[] {
  return [
    {
      path: 'schemas/workspace/wip/v1/wip.schema.json',
      schema: document(
        WIP_READ_ID,
        'chant workspace wip output',
        "What `chant workspace wip [--branch <branch>] --json` prints: the work-in-progress snapshots kept under refs/chant/wip/<branch>, newest first, and, when a box block declares replicate, how far each ref the policy names is from its remote. It reads local refs and never fetches. Version 1 of the read contract: readers ignore fields they do not know, and within v1 fields are only ever added.",
        { result: WipReadSuccess, failure: WipReadFailure },
        { failure: 'WipReadFailure', error: 'WipReadError', code: 'WipReadErrorCode' },
      ),
    },
    {
      path: 'schemas/workspace/wip-write/v1/wip-write.schema.json',
      schema: document(
        WIP_WRITE_ID,
        `chant workspace wip ${WRITE_ACTIONS.join('|')} output`,
        `What \`chant workspace wip ${WRITE_ACTIONS.join('|')}\` prints, with or without --json. save takes a snapshot of the whole working tree onto refs/chant/wip/<branch> through a temporary index, so the checkout's index, HEAD and branch never move; restore puts the working tree back as a snapshot holds it, after a snapshot of how it is now; push and fetch replicate the refs the box's replicate policy names. Version 1: readers ignore fields they do not know, and within v1 fields are only ever added.`,
        verbVariants(WRITE_ACTIONS, WRITE_DOCUMENTS, WriteFailure),
        { failure: 'WipWriteFailure', error: 'WipWriteError', code: 'WipWriteErrorCode' },
      ),
    },
    {
      path: 'schemas/workspace/wip-storage/v1/wip-storage.schema.json',
      schema: document(
        WIP_STORAGE_ID,
        `chant workspace wip ${STORAGE_ACTIONS.join('|')} output`,
        "What `chant workspace wip storage` and `chant workspace wip prune` print, with or without --json. storage says what each chain of snapshots costs: how many, when the oldest and newest were taken, and the bytes their objects take beyond what branches, tags, remote-tracking refs and HEAD reach. prune rewrites chains down to the snapshots the retention rules keep (the newest, and the checkpoint of the last restore, always stay), or with --dry-run says what it would drop. Version 1: readers ignore fields they do not know, and within v1 fields are only ever added.",
        verbVariants(STORAGE_ACTIONS, STORAGE_DOCUMENTS, StorageFailure),
        { failure: 'WipStorageFailure', error: 'WipStorageError', code: 'WipStorageErrorCode' },
      ),
    },
    {
      path: 'schemas/workspace/wip-changes/v1/wip-changes.schema.json',
      schema: document(
        WIP_CHANGES_ID,
        'chant workspace wip show|diff and restore --dry-run output',
        "What `chant workspace wip show <snapshot>` and `chant workspace wip diff <a> [<b>]` print: one snapshot with what it changed against the commit before it and every file it holds, or every path that differs between two snapshots, a snapshot and another commit such as HEAD, or a snapshot and the working tree, with modes, object ids and line counts. And what `chant workspace wip restore [<snapshot>] --dry-run [-- <path>...]` prints: the plan of a restore, every path it would write or remove, what is in the way, the refusal it would end with, and the fingerprint of the working tree, index and HEAD that --expect takes. All three read and never write a ref, the index or a file. This project's own document, beside the reference contract's two. Version 1: readers ignore fields they do not know, and within v1 fields are only ever added.",
        verbVariants(CHANGES_ACTIONS, CHANGES_DOCUMENTS, ChangesFailure),
        { failure: 'WipChangesFailure', error: 'WipChangesError', code: 'WipChangesErrorCode' },
      ),
    },
    {
      path: 'schemas/workspace/replicate/v1/replicate.schema.json',
      schema: fragment(
        REPLICATE_DECLARATION_ID,
        'chant workspace declaration: box.replicate',
        "The replicate block of a member's box in chant.workspace.json (or chant.workspace.jsonc): which git remote the box's refs replicate to, which refs go, when chant pushes on its own, how often the host runs wip push and which secret findings are acknowledged. Every field is optional; absent ones read as remote origin, all four ref classes, on both save and release, and no schedule. At most one box of a declaration declares replicate. Keys beginning x- are left to other tools; any other key is refused. Version 1: within v1 fields are only ever added.",
        ReplicateDeclaration,
      ),
    },
    {
      path: 'schemas/workspace/declaration/v1/declaration.schema.json',
      schema: fragment(
        WORKSPACE_DECLARATION_ID,
        'chant workspace declaration, as chant-wip reads it',
        "chant.workspace.json (or chant.workspace.jsonc, which allows comments and trailing commas) as chant-wip reads it: minReader, identity and agents for the --by rule, the replicate block of at most one member's box, and the retain block of at most one member's box. What it refuses is what this schema refuses; every other key, at every level, is tolerated and left to chant and its other readers. Version 1: within v1 fields are only ever added.",
        WorkspaceDeclaration,
      ),
    },
  ];
}

import type { PolicyDocument, RefClass, Trigger } from '../documents/replication.js';
import { EVERY_PATTERN, EXTENSION_KEY_PATTERN, FINDING_ID_PATTERN, REF_CLASSES, REMOTE_NAME_PATTERN, TRIGGERS } from '../documents/replicate-rules.js';
import { declaredRetain } from '../workspace/retain.js';
import { boxBlock, invalid, isObject, kind, readDeclaration, show } from '../workspace/declaration.js';
import type { Declaration, FieldPath, Locator } from '../workspace/declaration.js';
import { checkStoreOptions } from '../errors.js';
import { Plumbing } from '../git/plumbing.js';
import { SimpleGitRunner } from '../git/runner.js';
import type { GitRunner } from '../git/runner.js';

/**
 * A box's `replicate` block with every default filled in and its lists in canonical order.
 * @public
 */
export interface ReplicateSettings {
  /** The git remote, by name. */
  remote: string;
  /** The ref classes, in the order of {@link REF_CLASSES}. */
  refs: RefClass[];
  /** The triggers, in the order of {@link TRIGGERS}. */
  on: Trigger[];
  /** The host's push interval, or null. */
  every: string | null;
  /** The secret findings acknowledged for good, by id, sorted; empty when none. */
  allow: string[];
}

/**
 * The one box of a declaration that declares `replicate`.
 * @public
 */
export interface DeclaredReplicate {
  /** The member's `name`, or `members[i]` when it has none. */
  box: string;
  /** Its `replicate`, validated, defaults filled in. */
  settings: ReplicateSettings;
}

/**
 * Where {@link Policy.load} looks.
 * @public
 */
export interface PolicyLoadOptions {
  /** The working directory; the declaration is looked for from here up to `top`. */
  cwd: string;
  /** The top of the git checkout; asked of git when absent. */
  top?: string;
  /** How git is run when `top` must be asked for; {@link SimpleGitRunner} when absent. */
  git?: GitRunner;
}

/**
 * Options of {@link Policy.from}.
 * @public
 */
export interface PolicyFromOptions {
  /** The member whose box declares it; empty when absent. */
  box?: string;
  /** Where the block came from, prefixed to messages (a file name); none when absent. */
  where?: string;
}

/** The policy's fields as its TypeBox type states them (`PolicyDocument`), read-only. */
type PolicyShape = { readonly [K in keyof PolicyDocument]: NonNullable<PolicyDocument[K]> extends Array<infer U> ? readonly U[] : PolicyDocument[K] };

let wrapSettings: (box: string, settings: ReplicateSettings) => Policy;

/**
 * A policy from a policy document (what {@link Policy.toJSON} gives, or a caller built to the
 * type), checked as {@link Policy.from} checks a block, since a caller may have read it from a
 * document or built it by hand: `box` a string, the rest a replicate block, defaults filled in.
 * @throws {@link WipError} `declaration-invalid`, naming the field as `policy.<field>`
 * @internal
 */
export function policyOf(document: Policy | PolicyDocument): Policy {
  if (document instanceof Policy) return document;
  const nowhere: Locator = () => null;
  if (!isObject(document)) throw invalid(nowhere, ['policy'], `must be a Policy or a policy document; it is ${kind(document)}`);
  const { box = '', every, ...replicate } = document as Record<string, unknown>;
  if (typeof box !== 'string') throw invalid(nowhere, ['policy', 'box'], `must be a string; it is ${kind(box)}`);
  // A document states "no every" as null, a declaration by leaving it out.
  return wrapSettings(box, checkReplicate(every === null || every === undefined ? replicate : { ...replicate, every }, ['policy'], nowhere));
}

/**
 * The replicate policy of a workspace: the one `members[i].box.replicate` its declaration
 * states, every default filled in (remote `origin`, every ref class, both triggers, no `every`).
 *
 * @example
 * ```ts
 * const policy = await Policy.load({ cwd: process.cwd() });
 * if (policy?.has('save')) console.error(`pushes to ${policy.remote} after each save`);
 * ```
 * @public
 */
export class Policy {
  static {
    // The one way policyOf builds a policy from settings it checked: the constructor stays private.
    wrapSettings = (box, settings) => new Policy(box, settings);
  }

  /** The member whose box declares it. */
  readonly box: string;
  /** The git remote it replicates to, by name. */
  readonly remote: string;
  /** The ref classes it replicates, in canonical order. */
  readonly refs: readonly RefClass[];
  /** When chant pushes on its own, in canonical order. */
  readonly on: readonly Trigger[];
  /** The interval the host runs wip push at, or null. */
  readonly every: string | null;
  /** The secret findings the declaration acknowledges (`allow`), by id: the push's gate lets them go. */
  readonly allow: readonly string[];

  private constructor(box: string, settings: ReplicateSettings) {
    this.box = box;
    this.remote = settings.remote;
    this.refs = Object.freeze([...settings.refs]);
    this.on = Object.freeze([...settings.on]);
    this.every = settings.every;
    this.allow = Object.freeze([...settings.allow]);
  }

  /**
   * Reads the policy the declaration governing `cwd` states. Runs no git when `top` is given.
   * @param options - where to look
   * @returns the policy, or null when there is no declaration or no box declares replicate
   * @throws {@link WipError} `declaration-ambiguous`, `declaration-unparseable`, `declaration-invalid`,
   * `reader-too-old`; `not-a-git-repository` when `top` is absent and `cwd` is outside a working tree
   */
  static async load(options: PolicyLoadOptions): Promise<Policy | null> {
    checkStoreOptions(options, 'Policy.load');
    const top = options.top ?? (await new Plumbing(options.git ?? new SimpleGitRunner(options.cwd), options.cwd).top());
    return policyIn(await readDeclaration(options.cwd, top));
  }

  /**
   * Builds a policy from a `replicate` block, validated as a declaration's is.
   * @param replicate - the block as written
   * @param options - the box it belongs to and where it came from
   * @returns the policy, defaults filled in
   * @throws {@link WipError} `declaration-invalid`, naming the first offending field
   */
  static from(replicate: unknown, options: PolicyFromOptions = {}): Policy {
    const where = options.where ?? null;
    return new Policy(options.box ?? '', checkReplicate(replicate, ['replicate'], () => where));
  }

  /**
   * Whether chant pushes on its own at a trigger.
   * @param trigger - `save` or `release`
   * @returns true when `on` names it
   */
  has(trigger: Trigger): boolean {
    return this.on.includes(trigger);
  }

  /**
   * The policy as documents print it.
   * @returns `{box, remote, refs, on, every}`, in that key order, and `allow` when it names any
   */
  toJSON(): PolicyDocument {
    return { box: this.box, remote: this.remote, refs: [...this.refs], on: [...this.on], every: this.every, ...(this.allow.length > 0 ? { allow: [...this.allow] } : {}) };
  }
}

/**
 * The policy a parsed declaration states. The declaration is refused whole, whichever verb reads
 * it: a `retain` block that breaks its rules is `declaration-invalid` here too.
 * @param declaration - the declaration, or null when there is none
 * @returns the policy, or null when there is no declaration or no box declares replicate
 * @throws {@link WipError} `declaration-invalid`
 * @internal
 */
export function policyIn(declaration: Declaration | null): Policy | null {
  if (declaration === null) return null;
  const declared = declaredReplicate(declaration);
  declaredRetain(declaration);
  return declared === null ? null : wrapSettings(declared.box, declared.settings);
}

/**
 * The one box of a declaration that declares `replicate`, validated. Checks the shape of the
 * path to it: `members` an array, each member an object, each `box` an object.
 * @param declaration - a parsed declaration
 * @returns the box and its settings, or null when no box declares replicate
 * @throws {@link WipError} `declaration-invalid` when the shape is wrong or two boxes declare replicate
 * @public
 */
export function declaredReplicate(declaration: Declaration): DeclaredReplicate | null {
  const block = boxBlock(declaration, 'replicate');
  return block === null ? null : { box: block.box, settings: checkReplicate(block.value, block.field, declaration.where) };
}

const REMOTE_NAME = new RegExp(REMOTE_NAME_PATTERN);
const EVERY = new RegExp(EVERY_PATTERN);
const EXTENSION_KEY = new RegExp(EXTENSION_KEY_PATTERN);
const FINDING_ID = new RegExp(FINDING_ID_PATTERN);
const KNOWN_KEYS = new Set(['remote', 'refs', 'on', 'every', 'allow']);

/**
 * Validates a `replicate` block the way its published schema does, by hand so that nothing on
 * the save path compiles a schema, and fills in the defaults: remote `origin`, every ref class,
 * both triggers, no `every`. `refs` and `on` come back in canonical order.
 * @param value - the block as written
 * @param field - where it sits, for messages (`["members", 0, "box", "replicate"]`)
 * @param where - says where a field is in the file, or null when there is no file
 * @returns the settings, defaults filled in
 * @throws {@link WipError} `declaration-invalid`, naming the first offending field
 * @public
 */
export function checkReplicate(value: unknown, field: FieldPath, where: Locator): ReplicateSettings {
  if (!isObject(value)) throw invalid(where, field, `must be an object; it is ${kind(value)}`);
  for (const key of Object.keys(value)) {
    if (!KNOWN_KEYS.has(key) && !EXTENSION_KEY.test(key)) {
      throw invalid(where, [...field, key], 'is not a replicate key: the keys are remote, refs, on, every and allow, and x- keys are left to other tools', 'key');
    }
  }
  let remote = 'origin';
  if (Object.hasOwn(value, 'remote')) {
    if (typeof value.remote !== 'string' || !REMOTE_NAME.test(value.remote)) {
      throw invalid(where, [...field, 'remote'], `must be the name of a git remote (a letter or digit, then up to 63 of letters, digits, ".", "_" and "-"), never a URL; it is ${show(value.remote)}`);
    }
    remote = value.remote;
  }
  const refs = Object.hasOwn(value, 'refs') ? oneOfEach(value.refs, REF_CLASSES, [...field, 'refs'], where, false) : [...REF_CLASSES];
  const on = Object.hasOwn(value, 'on') ? oneOfEach(value.on, TRIGGERS, [...field, 'on'], where, true) : [...TRIGGERS];
  let every: string | null = null;
  if (Object.hasOwn(value, 'every')) {
    if (typeof value.every !== 'string' || !EVERY.test(value.every)) {
      throw invalid(where, [...field, 'every'], `must be a whole number of seconds, minutes or hours such as "10m" (1 or more, then s, m or h); it is ${show(value.every)}`);
    }
    every = value.every;
  }
  const allow: string[] = [];
  if (Object.hasOwn(value, 'allow')) {
    if (!Array.isArray(value.allow)) throw invalid(where, [...field, 'allow'], `must be an array of secret finding ids; it is ${kind(value.allow)}`);
    for (const [index, id] of value.allow.entries()) {
      if (typeof id !== 'string' || !FINDING_ID.test(id)) {
        throw invalid(where, [...field, 'allow', index], `must be a secret finding's id, 20 lower-case hex digits as a push's heldBack lists it; it is ${show(id)}`);
      }
      if (allow.includes(id)) throw invalid(where, [...field, 'allow', index], `repeats ${show(id)}: each may be named once`);
      allow.push(id);
    }
  }
  return { remote, refs, on, every, allow: allow.sort() };
}

/** A list of distinct names out of `allowed`, returned in `allowed`'s order. */
function oneOfEach<T extends string>(value: unknown, allowed: readonly T[], field: FieldPath, where: Locator, mayBeEmpty: boolean): T[] {
  const names = allowed.join(', ');
  if (!Array.isArray(value)) throw invalid(where, field, `must be an array of ${names}; it is ${kind(value)}`);
  if (value.length === 0 && !mayBeEmpty) throw invalid(where, field, `must name at least one of ${names}`);
  const seen = new Set<string>();
  for (const [index, item] of value.entries()) {
    if (typeof item !== 'string' || !(allowed as readonly string[]).includes(item)) {
      throw invalid(where, [...field, index], `must be one of ${names}; it is ${show(item)}`);
    }
    if (seen.has(item)) throw invalid(where, [...field, index], `repeats ${show(item)}: each may be named once`);
    seen.add(item);
  }
  return allowed.filter((name) => seen.has(name));
}

// A Policy is its TypeBox type, read-only: a field added to PolicyDocument and not to the class
// (or typed otherwise) fails to compile here.
const IS_POLICY_DOCUMENT: (policy: Policy) => PolicyShape = (policy) => policy;
void IS_POLICY_DOCUMENT;

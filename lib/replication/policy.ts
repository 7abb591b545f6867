import type { PolicyDocument, RefClass, Trigger } from '../documents/replication.js';
import { checkReplicate, declaredReplicate, readDeclaration } from '../workspace/declaration.js';
import type { ReplicateSettings } from '../workspace/declaration.js';
import { Plumbing } from '../git/plumbing.js';
import { SimpleGitRunner } from '../git/runner.js';
import type { GitRunner } from '../git/runner.js';

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

  private constructor(box: string, settings: ReplicateSettings) {
    this.box = box;
    this.remote = settings.remote;
    this.refs = Object.freeze([...settings.refs]);
    this.on = Object.freeze([...settings.on]);
    this.every = settings.every;
  }

  /**
   * Reads the policy the declaration governing `cwd` states. Runs no git when `top` is given.
   * @param options - where to look
   * @returns the policy, or null when there is no declaration or no box declares replicate
   * @throws {@link WipError} `declaration-ambiguous`, `declaration-unparseable`, `declaration-invalid`,
   * `reader-too-old`; `not-a-git-repository` when `top` is absent and `cwd` is outside a working tree
   */
  static async load(options: PolicyLoadOptions): Promise<Policy | null> {
    const top = options.top ?? (await new Plumbing(options.git ?? new SimpleGitRunner(options.cwd), options.cwd).top());
    const declaration = await readDeclaration(options.cwd, top);
    if (declaration === null) return null;
    const declared = declaredReplicate(declaration);
    return declared === null ? null : new Policy(declared.box, declared.settings);
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
   * @returns `{box, remote, refs, on, every}`, in that key order
   */
  toJSON(): PolicyDocument {
    return { box: this.box, remote: this.remote, refs: [...this.refs], on: [...this.on], every: this.every };
  }
}

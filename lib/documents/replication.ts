import { Type } from 'typebox';
import type { Static } from 'typebox';
import { LiteralUnion, Nullable, ObjectId } from './common.js';
import { EVERY_PATTERN, EXTENSION_KEY_PATTERN, FINDING_ID_PATTERN, REF_CLASSES, REMOTE_NAME_PATTERN, TRIGGERS } from './replicate-rules.js';

/**
 * The classes of refs a policy can replicate, in their canonical order.
 * @public
 */
export const RefClass = LiteralUnion(REF_CLASSES);
/**
 * A class of replicated ref: `work`, `kept`, `wip` or `ledger`.
 * @public
 */
export type RefClass = Static<typeof RefClass>;

/**
 * When chant pushes on its own, in canonical order.
 * @public
 */
export const Trigger = LiteralUnion(TRIGGERS);
/**
 * A moment chant pushes on its own: `save` (after a wip save) or `release` (after a work lease is released).
 * @public
 */
export type Trigger = Static<typeof Trigger>;

/**
 * The replicate policy as documents print it, every default filled in.
 * @public
 */
export const PolicyDocument = Type.Object(
  {
    box: Type.String({ description: 'The member whose box block declares it.' }),
    remote: Type.String({ description: 'The git remote it pushes to, by name.' }),
    refs: Type.Array(RefClass, {
      description:
        'What it replicates, in this order: work (refs/heads/chant/work/...), kept (refs/chant/kept/...), wip (refs/chant/wip/..., and chains moved aside, refs/chant/wip-aside/...) and ledger (refs/heads/chant/lifecycle).',
    }),
    on: Type.Array(Trigger, { description: 'When chant pushes on its own: after a wip save, after a work lease release.' }),
    every: Nullable(Type.String(), 'The interval at which the host runs wip push, or null.'),
    allow: Type.Optional(Type.Array(Type.String(), { description: 'The secret findings the declaration acknowledges (replicate.allow), by id; present only when it names any.' })),
  },
  { description: 'The replicate policy the declaration in the working tree states (box.replicate), with every default filled in.' },
);
/**
 * The replicate policy as documents print it: `{box, remote, refs, on, every}`.
 * @public
 */
export interface PolicyDocument {
  /** The member whose box block declares it. */
  box: string;
  /** The git remote it pushes to, by name. */
  remote: string;
  /**
   * What it replicates, in this order: work (refs/heads/chant/work/...), kept
   * (refs/chant/kept/...), wip (refs/chant/wip/..., and chains moved aside,
   * refs/chant/wip-aside/...) and ledger (refs/heads/chant/lifecycle).
   */
  refs: RefClass[];
  /** When chant pushes on its own: after a wip save, after a work lease release. */
  on: Trigger[];
  /** The interval at which the host runs wip push, or null. */
  every: string | null;
  /**
   * The secret findings the declaration acknowledges (replicate.allow), by id; present only when it
   * names any.
   */
  allow?: string[];
}

/**
 * Where one local ref stands against its remote.
 * @public
 */
export const RefState = Type.Object({
  ref: Type.String({ description: 'The local ref, by its full name.' }),
  class: LiteralUnion(REF_CLASSES, { description: 'Which of the policy\'s classes the ref is of.' }),
  commit: Type.String({ ...ObjectId, description: 'The commit the local ref names.' }),
  replica: Nullable(ObjectId, 'What the remote held of the ref when it last answered chant at the URL the checkout names now, or null when unknown.'),
  replicated: Type.Boolean({ description: 'True when the remote holds the ref at commit, as the remote itself last answered.' }),
  ahead: Type.Integer({ minimum: 0, description: 'Commits reachable from commit that nothing known to be on the remote reaches; 0 when replicated.' }),
});
/**
 * Where one local ref stands against the remote: its commit, the replica chant recorded, and how many commits the remote lacks.
 * @public
 */
export interface RefState {
  /** The local ref, by its full name. */
  ref: string;
  /** Which of the policy's classes the ref is of. */
  class: RefClass;
  /** The commit the local ref names. */
  commit: string;
  /**
   * What the remote held of the ref when it last answered chant at the URL the checkout names now,
   * or null when unknown.
   */
  replica: string | null;
  /** True when the remote holds the ref at commit, as the remote itself last answered. */
  replicated: boolean;
  /**
   * Commits reachable from commit that nothing known to be on the remote reaches; 0 when
   * replicated.
   */
  ahead: number;
}

/**
 * Where every ref the policy names stands, read locally.
 * @public
 */
export const ReplicationState = Type.Object(
  {
    policy: PolicyDocument,
    remoteConfigured: Type.Boolean({ description: 'Whether the checkout has a git remote of the policy\'s name.' }),
    replicated: Type.Boolean({ description: 'True when every ref listed is on the remote as it is locally, as the remote itself last answered at the URL it has now.' }),
    refs: Type.Array(RefState, { description: 'Every local ref the policy names, sorted by ref.' }),
    confirmedAt: Type.Optional(
      Nullable(
        Type.String(),
        "When the remote last answered for the policy's refs at the URL the checkout names now (a push or fetch that reached it), ISO 8601 UTC with milliseconds; null when it never has, so no replica is proof.",
      ),
    ),
  },
  {
    description:
      "Where every ref the policy names stands against its remote, read locally: what reached the remote is what the remote itself answered to chant's last push or fetch at the URL the checkout names now, recorded under refs/chant/replica/<remote>/. Remote-tracking refs are never taken as proof. Never fetches.",
  },
);
/**
 * Where every local ref of the policy's classes stands against the remote, as `Replicator.state` (chant-wip) reads it.
 * @public
 */
export interface ReplicationState {
  /**
   * The replicate policy the declaration in the working tree states (box.replicate), with every
   * default filled in.
   */
  policy: PolicyDocument;
  /** Whether the checkout has a git remote of the policy's name. */
  remoteConfigured: boolean;
  /**
   * True when every ref listed is on the remote as it is locally, as the remote itself last
   * answered at the URL it has now.
   */
  replicated: boolean;
  /** Every local ref the policy names, sorted by ref. */
  refs: RefState[];
  /**
   * When the remote last answered for the policy's refs at the URL the checkout names now (a push
   * or fetch that reached it), ISO 8601 UTC with milliseconds; null when it never has, so no
   * replica is proof.
   */
  confirmedAt?: string | null;
}

/**
 * One ref a push sent, or could not.
 * @public
 */
export const RefPush = Type.Object({
  ref: Type.String({ description: 'The ref, by its full name, pushed under the same name.' }),
  commit: Type.String({ ...ObjectId, description: 'The commit pushed, or that could not be.' }),
  reason: Type.Optional(Type.String({ description: 'Why it did not go: the remote\'s reason, or why the remote could not be reached.' })),
});
/**
 * One ref a push sent (`pushed`) or could not send (`rejected`, with `reason`).
 * @public
 */
export interface RefPush {
  /** The ref, by its full name, pushed under the same name. */
  ref: string;
  /** The commit pushed, or that could not be. */
  commit: string;
  /** Why it did not go: the remote's reason, or why the remote could not be reached. */
  reason?: string;
}

/**
 * A likely secret the gate found.
 * @public
 */
export const SecretFinding = Type.Object({
  id: Type.String({ pattern: '^[0-9a-f]{20}$', description: 'Stable for this content at this path under this rule: acknowledge it with wip push --allow <id>. A changed file is a new finding.' }),
  path: Type.String({ description: 'From the repository root.' }),
  line: Nullable(Type.Integer({ minimum: 1 }), 'The 1-based line the likely secret starts on; null in a binary file, whose printable runs were scanned.'),
  rule: Type.String({ description: "The secretlint rule and its message id, such as @secretlint/secretlint-rule-aws:AWSSecretAccessKey. The secret itself is never printed." }),
  snapshot: Type.String({ ...ObjectId, description: 'The snapshot that adds the file, or this content of it.' }),
}, { description: 'A likely secret in a file a snapshot adds: where it is and which rule found it, never the secret.' });
/**
 * A likely secret, as a TypeScript type.
 * @public
 */
export interface SecretFinding {
  /**
   * Stable for this content at this path under this rule: acknowledge it with wip push --allow
   * \<id\>. A changed file is a new finding.
   */
  id: string;
  /** From the repository root. */
  path: string;
  /**
   * The 1-based line the likely secret starts on; null in a binary file, whose printable runs were
   * scanned.
   */
  line: number | null;
  /**
   * The secretlint rule and its message id, such as
   * \@secretlint/secretlint-rule-aws:AWSSecretAccessKey. The secret itself is never printed.
   */
  rule: string;
  /** The snapshot that adds the file, or this content of it. */
  snapshot: string;
}

/**
 * A wip ref the secret gate kept (in part) on the box.
 * @public
 */
export const HeldBack = Type.Object({
  ref: Type.String({ description: 'The wip ref, by its full name.' }),
  commit: Type.String({ ...ObjectId, description: 'Its local tip.' }),
  pushed: Nullable(ObjectId, 'The snapshot pushed in the ref\'s place: the newest one below the first that holds a finding; null when nothing of the ref went.'),
  findings: Type.Array(SecretFinding, { description: 'The likely secrets that hold it back.' }),
}, { description: 'A wip ref whose snapshots from the first holding a likely secret stay local until the finding is acknowledged or the file changes.' });
/**
 * A held-back ref, as a TypeScript type.
 * @public
 */
export interface HeldBack {
  /** The wip ref, by its full name. */
  ref: string;
  /** Its local tip. */
  commit: string;
  /**
   * The snapshot pushed in the ref's place: the newest one below the first that holds a finding;
   * null when nothing of the ref went.
   */
  pushed: string | null;
  /** The likely secrets that hold it back. */
  findings: SecretFinding[];
}

/**
 * What one push did.
 * @public
 */
export const PushResult = Type.Object(
  {
    remote: Type.String({ description: 'The git remote pushed to, by name.' }),
    pushed: Type.Array(RefPush, { description: 'The refs the remote took. A ref the secret gate cut short is listed with the commit that went.' }),
    rejected: Type.Array(RefPush, { description: 'The refs the remote refused, or that could not be pushed because it was unreachable or not configured, each with the reason.' }),
    upToDate: Type.Integer({ minimum: 0, description: 'How many refs were already on the remote as they are locally.' }),
    heldBack: Type.Optional(Type.Array(HeldBack, { description: 'Present when the secret gate kept snapshots local: each wip ref, what went of it, and the findings, sorted by ref.' })),
  },
  { description: "What one push did. Each ref the remote doesn't hold as it is locally is pushed under its own name, never forced; a pre-push hook is not run." },
);
/**
 * What one push did: the refs pushed, the refs rejected with their reasons, and how many were up to date.
 * @public
 */
export interface PushResult {
  /** The git remote pushed to, by name. */
  remote: string;
  /**
   * The refs the remote took. A ref the secret gate cut short is listed with the commit that went.
   */
  pushed: RefPush[];
  /**
   * The refs the remote refused, or that could not be pushed because it was unreachable or not
   * configured, each with the reason.
   */
  rejected: RefPush[];
  /** How many refs were already on the remote as they are locally. */
  upToDate: number;
  /**
   * Present when the secret gate kept snapshots local: each wip ref, what went of it, and the
   * findings, sorted by ref.
   */
  heldBack?: HeldBack[];
}

/**
 * What a fetch did with one ref.
 * @public
 */
export const FetchOutcome = Type.Union(
  [Type.Literal('created'), Type.Literal('fast-forward'), Type.Literal('up-to-date'), Type.Literal('ahead'), Type.Literal('diverged'), Type.Literal('checked-out')],
  { description: 'created and fast-forward moved the local ref; ahead, diverged and checked-out (a branch checked out in some worktree) left it as it was.' },
);
/**
 * What a fetch did with one local ref: `created`, `fast-forward`, `up-to-date`, `ahead`, `diverged` or `checked-out`.
 * @public
 */
export type FetchOutcome = Static<typeof FetchOutcome>;

/**
 * One ref the remote holds of the policy's, and what the fetch did with the local one.
 * @public
 */
export const FetchRef = Type.Object({
  ref: Type.String({ description: 'The ref, by its full name, the same locally and on the remote.' }),
  class: LiteralUnion(REF_CLASSES, { description: 'Which of the policy\'s classes the ref is of.' }),
  remote: Type.String({ ...ObjectId, description: 'The commit the remote holds the ref at.' }),
  local: Nullable(ObjectId, 'The local ref before the fetch, or null when there was none.'),
  result: FetchOutcome,
  pruned: Type.Optional(Type.Literal(true, { description: "Present when another box pruned this wip chain: the remote's chain is a rewrite whose prune marker names the local tip, so the local ref was moved to it (result fast-forward) and no snapshot the local chain held was left out of the rules the prune applied; or, with aside, a rewrite past what this box held." })),
  aside: Type.Optional(Type.String({ description: "Present when the remote's chain was pruned past what this box held (its prune marker names no tip of this box's), or when this box pruned its chain and another box pushed above what that prune replaced before it went (then without pruned): the local chain was moved whole to this ref (refs/chant/wip-aside/<its tip>), which the next push sends, and the ref took the remote's chain (result fast-forward). Nothing was dropped." })),
});
/**
 * One ref the remote holds of the policy's classes, with the local ref before the fetch and what the fetch did with it.
 * @public
 */
export interface FetchRef {
  /** The ref, by its full name, the same locally and on the remote. */
  ref: string;
  /** Which of the policy's classes the ref is of. */
  class: RefClass;
  /** The commit the remote holds the ref at. */
  remote: string;
  /** The local ref before the fetch, or null when there was none. */
  local: string | null;
  /**
   * created and fast-forward moved the local ref; ahead, diverged and checked-out (a branch checked
   * out in some worktree) left it as it was.
   */
  result: FetchOutcome;
  /**
   * Present when another box pruned this wip chain: the remote's chain is a rewrite whose prune
   * marker names the local tip, so the local ref was moved to it (result fast-forward) and no
   * snapshot the local chain held was left out of the rules the prune applied; or, with aside, a
   * rewrite past what this box held.
   */
  pruned?: true;
  /**
   * Present when the remote's chain was pruned past what this box held (its prune marker names no
   * tip of this box's), or when this box pruned its chain and another box pushed above what that
   * prune replaced before it went (then without pruned): the local chain was moved whole to this
   * ref (refs/chant/wip-aside/\<its tip\>), which the next push sends, and the ref took the
   * remote's chain (result fast-forward). Nothing was dropped.
   */
  aside?: string;
}

/**
 * A ref the remote holds that a fetch could not write locally.
 * @public
 */
export const FetchRefFailure = Type.Object({
  ref: Type.String({ description: 'The ref, by its full name.' }),
  class: LiteralUnion(REF_CLASSES, { description: 'Which of the policy\'s classes the ref is of.' }),
  remote: Type.String({ ...ObjectId, description: 'The commit the remote holds the ref at.' }),
  local: Nullable(ObjectId, 'The local ref, or null when there is none.'),
  reason: Type.String({ description: 'Why the local ref could not be written, in git\'s words (such as another ref whose name is in the way).' }),
});
/**
 * A ref the remote holds that a fetch could not write locally, with the reason.
 * @public
 */
export type FetchRefFailure = Static<typeof FetchRefFailure>;

/**
 * What a push returns.
 * @public
 */
export const PushOutcome = Type.Object({ policy: PolicyDocument, replication: PushResult });
/**
 * What `Replicator.push` (chant-wip) returns, as a TypeScript type.
 * @public
 */
export interface PushOutcome {
  /**
   * The replicate policy the declaration in the working tree states (box.replicate), with every
   * default filled in.
   */
  policy: PolicyDocument;
  /**
   * What one push did. Each ref the remote doesn't hold as it is locally is pushed under its own
   * name, never forced; a pre-push hook is not run.
   */
  replication: PushResult;
}

/**
 * What a fetch returns.
 * @public
 */
export const FetchResult = Type.Object({
  policy: PolicyDocument,
  refs: Type.Array(FetchRef, { description: 'Each ref the remote holds of the policy\'s, sorted by ref, and what the fetch did with the local ref.' }),
  failed: Nullable(
    Type.String(),
    'Why the fetch fell short, or null: the remote could not be fetched from (refs is then worked out from what earlier fetches recorded, and a ref equal to that record is left out, since whether the remote still holds it is not known), its LFS objects could not be, or a ref of chant\'s own bookkeeping could not be written here (the refs were brought all the same).',
  ),
  failedRefs: Type.Optional(
    Type.Array(FetchRefFailure, {
      description:
        'Refs the remote holds that could not be written locally, each with the reason, sorted by ref; they are not in refs. The other refs were brought all the same. Absent or empty when there were none.',
    }),
  ),
});
/**
 * What `Replicator.fetch` (chant-wip) returns, as a TypeScript type.
 * @public
 */
export interface FetchResult {
  /**
   * The replicate policy the declaration in the working tree states (box.replicate), with every
   * default filled in.
   */
  policy: PolicyDocument;
  /**
   * Each ref the remote holds of the policy's, sorted by ref, and what the fetch did with the local
   * ref.
   */
  refs: FetchRef[];
  /**
   * Why the fetch fell short, or null: the remote could not be fetched from (refs is then worked
   * out from what earlier fetches recorded, and a ref equal to that record is left out, since
   * whether the remote still holds it is not known), its LFS objects could not be, or a ref of
   * chant's own bookkeeping could not be written here (the refs were brought all the same).
   */
  failed: string | null;
  /**
   * Refs the remote holds that could not be written locally, each with the reason, sorted by ref;
   * they are not in refs. The other refs were brought all the same. Absent or empty when there were
   * none.
   */
  failedRefs?: FetchRefFailure[];
}

/**
 * The `replicate` block as a declaration author writes it under `members[i].box`: every field
 * optional, defaults filled in when it is read.
 * @public
 */
export const ReplicateDeclaration = Type.Object(
  {
    remote: Type.Optional(Type.String({
      pattern: REMOTE_NAME_PATTERN,
      description: 'The git remote the refs go to, by name, as `git remote` lists it: a letter or digit, then up to 63 letters, digits, dots, underscores or hyphens. Never a URL: the host adds the remote with whatever credential it brokers. origin when absent.',
    })),
    refs: Type.Optional(Type.Array(RefClass, {
      minItems: 1,
      uniqueItems: true,
      description: 'Which refs replicate: work (refs/heads/chant/work/...), kept (refs/chant/kept/...), wip (refs/chant/wip/..., and chains moved aside, refs/chant/wip-aside/...) and ledger (refs/heads/chant/lifecycle). Not empty, each at most once, in any order; read back in this order. All four when absent.',
    })),
    on: Type.Optional(Type.Array(Trigger, {
      uniqueItems: true,
      description: 'When chant pushes on its own: save, after a wip save; release, after a work lease is released. Each at most once, in any order; empty for never. Both when absent.',
    })),
    every: Type.Optional(Type.String({
      pattern: EVERY_PATTERN,
      description: 'How often the host runs wip push: a whole number then s, m or h, such as 10m. Stated for the host\'s scheduler; chant itself never schedules. No schedule when absent.',
    })),
    allow: Type.Optional(Type.Array(Type.String({ pattern: FINDING_ID_PATTERN }), {
      uniqueItems: true,
      description: 'Secret findings acknowledged for good (a test fixture, an example key): their ids, as a push document\'s heldBack lists them (wip push --allow <id> acknowledges one for one push). The snapshots holding only these go; wip save --scan leaves them out of its findings. A changed file is a new finding. None when absent.',
    })),
  },
  {
    additionalProperties: false,
    patternProperties: { [EXTENSION_KEY_PATTERN]: {} },
    description: 'Where a box replicates its work to and when. Keys beginning x- are left to other tools; any other key is refused.',
  },
);
/**
 * A `replicate` block as written in a declaration, before defaults are filled in.
 * @public
 */
export type ReplicateDeclaration = Static<typeof ReplicateDeclaration>;

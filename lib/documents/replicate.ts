import { Type } from 'typebox';
import type { Static } from 'typebox';
import { EVERY_PATTERN, EXTENSION_KEY_PATTERN, FINDING_ID_PATTERN, REMOTE_NAME_PATTERN } from './replicate-rules.js';
import { RefClass, Trigger } from './replication.js';

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

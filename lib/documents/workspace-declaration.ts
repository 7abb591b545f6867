import { Type } from 'typebox';
import { ReplicateDeclaration } from './replication.js';
import { RetainDeclaration } from './retain.js';


const SEMVER = '^(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\\.[0-9A-Za-z-]+)*)?(\\+[0-9A-Za-z-]+(\\.[0-9A-Za-z-]+)*)?$';

// The boxes that declare replicate and retain: at most one member may have each.
const DeclaresReplicate = Type.Object({ box: Type.Object({ replicate: Type.Unknown() }) });
const DeclaresRetain = Type.Object({ box: Type.Object({ retain: Type.Unknown() }) });

/**
 * `chant.workspace.json` (or `.jsonc`) as chant-wip reads it. Refused: a top level that is not an
 * object, a `minReader` that is not a semantic version, `members` that is not an array of
 * objects, a `box` that is not an object, a `replicate` or `retain` that breaks its own schema,
 * a second box with `replicate` or with `retain`. Tolerated: every other key, at every level, left to whoever reads it;
 * an `identity` or `agents` of any shape (what is not as described judges nothing or is skipped).
 * @public
 */
export const WorkspaceDeclaration = Type.Object(
  {
    minReader: Type.Optional(Type.String({
      pattern: SEMVER,
      description: 'The oldest contract a reader must implement, a semantic version such as 0.103.0. One newer than the reader\'s (0.103.0 here) is refused with reader-too-old before anything else is read; anything but a version is declaration-invalid.',
    })),
    identity: Type.Optional(Type.Unknown({
      description: 'identity.attribution "identified" holds wip save --by and wip restore --by to the identity rule, read from the declaration at base (refs/remotes/origin/HEAD, else main, else master). Any other value, or an identity that is not an object, judges nothing.',
      examples: [{ attribution: 'identified' }],
    })),
    agents: Type.Optional(Type.Unknown({
      description: 'The agent sessions: [{name, principals: [..]}]. CHANT_AGENT naming one skips the identity rule, and its principals are identified. Entries that are not objects, or whose principals is not a list of strings, are skipped; anything else here judges nothing.',
      examples: [[{ name: 'hud', principals: ['agent:hud'] }]],
    })),
    wip: Type.Optional(Type.Object(
      {
        maxFileSize: Type.Optional(Type.Union([
          Type.Integer({ minimum: 0 }),
          Type.String({ pattern: '^\\s*[0-9]+(\\.[0-9]+)?\\s*([kKmMgG]([iI]?[bB])?|[bB])?\\s*$' }),
        ], {
          description: 'The size over which wip save leaves a new untracked file out (listing it in unsaved with its size): bytes, or a size such as 512k, 32M or 2G. 32M when absent; wip save --max-file-size and the SDK\'s maxFileSize win over it.',
          examples: ['64M'],
        })),
        saveTimeout: Type.Optional(Type.String({
          pattern: '^\\s*[0-9]+(\\.[0-9]+)?\\s*(ms|s|m|h)?\\s*$',
          description: 'How long wip save may take before it is refused with wip-timeout, writing nothing: a duration such as 90s, 5m or 1h (a bare number is seconds), more than zero. 300s when absent; wip save --deadline and the SDK\'s saveTimeout win over it.',
          examples: ['2m'],
        })),
      },
      { description: 'What chant-wip\'s saves run with. Other keys are left alone.' },
    )),
    members: Type.Optional(Type.Array(
      Type.Object(
        {
          name: Type.Optional(Type.Unknown({ description: 'The member, naming its box in the policy (box). A member without a non-empty string name is called members[i].' })),
          box: Type.Optional(Type.Object(
            { replicate: Type.Optional(ReplicateDeclaration), retain: Type.Optional(RetainDeclaration) },
            { description: 'The member\'s box. chant-wip reads its replicate and retain; other keys are left to chant.' },
          )),
        },
        { description: 'A member of the workspace. chant-wip reads its name and box; other keys are left to chant.' },
      ),
      {
        description: 'The workspace\'s members. At most one box declares replicate, and at most one retain.',
        allOf: [
          { contains: DeclaresReplicate, minContains: 0, maxContains: 1 },
          { contains: DeclaresRetain, minContains: 0, maxContains: 1 },
        ],
      },
    )),
  },
  {
    description: 'Keys other than these are left to chant and its other readers, at every level.',
  },
);

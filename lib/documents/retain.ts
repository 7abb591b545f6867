import { Type } from 'typebox';
import type { Static } from 'typebox';
import { EXTENSION_KEY_PATTERN, KEEP_WITHIN_PATTERN } from './replicate-rules.js';

/**
 * The `retain` block as a declaration author writes it under `members[i].box`: the retention rules
 * `wip prune` applies when given none, and that a save applies when asked (`wip save --prune`) or
 * on every save (`onSave`). At least one rule.
 * @public
 */
export const RetainDeclaration = Type.Object(
  {
    keepLast: Type.Optional(Type.Integer({ minimum: 1, description: 'Keep the newest n snapshots of each chain.' })),
    keepWithin: Type.Optional(Type.String({
      pattern: KEEP_WITHIN_PATTERN,
      description: 'Keep every snapshot taken within this age: a number and s, m, h, d or w, such as 7d.',
    })),
    keepLabelled: Type.Optional(Type.Boolean({ description: 'Keep every snapshot with a label. False when absent.' })),
    onSave: Type.Optional(Type.Boolean({
      description: 'Prune the saved branch\'s chain after every wip save, as wip save --prune does. False when absent: the host prunes with wip prune or wip save --prune.',
    })),
  },
  {
    additionalProperties: false,
    patternProperties: { [EXTENSION_KEY_PATTERN]: {} },
    // A block with no rule would keep only the newest snapshot, which no one declares by accident.
    anyOf: [
      { type: 'object', required: ['keepLast'], properties: { keepLast: {} } },
      { type: 'object', required: ['keepWithin'], properties: { keepWithin: {} } },
      { type: 'object', required: ['keepLabelled'], properties: { keepLabelled: { const: true } } },
    ],
    description: 'Which snapshots a prune keeps: a snapshot stays when any rule keeps it; the newest, and the checkpoint of the last restore (so it can be undone), always stay. At least one of keepLast, keepWithin and keepLabelled: true. Keys beginning x- are left to other tools; any other key is refused.',
  },
);
/**
 * A `retain` block as written in a declaration.
 * @public
 */
export type RetainDeclaration = Static<typeof RetainDeclaration>;

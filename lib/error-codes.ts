// The one list of refusal codes: the error type, the documents' code unions and their schemas
// are derived from it. A module of its own, so the documents read it without loading git.

/**
 * Every code a chant-wip refusal can carry. The first fourteen are the reference contract's; the
 * rest are this project's own (see docs/schemas.md).
 * @public
 */
export const WIP_ERROR_CODES = [
  'not-a-git-repository',
  'declaration-ambiguous',
  'declaration-unparseable',
  'declaration-invalid',
  'reader-too-old',
  'write-usage-invalid',
  'wip-no-branch',
  'wip-none',
  'wip-snapshot-unknown',
  'wip-branch-other',
  'wip-race',
  'wip-policy-none',
  'wip-remote-unknown',
  'principal-unidentified',
  'wip-restore-blocked',
  'git-failed',
  'wip-timeout',
  'internal-error',
  'wip-cancelled',
  'wip-plan-stale',
] as const;

/**
 * The closed union of refusal codes.
 * @public
 */
export type WipErrorCode = (typeof WIP_ERROR_CODES)[number];

/**
 * The codes `wip show`, `wip diff` and a restore plan (`WipStore.show`, `diff`, `plan`) can
 * refuse with, in the order of {@link WIP_ERROR_CODES}.
 * @internal
 */
export const CHANGES_ERROR_CODES = [
  'not-a-git-repository', 'write-usage-invalid', 'wip-no-branch', 'wip-none', 'wip-snapshot-unknown', 'wip-branch-other', 'wip-race', 'wip-restore-blocked', 'git-failed', 'internal-error', 'wip-cancelled',
] as const satisfies readonly WipErrorCode[];

/**
 * The codes the read (`wip`, `WipStore.list`) can refuse with, in the order of
 * {@link WIP_ERROR_CODES}; the writes can refuse with every code.
 * @internal
 */
export const READ_ERROR_CODES = ['not-a-git-repository', 'declaration-ambiguous', 'declaration-unparseable', 'declaration-invalid', 'reader-too-old', 'write-usage-invalid', 'git-failed', 'internal-error', 'wip-cancelled'] as const satisfies readonly WipErrorCode[];

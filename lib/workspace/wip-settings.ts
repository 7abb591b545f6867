// What the workspace declaration sets for saves: the top-level `wip` object. Tolerant like the
// rest of the declaration: keys it does not know are left alone; a value it reads must be right.
import { parseDuration } from '../deadline.js';
import { parseSize } from '../snapshot/left-out.js';
import { isWipError } from '../errors.js';
import { invalid, isObject, readDeclaration, show } from './declaration.js';
import type { Declaration } from './declaration.js';

/**
 * The save settings a workspace declaration states (`wip.maxFileSize`, `wip.saveTimeout`); each absent when it
 * does not state it.
 * @public
 */
export interface WipSettings {
  /** The size in bytes over which a new untracked file is left out of a save. */
  maxFileSize?: number;
  /** How long a save may take, in milliseconds. */
  saveTimeoutMs?: number;
}

/**
 * Reads the `wip` object of the declaration nearest to `cwd`.
 * @param cwd - the working directory
 * @param top - the top of the git checkout
 * @returns the settings stated; empty when there is no declaration or no `wip`
 * @throws WipError `declaration-invalid` naming the field when a value is not what it must be,
 *   and the codes of {@link readDeclaration}
 * @internal
 */
export async function readWipSettings(cwd: string, top: string): Promise<WipSettings> {
  return wipSettingsIn(await readDeclaration(cwd, top));
}

/**
 * The `wip` object of a declaration read already (see {@link readWipSettings}).
 * @internal
 */
export function wipSettingsIn(declaration: Declaration | null): WipSettings {
  const wip = declaration?.root.wip;
  if (declaration === null || wip === undefined) return {};
  if (!isObject(wip)) throw invalid(declaration.where, ['wip'], `must be an object; it is ${show(wip)}`);
  const settings: WipSettings = {};
  if (wip.maxFileSize !== undefined) {
    const value = wip.maxFileSize;
    const bad = () => invalid(declaration.where, ['wip', 'maxFileSize'], `must be a number of bytes or a size such as 512k, 32M or 2G; it is ${show(value)}`);
    if (typeof value !== 'number' && typeof value !== 'string') throw bad();
    try {
      settings.maxFileSize = parseSize(value, 'wip.maxFileSize');
    } catch (error) {
      if (isWipError(error)) throw bad();
      throw error;
    }
  }
  if (wip.saveTimeout !== undefined) {
    const value = wip.saveTimeout;
    const bad = () => invalid(declaration.where, ['wip', 'saveTimeout'], `must be a duration such as 90s, 5m or 1h; it is ${show(value)}`);
    if (typeof value !== 'string') throw bad();
    try {
      settings.saveTimeoutMs = parseDuration(value, 'wip.saveTimeout');
    } catch (error) {
      if (isWipError(error)) throw bad();
      throw error;
    }
  }
  return settings;
}

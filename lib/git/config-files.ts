// The configuration files git reads by default, found as git finds them: what a cache keyed by
// git's configuration, or a rule read from it, has to look at.
import { readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { gitEnvironment } from './runner.js';

/**
 * The configuration files git reads, in its order (the repository's, the worktree's, the global
 * and XDG ones, then the system's unless `GIT_CONFIG_NOSYSTEM`), whether or not they exist.
 * `include` and `includeIf` are the caller's to notice: they name files this list does not hold.
 * @param dirs - the git directory every worktree shares, and this worktree's
 * @param env - the environment git runs in
 * @internal
 */
export function configFiles(dirs: { commonDir: string; gitDir: string }, env: Readonly<Record<string, string | undefined>>): string[] {
  const home = env.HOME ?? homedir();
  const noSystem = env.GIT_CONFIG_NOSYSTEM !== undefined && !/^(?:|0|false|no|off)$/i.test(env.GIT_CONFIG_NOSYSTEM);
  return [
    join(dirs.commonDir, 'config'),
    join(dirs.gitDir, 'config.worktree'),
    env.GIT_CONFIG_GLOBAL ?? join(home, '.gitconfig'),
    join(xdgConfigHome(env), 'git', 'config'),
    ...(noSystem ? [] : [env.GIT_CONFIG_SYSTEM ?? '/etc/gitconfig', '/usr/local/etc/gitconfig', '/opt/homebrew/etc/gitconfig']),
  ];
}

/** `XDG_CONFIG_HOME`, or `~/.config` where it is unset or empty, as git takes it. */
export function xdgConfigHome(env: Readonly<Record<string, string | undefined>>): string {
  return env.XDG_CONFIG_HOME !== undefined && env.XDG_CONFIG_HOME !== '' ? env.XDG_CONFIG_HOME : join(env.HOME ?? homedir(), '.config');
}

/**
 * The attributes files git reads besides the working tree's `.gitattributes`: the repository's
 * `info/attributes`, the global (XDG) one and the system's (git runs with them:
 * `GIT_ATTR_NOSYSTEM` is not passed on, lib/git/runner.ts), whether or not they exist.
 * @param commonDir - the git directory every worktree shares
 * @param env - the environment git runs in
 * @internal
 */
export function attributesFiles(commonDir: string, env: Readonly<Record<string, string | undefined>>): string[] {
  return [join(commonDir, 'info', 'attributes'), join(xdgConfigHome(env), 'git', 'attributes'), '/etc/gitattributes', '/usr/local/etc/gitattributes', '/opt/homebrew/etc/gitattributes'];
}

/**
 * Whether a file's text matches `pattern`: false where it does not exist, true where it exists
 * but cannot be read (the caller cannot tell, and says yes).
 * @internal
 */
export function fileMentions(file: string | Buffer, pattern: RegExp): boolean {
  try {
    // Most files looked at are not there (the system's configuration, a folder's
    // .gitattributes): a look that finds nothing builds no error, which a failed read does, at
    // twice the cost of the look. A restore asks about a hundred such files.
    if (statSync(file, { throwIfNoEntry: false }) === undefined) return false;
    return pattern.test(readFileSync(file, 'latin1'));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code !== 'ENOENT' && code !== 'ENOTDIR';
  }
}

/**
 * Whether any configuration git reads here (given in the environment git runs with, or a file of
 * {@link configFiles}) matches `pattern`, or a file of them cannot be read.
 * @param dirs - the git directory every worktree shares, and this worktree's
 * @param pattern - what to look for
 * @param ambient - the environment chant runs in
 * @internal
 */
export function configMentions(dirs: { commonDir: string; gitDir: string }, pattern: RegExp, ambient: Readonly<Record<string, string | undefined>> = process.env): boolean {
  const env = gitEnvironment({}, ambient);
  for (const [name, value] of Object.entries(env)) {
    if (name.startsWith('GIT_CONFIG') && pattern.test(value)) return true;
  }
  return configFiles(dirs, env).some((file) => fileMentions(file, pattern));
}

/**
 * Whether any configuration git reads here matches `config` (see {@link configMentions}), or an
 * attributes file git reads besides the working tree's (see {@link attributesFiles}) matches
 * `attributes`; a file that exists but cannot be read says yes.
 * @param dirs - the git directory every worktree shares, and this worktree's
 * @param config - what to look for in the configuration
 * @param attributes - what to look for in the attributes files
 * @param ambient - the environment chant runs in
 * @internal
 */
export function configOrAttributesMention(dirs: { commonDir: string; gitDir: string }, config: RegExp, attributes: RegExp, ambient: Readonly<Record<string, string | undefined>> = process.env): boolean {
  if (configMentions(dirs, config, ambient)) return true;
  return attributesFiles(dirs.commonDir, gitEnvironment({}, ambient)).some((file) => fileMentions(file, attributes));
}

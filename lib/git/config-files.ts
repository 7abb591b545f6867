// The configuration files git reads by default, found as git finds them: what a cache keyed by
// git's configuration, or a rule read from it, has to look at.
import { homedir } from 'node:os';
import { join } from 'node:path';

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

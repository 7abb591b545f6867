// The memo of the identity git gives commits (`chant-identity-memo` in the worktree's git
// directory): the author and committer idents of the last snapshot `git commit-tree` wrote, and
// one id of everything git took them from, so that the next snapshot's commit can be written
// without a process, byte for byte as git would write it.
import { createHash } from 'node:crypto';
import { readFileSync, realpathSync, statSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileMentions } from '../git/config-files.js';
import { gitEnvironment } from '../git/runner.js';
import { replaceCacheFile } from './cache-file.js';

/** The memo's file, in the worktree's git directory. */
export const IDENTITY_MEMO_FILE = 'chant-identity-memo';

/** A commit's two idents, `Name <email>`, raw bytes. */
export interface Idents {
  author: Buffer;
  committer: Buffer;
  /**
   * Whether git found them itself (chant's fallback identity not given): then they are also
   * the ident git writes in a reflog line here.
   */
  configured: boolean;
}

/** What git's idents hang on, as one id; `settled` when no file it read changed so lately that a change could hide in its timestamp. */
export interface IdentityInputs {
  key: string;
  settled: boolean;
  /** The configuration files looked at. */
  config: string[];
}

/**
 * Everything git reads to make a commit's idents, as one id: the environment git is run with
 * (the runner's own, so `GIT_AUTHOR_*`, `GIT_COMMITTER_*`, `HOME`, `GIT_CONFIG_*` and the
 * rest), the user and host (git's fallback reads the password entry and the host name), the
 * git binary, and the stat data of every configuration file git would read (system, global,
 * the repository's and the worktree's), absent ones too. Null when it cannot be told: a
 * configuration file that includes others (`[include]`, `[includeIf]`), or one that cannot be
 * looked at.
 * @param layout - the checkout's git directories
 * @param ambient - the environment chant runs in (the runner's source)
 */
export function identityInputs(layout: { gitDir: string; commonDir: string }, ambient: Readonly<Record<string, string | undefined>> = process.env): IdentityInputs | null {
  const env = gitEnvironment({}, ambient);
  const home = env.HOME ?? '';
  const git = gitOnPath(env.PATH ?? '');
  const config = [
    env.GIT_CONFIG_SYSTEM ?? '/etc/gitconfig',
    ...(git === null ? [] : [join(dirname(dirname(git)), 'etc', 'gitconfig')]),
    ...(env.GIT_CONFIG_GLOBAL !== undefined ? [env.GIT_CONFIG_GLOBAL] : [join(env.XDG_CONFIG_HOME ?? join(home, '.config'), 'git', 'config'), join(home, '.gitconfig')]),
    join(layout.commonDir, 'config'),
    join(layout.gitDir, 'config.worktree'),
  ];
  const files = [...config, ...(git === null ? [] : [git]), '/etc/passwd'];
  const hash = createHash('sha256');
  for (const [name, value] of Object.entries(env).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) hash.update(`${name}=${value}\0`);
  let user = '';
  try {
    const info = userInfo();
    user = `${info.uid}:${info.username}`;
  } catch {
    return null;
  }
  hash.update(`\0${hostname()}\0${user}\0`);
  const now = Date.now();
  let settled = true;
  for (const file of files) {
    let stats: ReturnType<typeof statSync>;
    try {
      stats = statSync(file, { bigint: true, throwIfNoEntry: false });
    } catch {
      return null;
    }
    if (stats === undefined) {
      hash.update(`${file}\0-\n`);
      continue;
    }
    const mtimeNs = stats.mtimeNs;
    hash.update(`${file}\0${stats.dev}:${stats.ino}:${stats.size}:${mtimeNs}:${stats.ctimeNs}:${stats.mode}\n`);
    // A change within the file system's timestamp granularity leaves the stat data as it was:
    // a file changed that lately is not trusted yet.
    const age = now - Number(stats.ctimeNs > mtimeNs ? stats.ctimeNs : mtimeNs) / 1e6;
    if (age < (mtimeNs % 1_000_000_000n === 0n ? 2_000 : 100)) settled = false;
  }
  return { key: hash.digest('hex'), settled, config };
}

/** The git binary first on `PATH`, its links resolved (a git built with another prefix than /usr reads its system configuration under that prefix). */
function gitOnPath(path: string): string | null {
  for (const folder of path.split(delimiter)) {
    if (folder.length === 0) continue;
    try {
      return realpathSync(join(folder, 'git'));
    } catch {
      // Not there.
    }
  }
  return null;
}

/** The idents the memo holds for these inputs, or null. */
export function readIdentityMemo(gitDir: string, inputs: IdentityInputs): Idents | null {
  try {
    const memo = JSON.parse(readFileSync(join(gitDir, IDENTITY_MEMO_FILE), 'utf8')) as { key?: unknown; author?: unknown; committer?: unknown; configured?: unknown };
    // A memo of an older chant, which did not say whether git found the idents itself, is learned again.
    if (memo.key !== inputs.key || typeof memo.author !== 'string' || typeof memo.committer !== 'string' || typeof memo.configured !== 'boolean') return null;
    return { author: Buffer.from(memo.author, 'base64'), committer: Buffer.from(memo.committer, 'base64'), configured: memo.configured };
  } catch {
    return null;
  }
}

/**
 * Records the idents git wrote under these inputs, when they are settled and no configuration
 * file git reads includes another (or cannot be read); a memo that cannot be written is only a
 * slower next save.
 */
export async function saveIdentityMemo(gitDir: string, inputs: IdentityInputs, idents: Idents): Promise<void> {
  if (!inputs.settled) return;
  if (inputs.config.some((file) => fileMentions(file, /include/i))) return;
  await replaceCacheFile(join(gitDir, IDENTITY_MEMO_FILE), `${JSON.stringify({ key: inputs.key, author: idents.author.toString('base64'), committer: idents.committer.toString('base64'), configured: idents.configured })}\n`);
}

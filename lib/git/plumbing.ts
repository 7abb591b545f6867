import { existsSync, lstatSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { asWipError, cancelledError, WipError } from '../errors.js';
import { parseBatch } from './formats/batch.js';
import type { GitObject } from './formats/batch.js';
import { parseCommit, splitParents } from './formats/commit.js';
import type { CommitRecord } from './formats/commit.js';
import { looseObject, looseObjectSoon, objectId, readLoose } from './formats/loose.js';
import { indexFileOf } from './formats/index-file.js';
import type { NewIndexEntry } from './formats/index-file.js';
import { OBJ_TREE, packOf } from './formats/pack.js';
import { foldersOnTheWay, treeEntry } from './formats/tree.js';
import { OBJECT_ID } from './formats/object-format.js';
import { quotePath, rawPathText } from './formats/path-text.js';
import { readLooseTreeFolders } from './loose-objects.js';
import { withoutIndex } from './no-index.js';
import { keepLooseObject, placeLooseObject } from './loose-target.js';
import type { LooseTarget } from './loose-target.js';
import { checkoutFromFiles } from './checkout-files.js';
import { GitCommandError } from './runner.js';
import type { GitRunner, GitRunOptions } from './runner.js';

/** Where a checkout's git data lives, as git itself reports it. */
export interface RepositoryLayout {
  /** The top of the working tree. */
  top: string;
  /** This worktree's git directory. */
  gitDir: string;
  /** The git directory shared by every worktree. */
  commonDir: string;
  /** The checkout's index file. */
  indexFile: string;
  /** Where loose objects are kept. */
  objectsDir: string;
  /** `sha1` or `sha256`. */
  objectFormat: string;
}


/** What a save, restore or read starts from: see {@link Plumbing.checkout}. */
export interface Checkout {
  layout: RepositoryLayout;
  /** The full refname HEAD points at; null when detached. */
  headRef: string | null;
  /** The commit HEAD names; null when it names none yet. */
  head: string | null;
  /** That commit's tree; null when there is no commit or git cannot read it. */
  headTree: string | null;
  /** Whether any replace ref exists (git then reads those commits as others). */
  replaced: boolean;
}

/** One ref, with the commit it names read in full. */
export interface RefRecord extends CommitRecord {
  ref: string;
}

/** One path that differs between two trees. */
export interface TreeChange {
  /** The path as documents print it: itself, or in git's C-style quoting when it is not UTF-8 (lib/path-text.ts). */
  path: string;
  /** The path's bytes, one character a byte (as `latin1` decodes them). */
  raw: string;
  oldMode: string;
  newMode: string;
  /** The object the path names before (the zero id when it is added). */
  oldOid: string;
  /** The object the path names after (the zero id when it is deleted). */
  newOid: string;
  /** A added, D deleted, M modified, T type changed. */
  status: string;
}


/** A commit's identity environment, when git has none of its own. */
export const FALLBACK_IDENTITY: Readonly<Record<string, string>> = {
  GIT_AUTHOR_NAME: 'chant',
  GIT_AUTHOR_EMAIL: 'chant@localhost',
  GIT_COMMITTER_NAME: 'chant',
  GIT_COMMITTER_EMAIL: 'chant@localhost',
};

const COMMIT_FIELDS = '%(refname)%00%(objectname)%00%(tree)%00%(parent)%00%(committerdate:unix)%00%(contents)%00';
const LOG_FIELDS = '%H%x00%T%x00%P%x00%ct%x00%B%x00';

/**
 * The environment of a git call on a temporary index (never the checkout's own): the file,
 * `core.splitIndex` off, so that git writes it whole, and the call's own `settings`. Under
 * `core.splitIndex=true` git would split every temporary index it writes and leave a new
 * full-size `sharedindex.<id>` in the git directory each time, for two weeks
 * (`splitIndex.sharedIndexExpire`).
 */
function temporaryIndex(indexFile: string, ...settings: Array<readonly [string, string]>): Record<string, string> {
  const pairs = [['core.splitIndex', 'false'] as const, ...settings];
  const env: Record<string, string> = { GIT_INDEX_FILE: indexFile, GIT_CONFIG_COUNT: String(pairs.length) };
  pairs.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  return env;
}

/** Why a working directory git could not start in is none (it does not exist, or is a file), or null when it is a folder. */
function folderProblem(cwd: string): string | null {
  try {
    return lstatSync(cwd).isDirectory() || statSync(cwd).isDirectory() ? null : 'is not a folder';
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR' ? 'does not exist' : null;
  }
}

/**
 * Intent-named git plumbing for one checkout: the only code that speaks git's language.
 * Everything is NUL-separated where a value could hold a newline, and `--end-of-options`
 * stands before anything a user typed.
 */
export class Plumbing {
  readonly git: GitRunner;
  readonly cwd: string;

  constructor(git: GitRunner, cwd: string) {
    this.git = git;
    this.cwd = cwd;
  }

  /** Runs git, turning its failure into a `git-failed` refusal that carries git's cause: its `error:` and `fatal:` lines. */
  async run(args: readonly string[], options: GitRunOptions = {}): Promise<string> {
    try {
      return (await this.git.run(args, { cwd: this.cwd, ...options })).stdout;
    } catch (error) {
      // A call its caller cancelled is not a broken repository.
      if (options.signal?.aborted === true) throw cancelledError(options.signal);
      throw asWipError(error);
    }
  }

  /** The checkout's layout; `not-a-git-repository` outside a working tree. */
  async layout(): Promise<RepositoryLayout> {
    let out: string;
    try {
      out = (await this.git.run(['rev-parse', ...LAYOUT_ARGS], { cwd: this.cwd })).stdout;
    } catch (error) {
      if (error instanceof GitCommandError && error.exitCode === 128) {
        throw new WipError('not-a-git-repository', `${this.cwd} is not inside the working tree of a git repository: ${error.lastLine}`, { cause: error });
      }
      throw this.#opening(error);
    }
    const layout = parseLayout(out.split('\n'));
    if (layout === null) throw new WipError('not-a-git-repository', `${this.cwd} is not inside the working tree of a git repository`);
    return layout;
  }

  /** The top of the working tree; `not-a-git-repository` outside one. */
  async top(): Promise<string> {
    let top: string;
    try {
      top = (await this.git.run(['rev-parse', '--show-toplevel'], { cwd: this.cwd })).stdout.trim();
    } catch (error) {
      if (error instanceof GitCommandError && error.exitCode === 128) {
        throw new WipError('not-a-git-repository', `${this.cwd} is not inside the working tree of a git repository: ${error.lastLine}`, { cause: error });
      }
      throw this.#opening(error);
    }
    if (top.length === 0) throw new WipError('not-a-git-repository', `${this.cwd} is not inside the working tree of a git repository`);
    return top;
  }

  /**
   * The layout, the commit HEAD names and the ref it points at, in one git process: what every
   * save, restore and read starts with. `headRef` is null for a detached HEAD; `head` is null
   * when HEAD names no commit (a branch with no commit yet).
   */
  async checkout(): Promise<Checkout> {
    // The plain case is read from the checkout's files, as git would print it (lib/git/checkout-files.ts).
    const read = checkoutFromFiles(this.cwd);
    if (read !== null) return read;
    // After the layout, the ids of the replace refs (--glob), ended by the top folder again, then
    // HEAD and HEAD^{tree} (before --symbolic-full-name: the commit and its tree) and HEAD after
    // it (the full refname HEAD points at, "HEAD" when detached). An unborn HEAD fails the call
    // after the replace refs.
    const { stdout, exitCode } = await this.#tolerant(['rev-parse', ...LAYOUT_ARGS, '--glob=refs/replace/*', '--show-toplevel', 'HEAD', 'HEAD^{tree}', '--symbolic-full-name', 'HEAD']);
    const lines = stdout.split('\n');
    const layout = parseLayout(lines);
    const end = layout === null ? -1 : lines.indexOf(layout.top, LAYOUT_LINES);
    if (layout === null || end < 0) {
      await this.layout();
      throw new WipError('git-failed', `git rev-parse printed no layout for ${this.cwd}`);
    }
    const replaced = end > LAYOUT_LINES;
    const [head = '', headTree = '', symbolic = ''] = lines.slice(end + 1);
    // HEAD names a commit whose tree git cannot read (a broken repository): the commit is
    // still HEAD's, and the call that needs its content fails as it would have.
    if (OBJECT_ID.test(head) && (exitCode !== 0 || !OBJECT_ID.test(headTree))) return { layout, head, headTree: null, headRef: await this.symbolicHead(), replaced };
    if (exitCode !== 0 || !OBJECT_ID.test(head)) return { layout, head: null, headTree: null, headRef: await this.symbolicHead(), replaced };
    if (symbolic === 'HEAD') return { layout, headRef: null, head, headTree, replaced };
    // A branch named HEAD makes the name ambiguous and git prints no refname: ask HEAD itself.
    return { layout, headRef: symbolic.startsWith('refs/') ? symbolic : await this.symbolicHead(), head, headTree, replaced };
  }

  async #tolerant(args: readonly string[]): Promise<{ stdout: string; exitCode: number }> {
    try {
      return await this.git.run(args, { cwd: this.cwd, okExitCodes: [128] });
    } catch (error) {
      throw this.#opening(error);
    }
  }

  /** A failure of the first git call, where a working directory that is no folder is the reason, not git. */
  #opening(error: unknown): WipError {
    const problem = error instanceof WipError ? null : folderProblem(this.cwd);
    if (problem !== null) return new WipError('not-a-git-repository', `${this.cwd} ${problem}, so it is not inside the working tree of a git repository`, { cause: error });
    return asWipError(error);
  }

  /** The full refname HEAD points at, or null when HEAD is detached. */
  async symbolicHead(): Promise<string | null> {
    const out = await this.run(['symbolic-ref', '-q', 'HEAD'], { okExitCodes: [1] });
    const ref = out.trim();
    return ref.length > 0 ? ref : null;
  }

  /**
   * Every ref whose name is one of `refs` exactly or, for a prefix ending in `/`, under it, with
   * the commit each names read in full. Refs naming anything but a commit are left out.
   */
  async readRefs(refs: readonly string[]): Promise<RefRecord[]> {
    if (refs.length === 0) return [];
    const out = await this.run(['for-each-ref', `--format=${COMMIT_FIELDS}`, '--end-of-options', ...refs.map((ref) => ref.replace(/\/$/, ''))]);
    const wanted = (name: string) => refs.some((ref) => (ref.endsWith('/') ? name.startsWith(ref) : name === ref));
    const fields = out.split('\0');
    const records: RefRecord[] = [];
    for (let i = 0; i + 6 <= fields.length; i += 6) {
      const ref = (fields[i] as string).replace(/^\n/, '');
      const [commit, tree, parents, committedAt, message] = fields.slice(i + 1, i + 6) as [string, string, string, string, string];
      if (tree === '' || !wanted(ref)) continue;
      records.push({ ref, commit, tree, parents: splitParents(parents), committedAt: Number(committedAt), message });
    }
    return records;
  }

  /**
   * The commit a user's name for one resolves to, read in full, or null when it names no
   * commit. The name reaches git on standard input, never as an argument, so nothing in it can
   * act as an option, and `<name>^{commit}` leaves trees, blobs and ranges unresolved.
   */
  async readNamedCommit(name: string): Promise<CommitRecord | null> {
    if (name.length === 0 || /[\0\n\r]/.test(name)) return null;
    // git dies (128) on some names it cannot resolve, such as @{u} without an upstream: that
    // is a name that names no commit, whatever git's message.
    const out = await this.run(['cat-file', '--batch'], { input: `${name}^{commit}\n`, okExitCodes: [128] });
    const newline = out.indexOf('\n');
    const header = /^([0-9a-f]{40,64}) commit \d+$/.exec(out.slice(0, newline));
    if (header === null) return null;
    // One object was asked for, so its content is everything up to git's closing newline.
    return parseCommit(header[1] as string, out.slice(newline + 1, out.endsWith('\n') ? -1 : undefined));
  }

  /**
   * {@link Plumbing.readNamedCommit} of several names in one git process, in the order asked.
   * When git stops partway (it dies on some names) or the runner does not stream, each name is
   * read on its own instead.
   */
  async readNamedCommits(names: readonly string[]): Promise<Array<CommitRecord | null>> {
    const asked = names.filter((name) => name.length > 0 && !/[\0\n\r]/.test(name));
    const chunks: Buffer[] = [];
    const stdout = asked.length === names.length && names.length > 1
      ? await this.run(['cat-file', '--batch'], { input: names.map((name) => `${name}^{commit}\n`).join(''), okExitCodes: [128], onStdout: (chunk) => chunks.push(chunk) })
      : null;
    const objects = stdout === null || (chunks.length === 0 && stdout.length > 0) ? null : parseBatch(Buffer.concat(chunks), names.length);
    if (objects === null) return Promise.all(names.map((name) => this.readNamedCommit(name)));
    return objects.map((object) => (object === null || object.type !== 'commit' ? null : parseCommit(object.oid, object.content.toString('utf8'))));
  }

  /**
   * Commits on the first-parent chains from `tips`, each read with its message, as git prints
   * them: `next` says, of each commit reached on a chain, which commit the chain goes on to
   * (null: it ends there). git is stopped as soon as every chain has ended, so the walk never
   * descends into the history the chains started from.
   */
  async readFirstParentChains(tips: readonly string[], next: (record: CommitRecord) => string | null): Promise<void> {
    if (tips.length === 0) return;
    const awaited = new Set(tips);
    // Of the commits git printed, only the ids are kept, and whole only those no chain had
    // reached yet: git prints by date, so with clocks out of step a commit a chain goes on to
    // can come before the commit that leads to it, on the way from another tip.
    const printed = new Set<string>();
    const early = new Map<string, CommitRecord>();
    const reach = (first: CommitRecord): void => {
      for (let record: CommitRecord | undefined = first; record !== undefined;) {
        const following = next(record);
        record = undefined;
        if (following === null) return;
        record = early.get(following);
        if (record !== undefined) early.delete(following);
        else if (!printed.has(following)) awaited.add(following);
      }
    };
    const stop = new AbortController();
    // Each commit is five NUL-terminated fields and -z's NUL after them. They are parsed as the
    // output arrives, so that ten thousand snapshots are read while git still writes them.
    const decoder = new StringDecoder('utf8');
    const fields: string[] = [];
    let rest = '';
    const take = (text: string, final: boolean): void => {
      if (stop.signal.aborted) return;
      const parts = (rest + text).split('\0');
      rest = final ? '' : (parts.pop() as string);
      for (const part of parts) {
        fields.push(part);
        if (fields.length < 6) continue;
        const [commit, tree, parents, committedAt, message] = fields as [string, string, string, string, string];
        fields.length = 0;
        if (commit === '') continue;
        printed.add(commit);
        const record: CommitRecord = { commit, tree, parents: splitParents(parents), committedAt: Number(committedAt), message };
        if (!awaited.delete(commit)) {
          early.set(commit, record);
          continue;
        }
        reach(record);
        if (awaited.size === 0) {
          stop.abort();
          return;
        }
      }
    };
    let streamed = false;
    let stdout = '';
    try {
      // --encoding: each message in UTF-8 whatever the commit declares and i18n.logOutputEncoding says.
      stdout = await this.run(['log', '--first-parent', '-z', '--encoding=UTF-8', `--format=${LOG_FIELDS}`, ...tips, '--'], {
        signal: stop.signal,
        onStdout: (chunk) => {
          streamed = true;
          take(decoder.write(chunk), false);
        },
      });
    } catch (error) {
      if (!stop.signal.aborted) throw error;
    }
    // A runner that does not stream (onStdout is optional) still hands over the whole output.
    take(streamed ? decoder.end() : stdout, true);
  }

  /**
   * Stages the whole working tree, ignored files left out, into `indexFile`, but the paths in
   * `exclude`; with `tracked`, only the files the index tracks (`add --update`, which never walks
   * the tree for new files). `--sparse` (git 2.34) takes files outside a sparse checkout's cone
   * too, where plain `add --all` would fail; entries marked skip-worktree keep the index's content
   * and their bit. `--ignore-errors` stages every file it can when one cannot be read (it cannot
   * be opened, or is a FIFO, socket or device at a tracked path), or is a repository without a
   * commit, and names each on standard error; git still stops whole when a file it listed is
   * gone before it is read, naming it.
   * @returns the paths git could not stage, with why (empty when it staged everything)
   * @throws {@link StagingStopped} when git stopped on a file that vanished, and a `git-failed`
   *   {@link WipError} for any failure that is not one path's
   */
  async addAll(top: string, indexFile: string, exclude: readonly string[] = [], options: GitRunOptions = {}, tracked = false): Promise<StagingProblem[]> {
    const args = ['add', tracked ? '--update' : '--all', '--sparse', '--ignore-errors'];
    const run: GitRunOptions = { ...options, cwd: top, env: temporaryIndex(indexFile, ['core.safecrlf', 'false']) };
    if (exclude.length > 0) {
      args.push('--pathspec-from-file=-', '--pathspec-file-nul');
      run.input = ['.', ...exclude.map((path) => `:(exclude,literal)${path}`)].map((spec) => `${spec}\0`).join('');
    }
    try {
      await this.git.run(args, run);
      return [];
    } catch (error) {
      if (!(error instanceof GitCommandError) || error.stopped !== null) throw asWipError(error);
      const problems = stagingProblems(error.stderr);
      if (problems.unexplained) {
        // Not a path's fault (objects that cannot be written, a corrupt index): git's own
        // failure, as it says it without --ignore-errors, whose errors end in one fatal line.
        await this.run(args.filter((arg) => arg !== '--ignore-errors'), run);
        throw asWipError(error);
      }
      if (error.exitCode === 1 && problems.named.length > 0 && problems.stopped === null) return problems.named;
      if (error.exitCode === 128 && problems.stopped !== null) throw new StagingStopped(problems.stopped, problems.named);
      throw asWipError(error);
    }
  }

  /**
   * Stages exactly `paths` (files, and repositories inside this one, from
   * {@link Plumbing.untrackedFiles}: each path's bytes, one character a byte) into `indexFile`, walking nothing: `update-index --add
   * --remove`, for which a path already gone is no entry, never an error. It applies the
   * attributes' filters as `git add` does. It stops whole on a path it cannot take (a file gone
   * in the instant between git's look at it and its read, one it cannot read, a FIFO, a
   * repository without a commit), naming it.
   * @throws {@link StagingStopped} naming that path, and a `git-failed` {@link WipError} for any
   *   failure that is not one path's
   */
  async addListed(top: string, indexFile: string, paths: readonly string[], options: GitRunOptions = {}): Promise<void> {
    if (paths.length === 0) return;
    const run: GitRunOptions = { ...options, cwd: top, env: temporaryIndex(indexFile, ['core.safecrlf', 'false']), input: Buffer.from(paths.map((path) => `${path}\0`).join(''), 'latin1') };
    try {
      await this.git.run(['update-index', '--add', '--remove', '-z', '--stdin'], run);
    } catch (error) {
      if (!(error instanceof GitCommandError) || error.stopped !== null) throw asWipError(error);
      const stopped = listedProblem(error.stderr, (path) => existsSync(join(top, path, '.git')));
      if (error.exitCode === 128 && stopped !== null) throw new StagingStopped(stopped, []);
      throw asWipError(error);
    }
  }

  /**
   * Writes the entries of `entries` into `indexFile` anew, with the mode and object it holds for
   * them and no stat data: git then takes each as changed rather than read its file to know it
   * is not, as it does for a racily clean entry (one as new as the index) whatever the pathspec
   * leaves out, and whenever it writes the index.
   * @throws {@link StagingStopped} naming another racily clean file whose conversion failed as
   *   git wrote the index, and a `git-failed` {@link WipError} for any other failure
   */
  async forgetStat(top: string, indexFile: string, entries: ReadonlyArray<{ path: string; mode: string; oid: string }>, options: GitRunOptions = {}): Promise<void> {
    const input = entries.map((entry) => `${entry.mode} ${entry.oid} 0\t${entry.path}\0`).join('');
    try {
      await this.git.run(['update-index', '-z', '--index-info'], { ...options, cwd: top, env: temporaryIndex(indexFile, ['core.safecrlf', 'false']), input });
    } catch (error) {
      if (!(error instanceof GitCommandError) || error.stopped !== null) throw asWipError(error);
      const path = conversionFailed(error.stderr);
      if (path !== null) throw new StagingStopped({ path, reason: 'unreadable' }, []);
      throw asWipError(error);
    }
  }

  /**
   * The untracked files of the working tree, ignored ones left out, as `git add --all` would
   * find them (every file, not folders), by the index `indexFile`. Each path is its bytes, one
   * character a byte (as `latin1` decodes them), so a name that is not UTF-8 can be handed back
   * to git as it is.
   */
  async untrackedFiles(top: string, indexFile: string, options: GitRunOptions = {}): Promise<string[]> {
    const chunks: Buffer[] = [];
    const stdout = await this.run(['ls-files', '-z', '--others', '--exclude-standard'], { ...options, cwd: top, env: temporaryIndex(indexFile), onStdout: (chunk) => chunks.push(chunk) });
    // A runner that does not stream hands over text only: names that are not UTF-8 are lost there.
    const out = chunks.length === 0 ? Buffer.from(stdout, 'utf8').toString('latin1') : Buffer.concat(chunks).toString('latin1');
    return out.split('\0').filter((path) => path.length > 0);
  }

  /**
   * Rewrites a split index (see `isSplitIndex`) as a whole one, its shared index's entries merged
   * in, so that reading the file gives every entry. Only `indexFile` is written (by git's lock
   * and rename): the shared index and the checkout's own index are left as they are.
   */
  async unsplitIndex(top: string, indexFile: string, options: GitRunOptions = {}): Promise<void> {
    await this.run(['update-index', '--no-split-index'], { ...options, cwd: top, env: temporaryIndex(indexFile) });
  }

  /**
   * The type and size of each object, read in one git call.
   * @returns oid -> `{type, size}`, or null for an object the repository does not have
   */
  async objectInfo(oids: readonly string[]): Promise<Map<string, { type: string; size: number } | null>> {
    const info = new Map<string, { type: string; size: number } | null>();
    const asked = [...new Set(oids)];
    if (asked.length === 0) return info;
    const out = await this.run(['cat-file', '--batch-check=%(objectname) %(objecttype) %(objectsize)'], { input: asked.map((oid) => `${oid}\n`).join('') });
    const lines = out.split('\n');
    for (const [index, oid] of asked.entries()) {
      const [name, type, size] = (lines[index] ?? '').split(' ');
      info.set(oid, name === oid && type !== undefined && type !== 'missing' && size !== undefined ? { type, size: Number(size) } : null);
    }
    return info;
  }

  /**
   * How the working tree and the index differ from HEAD, as `git status` sees them (porcelain
   * v2, NUL-separated, every untracked file listed, renames not followed, a submodule reported
   * only when the commit it is at moved), read without refreshing or writing the index.
   * `stderr`, when given, receives what git said beside it, line by line (see unreadableInWalk).
   * `indexFile`, when given, is the index status reads instead of the checkout's (see
   * lib/store/status-index.ts).
   */
  async status(top: string, stderr?: string[], indexFile?: string): Promise<string | null> {
    try {
      return (await this.git.run(['status', '--porcelain=v2', '-z', '--untracked-files=all', '--branch', '--no-ahead-behind', '--no-renames', '--ignore-submodules=dirty'], {
        cwd: top,
        env: { GIT_OPTIONAL_LOCKS: '0', ...(indexFile === undefined ? {} : { GIT_INDEX_FILE: indexFile }) },
        ...(stderr === undefined ? {} : { onStderr: (line: string) => stderr.push(line) }),
      })).stdout;
    } catch (error) {
      // A racily clean file git reads again to know it is unchanged, through a clean filter that fails.
      if (error instanceof GitCommandError && error.stopped === null && conversionFailed(error.stderr) !== null) return null;
      throw asWipError(error);
    }
  }

  /**
   * What {@link status} says of the working tree against the index `indexFile`, without its
   * comparison of the index with HEAD: `git diff-files` (raw, NUL-separated, a submodule
   * reported only when the commit it is at moved) and `git ls-files --others --exclude-standard`
   * (every untracked file), run side by side, neither refreshing nor writing the index. Their
   * outputs as status's is read (text), or null where a clean filter failed, as for status.
   * `stderr` receives what both said, line by line (see unreadableInWalk).
   */
  async worktreeAgainstIndex(top: string, stderr: string[], indexFile: string): Promise<{ changes: string; untracked: string } | null> {
    const options = { cwd: top, env: { GIT_OPTIONAL_LOCKS: '0', GIT_INDEX_FILE: indexFile }, onStderr: (line: string) => stderr.push(line) };
    try {
      const [changes, untracked] = await Promise.all([
        this.git.run(['diff-files', '-z', '--ignore-submodules=dirty'], options),
        this.git.run(['ls-files', '-z', '--others', '--exclude-standard'], options),
      ]);
      return { changes: changes.stdout, untracked: untracked.stdout };
    } catch (error) {
      if (error instanceof GitCommandError && error.stopped === null && conversionFailed(error.stderr) !== null) return null;
      throw asWipError(error);
    }
  }

  /**
   * Objects read whole in one git call, by any name `cat-file --batch` resolves (an id, a ref,
   * `<commit>:<path>`), in the order asked: null for a name that resolves to nothing. Names
   * must not hold a newline. Null as a whole when the runner does not stream its output, since
   * tree objects are binary and a decoded string cannot hold them.
   */
  async readObjects(names: readonly string[]): Promise<Array<GitObject | null> | null> {
    const chunks: Buffer[] = [];
    const stdout = await this.run(['cat-file', '--batch'], { input: names.map((name) => `${name}\n`).join(''), onStdout: (chunk) => chunks.push(chunk) });
    if (chunks.length === 0 && stdout.length > 0) return null;
    return parseBatch(Buffer.concat(chunks), names.length);
  }

  /**
   * Writes each file (a path from `top`) as a blob, through the clean filters its attributes
   * name, as `git add` would, and returns the ids in order. Paths must not hold a newline, end
   * in a carriage return or start with a double quote.
   */
  async hashFiles(top: string, paths: readonly string[]): Promise<string[]> {
    if (paths.length === 0) return [];
    const out = await this.run(['hash-object', '-w', '--stdin-paths'], { cwd: top, env: NO_SAFECRLF, input: paths.map((path) => `${path}\n`).join('') });
    return out.split('\n').filter((line) => line.length > 0);
  }

  /**
   * Whether the object is on disk as a loose object: what an earlier write left, read straight
   * from the object folder's layout. False says nothing (it may be packed); true is certain, as
   * git only ever moves a whole loose object into place.
   */
  hasLooseObject(objectsDir: string, oid: string): boolean {
    return existsSync(join(objectsDir, oid.slice(0, 2), oid.slice(2)));
  }

  /** Whether the object is on disk as a loose object, refreshed as git would: see {@link keepLooseObject}. */
  keepLooseObject(objectsDir: string, oid: string): boolean {
    return keepLooseObject(objectsDir, oid);
  }

  /**
   * Writes an object as a loose object without a process, as git's own write does (see
   * {@link placeLooseObject}); nothing is written when it is there loose already.
   * @returns the object's id
   * @throws the file system's error when the object cannot be written
   */
  writeLooseObject(target: LooseTarget, type: string, content: Buffer, objectFormat: string): string {
    const { oid, file } = looseObject(type, content, objectFormat);
    placeLooseObject(target, oid, file);
    return oid;
  }

  /** A loose object's type and content, read without a process; null when it is not there loose or does not read. */
  readLooseObject(objectsDir: string, oid: string): { type: string; content: Buffer } | null {
    let file: Buffer;
    try {
      file = readFileSync(join(objectsDir, oid.slice(0, 2), oid.slice(2)));
    } catch {
      return null;
    }
    return readLoose(file);
  }

  /**
   * Writes tree objects, given whole, as loose objects without a process (see
   * {@link Plumbing.writeLooseObject}), the large ones compressed side by side on the thread
   * pool. Where one cannot be written, git writes them all in one call: a pack of them, undeltified, that
   * `unpack-objects` stores as loose objects, checking the pack's checksum; the ids are the
   * caller's own, computed from the same bytes. A process less a save: 10 to 15 ms of a spawn
   * from Node with a save's memory, where compressing 8 trees of 200 KB takes 25 ms of one
   * core at git's level 1 (40,000 files in 8 wide folders).
   */
  async writeTrees(bodies: readonly Buffer[], objectFormat: string, target?: LooseTarget): Promise<void> {
    if (bodies.length === 0) return;
    if (target !== undefined) {
      try {
        const objects = await Promise.all(bodies.map((body) => looseObjectSoon('tree', body, objectFormat)));
        for (const { oid, file } of objects) placeLooseObject(target, oid, file);
        return;
      } catch {
        // git writes them, or says why it cannot.
      }
    }
    await this.run(['unpack-objects', '-q'], { input: packOf(bodies, OBJ_TREE, objectFormat) });
  }

  /** Writes the tree `indexFile` holds. */
  async writeTree(indexFile: string): Promise<string> {
    return (await this.run(['write-tree'], { env: temporaryIndex(indexFile) })).trim();
  }

  /**
   * Writes a commit of `tree` with `parents`, never signed and through no hook, as git's
   * configured identity or, when git has none, {@link FALLBACK_IDENTITY} (`fallback`).
   */
  async commitTree(tree: string, parents: readonly string[], message: string, env: Readonly<Record<string, string>> = {}): Promise<{ commit: string; fallback: boolean }> {
    const args = ['commit-tree', '--no-gpg-sign', ...parents.flatMap((parent) => ['-p', parent]), '-F', '-', tree];
    // The message is UTF-8, and says so by having no encoding header, whatever
    // i18n.commitEncoding the user set (git would otherwise label these bytes with it).
    const utf8 = { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'i18n.commitEncoding', GIT_CONFIG_VALUE_0: 'UTF-8', ...env };
    try {
      return { commit: (await this.git.run(args, { cwd: this.cwd, input: message, env: utf8 })).stdout.trim(), fallback: false };
    } catch (error) {
      if (!(await this.identityMissing(env))) throw asWipError(error);
    }
    return { commit: (await this.run(args, { input: message, env: { ...FALLBACK_IDENTITY, ...utf8 } })).trim(), fallback: true };
  }

  private async identityMissing(env: Readonly<Record<string, string>>): Promise<boolean> {
    for (const name of ['GIT_AUTHOR_IDENT', 'GIT_COMMITTER_IDENT']) {
      try {
        await this.git.run(['var', name], { cwd: this.cwd, env });
      } catch {
        return true;
      }
    }
    return false;
  }

  /**
   * Moves `ref` to `next` only if it still names `expected` (null: only if it does not exist),
   * creating its reflog. Resolves false when another writer moved it first.
   */
  async updateRefCas(ref: string, next: string, expected: string | null, reason: string): Promise<boolean> {
    const old = expected ?? '0'.repeat(next.length);
    try {
      await this.git.run(['update-ref', '--create-reflog', '-m', reason, '--end-of-options', ref, next, old], { cwd: this.cwd });
      return true;
    } catch (error) {
      const now = await this.refTip(ref);
      if (now !== expected) return false;
      throw asWipError(error);
    }
  }

  /**
   * Moves refs to other names in one transaction, each by compare-and-swap on the commit it
   * names, with a reflog on the new name: nothing is deleted that is not kept under another name.
   */
  async moveRefs(moves: ReadonlyArray<{ from: string; to: string; commit: string }>, reason: string): Promise<void> {
    if (moves.length === 0) return;
    const input = moves.map(({ from, to, commit }) => `update ${to}\0${commit}\0\0delete ${from}\0${commit}\0`).join('');
    await this.run(['update-ref', '--create-reflog', '-m', reason, '-z', '--stdin'], { input });
  }

  /** The commit a full refname names, or null. */
  async refTip(ref: string): Promise<string | null> {
    const out = await this.run(['for-each-ref', '--format=%(objectname)%00%(refname)', '--end-of-options', ref]);
    for (const line of out.split('\n')) {
      const [oid, name] = line.split('\0');
      if (name === ref && oid) return oid;
    }
    return null;
  }

  /**
   * Every path that differs between two trees, recursively, renames not followed. Paths are
   * read as bytes, so names that are not UTF-8 stay distinct and exact. `indexless`: git is
   * pointed at an index that is not there ({@link withoutIndex}) instead of the checkout's.
   */
  async diffTrees(from: string, to: string, indexless = false): Promise<TreeChange[]> {
    const chunks: Buffer[] = [];
    // git reads the whole index before it compares two trees (100,000 entries: most of its
    // time); pointed at an index file that is not there, it reads none.
    const env = indexless ? { env: withoutIndex() } : {};
    const stdout = await this.run(['diff-tree', '-r', '-z', '--no-renames', '--no-commit-id', from, to], { ...env, onStdout: (chunk) => chunks.push(chunk) });
    // A runner that does not stream hands over text only: names that are not UTF-8 are lost there.
    const out = chunks.length === 0 ? Buffer.from(stdout, 'utf8').toString('latin1') : Buffer.concat(chunks).toString('latin1');
    const fields = out.split('\0');
    const changes: TreeChange[] = [];
    for (let i = 0; i + 1 < fields.length; i += 2) {
      const [oldMode, newMode, oldOid, newOid, status] = (fields[i] as string).replace(/^:/, '').split(' ') as [string, string, string, string, string];
      const raw = fields[i + 1] as string;
      changes.push({ path: rawPathText(raw), raw, oldMode, newMode, oldOid, newOid, status });
    }
    return changes;
  }

  /**
   * Moves the working tree from `from` to `to` through `indexFile`, which must hold `from` as
   * the working tree has it: git's own checkout, with its path checks. Without
   * `--no-sparse-checkout`, a sparse checkout's patterns would be applied again on the way,
   * deleting files outside the cone that the move does not otherwise touch.
   */
  async switchTree(top: string, indexFile: string, from: string, to: string): Promise<void> {
    // Never into a submodule, whatever submodule.recurse says: its working tree is in no snapshot.
    await this.run(['read-tree', '-m', '-u', '--no-sparse-checkout', '--no-recurse-submodules', from, to], { cwd: top, env: temporaryIndex(indexFile) });
  }

  /**
   * Puts a working tree that a failed {@link Plumbing.switchTree} from `from` to `to` left
   * anywhere between the two back to `from`: through a fresh index holding `to`, a two-tree
   * reset from `to` to `from` rewrites every path the two differ in whatever is on disk there,
   * removes what only `to` holds, and leaves every other path alone.
   */
  async switchTreeBack(top: string, indexFile: string, from: string, to: string): Promise<void> {
    await this.run(['read-tree', '--no-sparse-checkout', to], { cwd: top, env: temporaryIndex(indexFile) });
    await this.run(['read-tree', '--reset', '-u', '--no-sparse-checkout', '--no-recurse-submodules', to, from], { cwd: top, env: temporaryIndex(indexFile) });
  }

  /**
   * Writes the files of `tree` at `raws` (byte strings) into `staging`, an empty folder, as git's
   * checkout writes them (filters, end-of-line conversion, modes, symlinks), through `indexFile`,
   * which is made to hold `tree`. The attributes are the tree's own: `staging` is the work tree
   * git reads them from, then the index.
   */
  async checkoutInto(gitDir: string, indexFile: string, tree: string, staging: string, raws: readonly string[]): Promise<void> {
    await this.run(['read-tree', tree], { env: temporaryIndex(indexFile) });
    const input = Buffer.concat(raws.map((raw) => Buffer.from(`${raw}\0`, 'latin1')));
    await this.run(['checkout-index', '-z', '--stdin'], { cwd: staging, input, env: { GIT_DIR: gitDir, GIT_WORK_TREE: staging, ...temporaryIndex(indexFile) } });
  }

  /**
   * Writes the files `entries` name (paths of `tree`, byte strings, with their modes and
   * objects) into `staging`, an empty folder, as git's checkout writes them (filters,
   * end-of-line conversion, modes, symlinks), through `indexFile`, which is replaced (never written in place) by one holding
   * them and the `.gitattributes` files `tree` has in every folder on their way, and nothing
   * else: no index of the whole tree is written. The attributes are the tree's own, as
   * {@link Plumbing.checkoutInto} reads them. The trees are read from their loose files in
   * `objectsDir` when it is given (null where a replace ref may stand for one) and they are all
   * there; else by git. A folder git cannot be asked for by name (one holding a newline), or a
   * runner that cannot hand over tree objects, makes it fall back to {@link Plumbing.checkoutInto}.
   * `attributesTree`, when given, is the tree whose `.gitattributes` are taken instead of `tree`'s
   * (the fallback takes `tree`'s), less those `skipAttributes` names; a `.gitattributes` among
   * `entries` is always the one taken.
   */
  async checkoutPaths(gitDir: string, indexFile: string, tree: string, staging: string, entries: readonly NewIndexEntry[], objectFormat: string, objectsDir: string | null = null, attributesTree: string = tree, skipAttributes: ReadonlySet<string> = new Set()): Promise<void> {
    const list = foldersOnTheWay(entries.map((entry) => entry.raw));
    // The trees of a snapshot chant wrote are loose: read without a process where they are.
    const loose = objectsDir === null ? null : readLooseTreeFolders(objectsDir, attributesTree, list, objectFormat, true);
    const trees = loose ?? (list.some((folder) => folder.includes('\n')) ? null : await this.#readRawNames(list.map((folder) => (folder === '' ? attributesTree : `${attributesTree}:${folder}`))));
    if (trees === null) {
      await this.checkoutInto(gitDir, indexFile, tree, staging, entries.map((entry) => entry.raw));
      return;
    }
    const held = new Set(entries.map((entry) => entry.raw));
    const attributes: NewIndexEntry[] = [];
    for (const [index, folder] of list.entries()) {
      const object = trees[index];
      if (object === null || object === undefined || object.type !== 'tree') continue;
      const found = treeEntry(object.content, '.gitattributes', objectFormat);
      const raw = folder === '' ? '.gitattributes' : `${folder}/.gitattributes`;
      if (found !== null && found.mode !== '40000' && found.mode !== '160000' && !held.has(raw) && !skipAttributes.has(raw)) attributes.push({ raw, mode: found.mode, oid: found.oid });
    }
    writeIndexFile(indexFile, indexFileOf([...entries, ...attributes], objectFormat));
    const input = Buffer.concat(entries.map((entry) => Buffer.from(`${entry.raw}\0`, 'latin1')));
    await this.run(['checkout-index', '-z', '--stdin'], { cwd: staging, input, env: { GIT_DIR: gitDir, GIT_WORK_TREE: staging, ...temporaryIndex(indexFile) } });
  }

  /**
   * Whether the files of the working tree at `entries` still hold what `entries` say, as `git
   * diff` compares them: through the same filters as git add, a file whose stat data differs read
   * again. Compared through `indexFile`, a small index of just those entries that is written
   * there and never refreshed (optional locks off); the caller removes it.
   */
  async filesHold(top: string, indexFile: string, entries: readonly NewIndexEntry[], objectFormat: string): Promise<boolean> {
    if (entries.length === 0) return true;
    writeIndexFile(indexFile, indexFileOf(entries, objectFormat));
    try {
      const { exitCode } = await this.git.run(['diff', '--quiet', '--no-ext-diff', '--no-textconv', '--ignore-submodules'], { cwd: top, env: { ...temporaryIndex(indexFile), GIT_OPTIONAL_LOCKS: '0' }, okExitCodes: [1] });
      return exitCode === 0;
    } catch (error) {
      throw asWipError(error);
    }
  }

  /**
   * Which of `raws` (byte strings, paths from the top) the ignore rules of a work tree at
   * `workTree` ignore: its `.gitignore` files with the repository's own (`info/exclude`,
   * `core.excludesFile`), as `git check-ignore --no-index` reads them, looking in no index (a
   * path counts whether or not an index tracks it). `workTree` need hold only those files.
   */
  async ignoredPaths(gitDir: string, workTree: string, raws: readonly string[]): Promise<Set<string>> {
    if (raws.length === 0) return new Set();
    const chunks: Buffer[] = [];
    // check-ignore reads each path as a pathspec, whose magic (`:(glob)x`, `:!x`, `:/x`) it
    // refuses or applies; a path that starts with a colon is given after `./`, which it echoes.
    const input = Buffer.concat(raws.map((raw) => Buffer.from(`${raw.startsWith(':') ? './' : ''}${raw}\0`, 'latin1')));
    let stdout: string;
    try {
      ({ stdout } = await this.git.run(['check-ignore', '--no-index', '-z', '--stdin'], { cwd: workTree, input, env: { GIT_DIR: gitDir, GIT_WORK_TREE: workTree }, okExitCodes: [1], onStdout: (chunk) => chunks.push(chunk) }));
    } catch (error) {
      throw asWipError(error);
    }
    // A runner that does not stream hands over text only: names that are not UTF-8 are lost there.
    const out = chunks.length === 0 ? Buffer.from(stdout, 'utf8').toString('latin1') : Buffer.concat(chunks).toString('latin1');
    return new Set(out.split('\0').filter((raw) => raw !== '').map((raw) => (raw.startsWith('./:') ? raw.slice(2) : raw)));
  }

  /** Objects read whole by names given as byte strings (one character a byte), as {@link Plumbing.readObjects}. */
  async #readRawNames(names: readonly string[]): Promise<Array<GitObject | null> | null> {
    const chunks: Buffer[] = [];
    const stdout = await this.run(['cat-file', '--batch'], { input: Buffer.from(names.map((name) => `${name}\n`).join(''), 'latin1'), onStdout: (chunk) => chunks.push(chunk) });
    if (chunks.length === 0 && stdout.length > 0) return null;
    return parseBatch(Buffer.concat(chunks), names.length);
  }

  /**
   * Why {@link Plumbing.resetIndex} to `treeish` would fail (git's message), or null when it
   * would not: `git read-tree -n --reset`, which writes nothing.
   */
  async resetIndexRefusal(top: string, treeish: string): Promise<string | null> {
    try {
      await this.git.run(['read-tree', '-n', '--reset', '--no-recurse-submodules', treeish], { cwd: top });
      return null;
    } catch (error) {
      if (error instanceof GitCommandError && error.exitCode === 128) return error.lastLine;
      throw asWipError(error);
    }
  }

  /**
   * The paths of the checkout's index entries under a flag (skip-worktree, assume-unchanged), as
   * byte strings (one character a byte), as `git ls-files -v` tags them: whatever the index's
   * version, split or not.
   */
  async flaggedPaths(top: string): Promise<Set<string>> {
    const chunks: Buffer[] = [];
    await this.run(['ls-files', '-z', '-v'], { cwd: top, onStdout: (chunk) => chunks.push(chunk) });
    const flagged = new Set<string>();
    // "<tag> <path>": S for skip-worktree, a lowercase tag for assume-unchanged.
    for (const record of Buffer.concat(chunks).toString('latin1').split('\0')) {
      if (record.length > 2 && (record[0] === 'S' || /^[a-z]$/.test(record[0] as string))) flagged.add(record.slice(2));
    }
    return flagged;
  }

  /** Resets the checkout's index to `treeish`, keeping the stat data of entries whose content is unchanged. */
  async resetIndex(top: string, treeish: string): Promise<void> {
    await this.run(['read-tree', '--reset', '--no-recurse-submodules', treeish], { cwd: top });
  }

  /**
   * Marks the files at `paths` (byte strings, one character a byte, from `top`) intent-to-add
   * in the checkout's index, as `git add -N` does, each taken literally and ignored or not.
   */
  async addIntentToAdd(top: string, paths: readonly string[]): Promise<void> {
    if (paths.length === 0) return;
    const input = Buffer.from(paths.map((path) => `:(literal)${path}\0`).join(''), 'latin1');
    await this.run(['add', '--intent-to-add', '--force', '--pathspec-from-file=-', '--pathspec-file-nul'], { cwd: top, input });
  }

  /**
   * The tree an index file holds, written through `scratch`, a hard link of it (or a copy):
   * git updates the cache tree of the index it writes a tree from, and so writes the link, never
   * the checkout's index file.
   */
  async indexTree(scratch: string): Promise<string> {
    return (await this.run(['write-tree'], { env: temporaryIndex(scratch) })).trim();
  }

  /**
   * The ids the files at `raws` (byte strings, paths from `top`) have as they are on disk, no
   * filter or end-of-line conversion applied, written nowhere, one a path in order (a path
   * holding a newline goes to git quoted: see stdinPaths). Given the object format, a
   * few regular files are hashed here, as `hash-object --no-filters` hashes them, without the
   * process (a restore asks this of the files it overwrites).
   */
  async hashRaw(top: string, raws: readonly string[], objectFormat: string | null = null): Promise<string[]> {
    if (raws.length === 0) return [];
    const known = objectFormat === null ? null : rawIdsInProcess(top, raws, objectFormat);
    if (known !== null) return known;
    const out = await this.run(['hash-object', '--no-filters', '--stdin-paths'], { cwd: top, input: stdinPaths(raws) });
    return out.split('\n').filter((line) => line.length > 0);
  }

  /**
   * Writes the blobs of the files at `raws` (byte strings, paths from `top`) as they are on disk,
   * no filter or end-of-line conversion applied (`git hash-object -w --no-filters`): with the
   * permissions git gives its objects and their folders, which a repository's configuration may
   * make its own (`core.sharedRepository`).
   * @returns each file's blob id
   */
  async writeRaw(top: string, raws: readonly string[]): Promise<string[]> {
    if (raws.length === 0) return [];
    const out = await this.run(['hash-object', '-w', '--no-filters', '--stdin-paths'], { cwd: top, input: stdinPaths(raws) });
    return out.split('\n').filter((line) => line.length > 0);
  }
}

/**
 * Paths (byte strings) as `hash-object --stdin-paths` reads them, one a line: git unquotes a line
 * that begins with a double quote and drops a carriage return at its end, so such paths, and
 * those holding a newline, go quoted.
 */
function stdinPaths(raws: readonly string[]): Buffer {
  return Buffer.concat(raws.map((raw) => {
    const bytes = Buffer.from(raw, 'latin1');
    return Buffer.concat([/^"|[\n]|\r$/.test(raw) ? Buffer.from(quotePath(bytes), 'utf8') : bytes, Buffer.from('\n')]);
  }));
}

/** Up to this many bytes in all, {@link Plumbing.hashRaw} reads the files itself. */
const RAW_IN_PROCESS_BYTES = 16 * 1024 * 1024;

/**
 * The raw blob ids of the files at `raws` (byte strings from `top`), computed here, or null for
 * git to compute when one is not a regular file (as lstat sees it: git would follow a symlink,
 * or fail on a folder or a missing path), cannot be read whole, or the files hold more than
 * {@link RAW_IN_PROCESS_BYTES}.
 */
function rawIdsInProcess(top: string, raws: readonly string[], objectFormat: string): string[] | null {
  const paths = raws.map((raw) => Buffer.concat([Buffer.from(`${top}/`, 'utf8'), Buffer.from(raw, 'latin1')]));
  let total = 0;
  for (const path of paths) {
    const stats = lstatSync(path, { throwIfNoEntry: false });
    if (stats === undefined || !stats.isFile()) return null;
    total += stats.size;
    if (total > RAW_IN_PROCESS_BYTES) return null;
  }
  try {
    return paths.map((path) => objectId('blob', readFileSync(path), objectFormat));
  } catch {
    return null;
  }
}

const LAYOUT_ARGS = ['--path-format=absolute', '--show-toplevel', '--git-dir', '--git-common-dir', '--git-path', 'index', '--git-path', 'objects', '--show-object-format'] as const;
const LAYOUT_LINES = 6;

function parseLayout(lines: readonly string[]): RepositoryLayout | null {
  const [top, gitDir, commonDir, indexFile, objectsDir, objectFormat] = lines;
  if (!top || !gitDir || !commonDir || !indexFile || !objectsDir || !objectFormat) return null;
  return { top, gitDir, commonDir, indexFile, objectsDir, objectFormat };
}

/**
 * The configuration every call that stages the working tree runs with: `core.safecrlf=true`
 * makes git stop whole on a file whose line endings its conversion would not give back byte for
 * byte (`fatal: CRLF would be replaced by LF in <path>`), and a save holds that file as git
 * stores it with the check off; a restore over it names it in `inexact`.
 */
const NO_SAFECRLF: Readonly<Record<string, string>> = { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'core.safecrlf', GIT_CONFIG_VALUE_0: 'false' };

/**
 * A path git could not stage, and why: `unreadable` (it could not be opened or read),
 * `vanished` (gone between git listing it and reading it), `not-a-file` (a FIFO, socket or
 * device where git tracks a file), `embedded-repository` (a repository inside this one with
 * no commit yet, which git can keep no gitlink of) or `invalid-path` (a name git refuses to hold).
 * @internal
 */
export interface StagingProblem {
  path: string;
  reason: 'unreadable' | 'vanished' | 'not-a-file' | 'embedded-repository' | 'invalid-path';
}

/**
 * `git add` stopped whole on a file that vanished under it: `path` is that file, `named` what it
 * had named before.
 * @internal
 */
export class StagingStopped extends Error {
  readonly path: StagingProblem;
  readonly named: StagingProblem[];

  constructor(path: StagingProblem, named: StagingProblem[]) {
    super(`git add stopped: ${path.path} ${path.reason}`);
    this.name = 'StagingStopped';
    this.path = path;
    this.named = named;
  }
}

/**
 * What `git add --ignore-errors` said of the files it could not stage (its messages in the C
 * locale, which the runner sets): each path named, and the one it stopped on, if any;
 * `unexplained` when it said anything else that is an error (then it is not one path's fault).
 * A file git could not convert (a clean filter that failed, bytes not in its
 * `working-tree-encoding`) is the path it stopped on, as unreadable.
 * @internal
 */
export function stagingProblems(stderr: string): { named: StagingProblem[]; stopped: StagingProblem | null; unexplained: boolean } {
  const named = new Map<string, StagingProblem['reason']>();
  let stopped: StagingProblem | null = null;
  let unexplained = false;
  const why = (cause: string): StagingProblem['reason'] => (/No such file or directory|Not a directory/.test(cause) ? 'vanished' : 'unreadable');
  // A clean filter that fails (required, or missing), or bytes not in the file's encoding, stop
  // git on that file; what came before that line is the filter's own talk and git's about it
  // (a BOM prohibited or required), not another failure.
  const filtered = conversionFailed(stderr);
  if (filtered !== null) stopped = { path: filtered, reason: 'unreadable' };
  // Whether `text` is one of git's messages about a path, recorded; each pattern takes a path
  // that holds a newline (the `s` flag) when handed the whole message.
  const take = (text: string): boolean => {
    let match = /^error: open\("(.*)"\): (.*)$/s.exec(text);
    if (match !== null) {
      named.set(match[1] as string, why(match[2] as string));
      return true;
    }
    match = /^error: (.*): can only add regular files, symbolic links or git-directories$/s.exec(text);
    if (match !== null) {
      named.set(match[1] as string, 'not-a-file');
      return true;
    }
    // A name git's verify_path refuses (a .git component in another case or form, a symlink named .gitmodules).
    match = /^error: invalid path '(.*)'$/s.exec(text);
    if (match !== null) {
      named.set(match[1] as string, 'invalid-path');
      return true;
    }
    // A repository inside this one that has no commit: git keeps nothing there, its files included.
    match = /^error: '(.*)\/' does not have a commit checked out$/s.exec(text);
    if (match !== null) {
      named.set(match[1] as string, 'embedded-repository');
      return true;
    }
    match = /^(?:fatal|error): unable to stat '(.*)': (.*)$/s.exec(text);
    if (match !== null) {
      stopped = { path: match[1] as string, reason: why(match[2] as string) };
      return true;
    }
    // git's summary of a path it named above.
    match = /^error: unable to (?:index file|add) '(.*)'(?: to index)?$/s.exec(text);
    return match !== null && named.has(match[1] as string);
  };
  // A message about a path that holds a newline spans lines: each message is first taken whole,
  // from its prefix to the next line that begins with one, and line by line only when it is not
  // one of these (a filter's own talk may follow a message on lines of its own).
  for (const message of gitMessages(stderr)) {
    if (message.includes('\n') && take(message)) continue;
    for (const line of message.split('\n')) {
      if (take(line)) continue;
      // Any other error is not one path's.
      if (filtered === null && /^(?:error|fatal): /.test(line) && !/^fatal: (?:adding|updating) files failed$/.test(line)) unexplained = true;
    }
  }
  return { named: [...named].map(([path, reason]) => ({ path, reason })), stopped, unexplained };
}

/**
 * The folders and files git could not look into or at as it walked the working tree, from what
 * it said (in the C locale): `warning: could not open directory '<folder>/': <cause>`, and
 * `<path>: Permission denied` for a tracked file whose stat data it could not read (status).
 * What they hold is in nothing git reported: git goes on as if a folder were empty and a file
 * unchanged, and a save lists them as unreadable. Folders come without their slash. Only paths
 * inside the working tree (relative, no `..`) are taken; a file is the caller's to check against
 * the index (a clean filter's own messages pass through the same stream).
 * @internal
 */
export function unreadableInWalk(lines: readonly string[]): { folders: string[]; files: string[] } {
  const folders = new Set<string>();
  const files = new Set<string>();
  const inside = (path: string): boolean => path.length > 0 && !path.startsWith('/') && !path.split('/').includes('..');
  for (const said of lines) {
    // A line as the runner hands it on ends with its newline.
    const line = said.replace(/\r?\n$/, '');
    // git cuts a message at 4095 bytes: a folder whose path is about that long (too long for
    // the system to open) comes without its end and the cause, and is named by the last folder
    // on its way the cut leaves whole.
    const folder = /^warning: could not open directory '(.*)\/': .*$/.exec(line) ?? (Buffer.byteLength(line) >= 4095 ? /^warning: could not open directory '(.*)\/[^/]*$/.exec(line) : null);
    if (folder !== null) {
      if (inside(folder[1] as string)) folders.add(folder[1] as string);
      continue;
    }
    const file = /^(.+): Permission denied$/.exec(line);
    if (file !== null && !/^(?:warning|error|fatal|hint): /.test(line) && inside(file[1] as string)) files.add(file[1] as string);
  }
  return { folders: [...folders], files: [...files] };
}

/**
 * The path `update-index --stdin` stopped on, and why, from what it said (in the C locale), or
 * null when it stopped for anything else: `error: open("<path>"): <cause>` (gone or unreadable),
 * `error: <path>: unsupported file type`, `error: <path>: is a directory - add files inside
 * instead` (a repository without a commit, when `isRepository` says so; else a file replaced by
 * a folder: gone), each followed by `fatal: Unable to process path <path>`; or a file git could
 * not convert: a clean filter that failed, bytes not in its `working-tree-encoding` (unreadable).
 * @internal
 */
export function listedProblem(stderr: string, isRepository: (path: string) => boolean): StagingProblem | null {
  const filtered = conversionFailed(stderr);
  if (filtered !== null) return { path: filtered, reason: 'unreadable' };
  // Whole messages first (a path may hold a newline), then lines (a filter's talk may follow one).
  const pieces = [...gitMessages(stderr), ...stderr.split('\n')];
  const last = pieces.map((piece) => /^fatal: Unable to process path (.*)$/s.exec(piece)).find((match) => match !== null);
  if (last === undefined || last === null) return null;
  const path = last[1] as string;
  for (const line of pieces) {
    if (line === `error: ${path}: unsupported file type`) return { path, reason: 'not-a-file' };
    if (line === `error: ${path}: is a directory - add files inside instead`) return { path, reason: isRepository(path) ? 'embedded-repository' : 'vanished' };
    if (line.startsWith(`error: open("${path}"): `)) {
      return { path, reason: /No such file or directory|Not a directory/.test(line.slice(`error: open("${path}"): `.length)) ? 'vanished' : 'unreadable' };
    }
  }
  return null;
}

/**
 * The path git stopped on because it could not convert the file into what it stores, or null: a
 * clean filter failed (`fatal: <path>: clean filter '<name>' failed`), or its bytes are not in its
 * `working-tree-encoding` (`fatal: failed to encode '<path>' from <encoding> to UTF-8`, or a byte
 * order mark is missing or where the encoding prohibits one).
 */
function conversionFailed(stderr: string): string | null {
  for (const message of [...gitMessages(stderr), ...stderr.split('\n')]) {
    const match = /^fatal: (?:(.*): clean filter '[^']*' failed|failed to encode '(.*)' from \S+ to UTF-8|BOM is (?:required|prohibited) in '(.*)' if encoded as \S+)$/s.exec(message);
    if (match !== null) return (match[1] ?? match[2] ?? match[3]) as string;
  }
  return null;
}

/**
 * git's standard error as its messages: each from a line that begins with `error: `, `fatal: `,
 * `warning: ` or `hint: ` to the next such line, its last newline dropped. A message that names a
 * path holding a newline is one message, not two lines (the text before the first such line is
 * a message too).
 */
function gitMessages(stderr: string): string[] {
  return stderr.split(/\n(?=(?:error|fatal|warning|hint): )/).map((message) => message.replace(/\n$/, ''));
}

/**
 * Writes an index file as git does, never in place: into `<file>.lock`, created anew, then
 * renamed over `file`. A restore's temporary index may still be a hard link of the checkout's own
 * (lib/store/staging.ts, seedIndex: git add --all that changed nothing writes none), and
 * writing through that link would replace the checkout's index with a few paths.
 */
function writeIndexFile(file: string, content: Buffer): void {
  const lock = `${file}.lock`;
  try {
    writeFileSync(lock, content, { flag: 'wx' });
    renameSync(lock, file);
  } catch (error) {
    rmSync(lock, { force: true });
    throw error;
  }
}


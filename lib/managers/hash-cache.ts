// The cache of what the last save hashed (`chant-hash-cache` in the worktree's git directory):
// for each file it gave to `git hash-object`, the file's stat data and the blob id git wrote,
// so that a file modified since HEAD but not since the last save is not read and hashed again.
// It holds git's racy-git rule, with a margin: an entry counts only when the file's mtime and
// ctime are older than when its stat data was taken by at least RACY_MARGIN_MS, since a file
// written in the same clock tick as that can change again without its stat data changing.
// What the blob of unchanged bytes is also depends on what git reads beside the file (its
// attributes and config: eol conversion, clean filters, the object format): the cache is keyed by
// all of that (the caller adds the stat data of the .gitattributes on the file's way), and says
// nothing when a source it cannot follow is in play. A hit is the blob hash-object would write.
// The cache also names the tree the save that wrote it built: every blob it names is in that
// tree, so while the wip tip holds the same tree, they are all reachable from a ref.
import { isAscii } from 'node:buffer';
import { createHash } from 'node:crypto';
import type { Stats } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { attributesFiles, configFiles } from '../git/config-files.js';
import { replaceCacheFile } from './cache-file.js';

/** The cache file, in the worktree's git directory. */
export const HASH_CACHE_FILE = 'chant-hash-cache';

const VERSION = 'chant-hash-cache 2';

/** How much older than the taking of its stat data a file's mtime and ctime must be for its entry to count. */
export const RACY_MARGIN_MS = 3_000;

/**
 * A file's stat data as the cache compares it: every field that changes when its bytes or its
 * inode do. The times are milliseconds with their fraction (a double: a fraction of a
 * microsecond is lost): an entry counts only for a file whose times are seconds older than the
 * taking of its stat data (the racy margin), and a write after that sets its ctime to the
 * moment of writing, seconds from what the entry holds. Plain numbers, not bigints: a save
 * looks at 10,000 files for a tree with that many modified since HEAD.
 */
export function statKey(stats: Stats): string {
  return `${stats.dev}:${stats.ino}:${stats.mode}:${stats.uid}:${stats.size}:${stats.mtimeMs}:${stats.ctimeMs}`;
}

/** What the cache knows, and what this save hands it for the next. */
export interface HashCache {
  /**
   * Whether the tree the save that wrote the cache built is `tipTree`, the wip tip's: every blob
   * the cache names is then in the tip's tree, reachable from a ref, so on disk (loose or packed)
   * and out of a prune's reach.
   */
  readonly held: boolean;
  /**
   * The blob id of `path`, when the cache holds it under the same `key` (the stat data of the file
   * and of what git reads beside it) and `newestMs` (the newest mtime or ctime among them) is older
   * than when that stat data was taken by {@link RACY_MARGIN_MS}.
   */
  lookup(path: string, key: string, newestMs: number): string | undefined;
  /** Records that `path`, whose stat data `key` was taken at `takenMs` (before git read it), hashed to `oid`. */
  record(path: string, key: string, takenMs: number, oid: string): void;
  /** The cache's text for the next save: what this save looked up, kept and recorded, and `root`, the tree it built with them. */
  text(root: string): string;
  /**
   * The same lines as {@link HashCache.text}, as the bytes to write: a line kept as it was read
   * from a file of ASCII bytes is copied from those bytes (the lines of the file first, in its
   * order, then the others), so that the lines a save did not change are not joined and encoded
   * again (at 10,000 files modified since HEAD, most of the cache's 1.9 MB).
   */
  bytes(root: string): Buffer;
  /**
   * Every entry the cache holds, read from its line (none when it is not trusted, and none that
   * does not read as one); for a private index that hands the stat data to `git status` (see
   * lib/store/status-index.ts).
   */
  entries(): IterableIterator<CachedHash>;
  /**
   * Keeps `path`'s entry as it is for the next save, where `git status` found its file as the
   * entry says; given `oid`, only where the entry names that blob (the one the tree holds).
   */
  keep(path: string, oid?: string): void;
}

/** One entry of the cache, read from its line. */
export interface CachedHash {
  path: string;
  /** The file's stat data as {@link statKey} wrote it. */
  stat: string;
  /** The index's blob for the path when it was hashed (`-` for none). */
  indexOid: string;
  /** The stat keys of the `.gitattributes` on the file's way, the top's first, joined by `|` (`-` for none). */
  attributes: string;
  /** When its stat data was taken, in milliseconds. */
  takenMs: number;
  /** The blob its bytes hashed to. */
  oid: string;
}

/**
 * The cache read from its text (or its file's bytes), trusted only when it was written under
 * `fingerprint` (see {@link hashFingerprint}); null fingerprint: no cache at all, nothing looked
 * up or kept. `tipTree` is the tree of the wip tip (null when unknown), for {@link HashCache.held}.
 * `racyMarginMs` is for tests that must see hits on files written a moment before.
 */
export function hashCache(source: string | Buffer, fingerprint: string | null, tipTree: string | null, racyMarginMs: number = RACY_MARGIN_MS): HashCache {
  // A file of ASCII bytes is read one character a byte: where a line starts in the text is where
  // it starts in the bytes, which bytes() copies. Any other is read as UTF-8, as it was written.
  const raw = typeof source === 'string' || !isAscii(source) ? null : source;
  const text = typeof source === 'string' ? source : raw !== null ? source.toString('latin1') : source.toString('utf8');
  // Each line by its path, read whole only when the path is looked up: path NUL key NUL taken NUL oid.
  const known = new Map<string, string>();
  // Where each line starts in `raw`, by its path.
  const starts = new Map<string, number>();
  // The first line, whole: the version, the fingerprint, the tree built.
  const firstEnd = text.indexOf('\n');
  const first = text.slice(0, Math.max(firstEnd, 0)).split(' ');
  const trusted = fingerprint !== null && first.length === 4 && `${first[0]} ${first[1]}` === VERSION && first[2] === fingerprint && /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(first[3] as string);
  if (trusted) {
    for (let at = firstEnd + 1; at < text.length;) {
      let end = text.indexOf('\n', at);
      if (end < 0) end = text.length;
      const line = text.slice(at, end);
      const nul = line.indexOf('\0');
      if (nul > 0) {
        const path = line.slice(0, nul);
        known.set(path, line);
        if (raw !== null) starts.set(path, at);
      }
      at = end + 1;
    }
  }
  const held = trusted && tipTree !== null && first[3] === tipTree;
  // Every blob id is as long as the tree id the first line names (the repository's object
  // format): a line cut short (a crash before its bytes reached the disk) can leave a sha256 id
  // of 40 to 63 digits, which would name no blob, or half of one.
  const idLength = trusted ? (first[3] as string).length : 0;
  const kept = new Map<string, string>();
  return {
    held,
    lookup(path, key, newestMs) {
      const line = known.get(path);
      if (line === undefined) return undefined;
      const [, entryKey, taken, oid, extra] = line.split('\0');
      if (entryKey !== key || taken === undefined || oid === undefined || extra !== undefined || !/^\d+$/.test(taken) || oid.length !== idLength || !/^[0-9a-f]{40,64}$/.test(oid)) return undefined;
      if (newestMs + racyMarginMs > Number(taken)) return undefined;
      kept.set(path, line);
      return oid;
    },
    record(path, key, takenMs, oid) {
      if (fingerprint !== null && !/[\0\n]/.test(path)) kept.set(path, `${path}\0${key}\0${Math.floor(takenMs)}\0${oid}`);
    },
    text(root) {
      return fingerprint === null ? '' : `${VERSION} ${fingerprint} ${root}\n${[...kept.values()].join('\n')}\n`;
    },
    bytes(root) {
      if (fingerprint === null) return Buffer.alloc(0);
      // The lines kept as they were read, by where they start (each ends with its newline in
      // `raw`); the others are written from their text.
      const spans: Array<[number, number]> = [];
      const others: string[] = [];
      for (const [path, line] of kept) {
        const start = raw === null ? undefined : starts.get(path);
        if (start !== undefined && known.get(path) === line && (raw as Buffer)[start + line.length] === 0x0a) spans.push([start, start + line.length + 1]);
        else others.push(`${line}\n`);
      }
      spans.sort((a, b) => a[0] - b[0]);
      const parts: Buffer[] = [Buffer.from(`${VERSION} ${fingerprint} ${root}\n`, 'utf8')];
      for (let at = 0; at < spans.length;) {
        const [from] = spans[at] as [number, number];
        let to = (spans[at] as [number, number])[1];
        // Lines that follow each other in the file are copied as one run.
        for (at += 1; at < spans.length && (spans[at] as [number, number])[0] === to; at += 1) to = (spans[at] as [number, number])[1];
        parts.push((raw as Buffer).subarray(from, to));
      }
      if (others.length > 0) parts.push(Buffer.from(others.join(''), 'utf8'));
      return Buffer.concat(parts);
    },
    *entries() {
      for (const [path, line] of known) {
        const entry = cachedHash(path, line, idLength);
        if (entry !== null) yield entry;
      }
    },
    keep(path, oid) {
      const line = known.get(path);
      if (line !== undefined && (oid === undefined || (line.endsWith(oid) && line.charCodeAt(line.length - oid.length - 1) === 0))) kept.set(path, line);
    },
  };
}

/** A line of the cache read whole, or null where it does not read as one. */
function cachedHash(path: string, line: string, idLength: number): CachedHash | null {
  // path NUL key NUL taken NUL oid, the key being stat|indexOid|attributes...
  const keyEnd = line.indexOf('\0', path.length + 1);
  const takenEnd = keyEnd < 0 ? -1 : line.indexOf('\0', keyEnd + 1);
  if (takenEnd < 0 || line.indexOf('\0', takenEnd + 1) >= 0) return null;
  const statEnd = line.indexOf('|', path.length + 1);
  const oidEnd = statEnd < 0 || statEnd > keyEnd ? -1 : line.indexOf('|', statEnd + 1);
  if (oidEnd < 0 || oidEnd > keyEnd) return null;
  const takenMs = Number(line.slice(keyEnd + 1, takenEnd));
  const oid = line.slice(takenEnd + 1);
  // As lookup checks it: a line damaged to a blob id that is not hex would be written into the
  // private index only in part, and name a blob that is no file's; so would one of another length.
  if (!Number.isSafeInteger(takenMs) || oid.length !== idLength || !/^[0-9a-f]{40,64}$/.test(oid)) return null;
  return { path, stat: line.slice(path.length + 1, statEnd), indexOid: line.slice(statEnd + 1, oidEnd), attributes: line.slice(oidEnd + 1, keyEnd), takenMs, oid };
}

/** Replaces the cache file, naming `root`, the tree built with it; one that cannot be written is only a slower next save. */
export async function saveHashCache(file: string, cache: HashCache, root: string): Promise<void> {
  await replaceCacheFile(file, cache.bytes(root));
}

/** Settings under which git compares less stat data than the cache keeps: no ctime, or only mtime and size. */
const WEAKER_STAT_CHECK = /trustctime|checkstat/i;

/**
 * Whether a config git reads by default, or config given in the environment, names a setting
 * under which git compares less stat data than the cache keys hold (`core.trustctime`,
 * `core.checkStat`): git could then take a file rewritten at the same size, its mtime put back,
 * for the one the cache recorded, so no private index for git status is made from the cache (see
 * lib/store/status-index.ts). A file that cannot be read counts as naming one.
 */
export async function statCheckWeakened(sources: HashSources): Promise<boolean> {
  const { env } = sources;
  if (Object.keys(env).some((name) => name.startsWith('GIT_CONFIG') && WEAKER_STAT_CHECK.test(env[name] ?? ''))) return true;
  const texts = await Promise.all(configFiles(sources, env).map((file) => readFile(file, 'latin1').catch((error: NodeJS.ErrnoException) => (error.code === 'ENOENT' || error.code === 'ENOTDIR' ? '' : null))));
  return texts.some((text) => text === null || WEAKER_STAT_CHECK.test(text));
}

/** The variables of a commit's author and committer. */
const IDENTITY = /^GIT_(?:AUTHOR|COMMITTER)_(?:NAME|EMAIL|DATE)$/;

/** Config that makes git read a file the fingerprint does not, or attributes from a tree (`attr.tree`). */
const FOLLOWED = /include|attributesfile|\[attr|attr\.tree/i;

/** Where a checkout's git reads attributes and config from, besides the working tree's files. */
export interface HashSources {
  /** The git directory every worktree shares. */
  commonDir: string;
  /** This worktree's git directory. */
  gitDir: string;
  /** `sha1` or `sha256`. */
  objectFormat: string;
  /** The commit HEAD names: its tree's `.gitattributes` files. */
  head: string;
  /** The environment git runs in. */
  env: NodeJS.ProcessEnv;
}

/**
 * What the blob of a file's bytes depends on beyond them, as one digest: the object format, HEAD
 * (whose tree holds the committed `.gitattributes`), every variable named GIT_* (but the
 * author's and committer's) or that places git's config, and the bytes of each config and attributes file git reads by default. Null, so
 * the cache is not used, when a config names a file read from elsewhere (`include`, `includeIf`,
 * `core.attributesFile`). A clean filter (git-lfs) is taken as git's own index takes it, as a
 * function of the bytes and of its config. The `.gitattributes` files of the working tree are
 * the caller's to see.
 */
export async function hashFingerprint(sources: HashSources): Promise<string | null> {
  const { env } = sources;
  const configs = configFiles(sources, env);
  const attributes = attributesFiles(sources.commonDir, env);
  const hash = createHash('sha256');
  hash.update(`${sources.objectFormat}\0${sources.head}\0`);
  for (const name of Object.keys(env).sort()) {
    if (!name.startsWith('GIT_') && name !== 'HOME' && name !== 'XDG_CONFIG_HOME') continue;
    // Who commits, and when, is no part of a blob: a host that names its agent in these keeps the cache.
    if (IDENTITY.test(name)) continue;
    // Config given on the command line or in the environment may name a file or a filter too.
    if (name.startsWith('GIT_CONFIG') && FOLLOWED.test(env[name] ?? '')) return null;
    hash.update(`${name}=${env[name] ?? ''}\0`);
  }
  const read = (file: string) => readFile(file, 'latin1').catch((error: NodeJS.ErrnoException) => (error.code === 'ENOENT' || error.code === 'ENOTDIR' ? null : Promise.reject(error)));
  let texts: Array<string | null>;
  try {
    texts = await Promise.all([...configs, ...attributes].map(read));
  } catch {
    return null;
  }
  for (const [index, text] of texts.entries()) {
    if (index < configs.length && text !== null && FOLLOWED.test(text)) return null;
    hash.update(`${index}\0${text === null ? '-' : `${text.length}\0${text}`}\0`);
  }
  return hash.digest('hex');
}

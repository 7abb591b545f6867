// The secret gate: what a push would add of a wip chain is scanned with secretlint's recommended
// rules before it leaves the box, and a snapshot holding a likely secret stays local with every
// snapshot above it. The scanner (secret-scanner.ts, a file of its own in the CLI's bundle) is
// imported as a push starts, while git reads the refs (preloadScanner), so a save or a read
// without a push never loads it. A finding names the path, the rule and the line, never the
// secret: secretlint's own messages quote the match, so they are never passed on.
import { createHash } from 'node:crypto';
import { closeSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createGunzip, createInflateRaw } from 'node:zlib';
import type { Transform } from 'node:stream';
import type { HeldBack, SecretFinding } from '../documents/replication.js';
import { addedBlobs, lfsObjectsDir, readBlobs } from '../git/storage.js';
import type { AddedBlob } from '../git/storage.js';
import type { GitRunner } from '../git/runner.js';
import type { ScanHit } from './secret-scanner.js';

/**
 * The most bytes of a file linted at once: a bigger file is scanned whole, in windows of this
 * size that overlap by {@link SCAN_OVERLAP}, so a key past the first window is found too and no
 * string grows past what V8 can hold.
 */
const SCAN_WINDOW = 1024 * 1024;

/** How far each window reaches back into the one before it: more than a private key's block. */
const SCAN_OVERLAP = 16 * 1024;

/** A window of zeros, to tell an empty stretch of a binary at native speed; made on first use. */
let zeros: Buffer | undefined;

/**
 * The most bytes of a compressed file's content scanned: a `.gz` of a log or a dump, a `.tar.gz`
 * or a `.zip` of a folder, is scanned for what it holds up to this much of it, so a small file
 * that unpacks to gigabytes (a bomb) costs no more than this.
 */
const UNPACK_LIMIT = 64 * 1024 * 1024;

/** git's own test for a binary file: a NUL in the first 8,000 bytes. */
const BINARY_PROBE = 8000;

type Lint = (path: string, content: string, bytes?: Uint8Array) => Promise<ScanHit[]>;

let scanner: Promise<Lint> | undefined;

/** The scanner once it has linted {@link WARM_UP}: see {@link warmScanner}. */
let warmed: Promise<Lint> | undefined;

/** A small file that holds no secret, linted to warm the scanner up. */
const WARM_UP = { path: 'config.js', content: 'export const region = "eu-west-1";\n' };

/** secretlint with its recommended preset (secret-scanner.ts), loaded once, on the first scan. */
function loadScanner(): Promise<Lint> {
  // A load that failed (too many open files, a file being replaced by an upgrade) is forgotten:
  // kept, it failed every later push of a long-lived host until it restarted.
  scanner ??= import('./secret-scanner.js').then((module) => module.lint, (error: unknown) => {
    scanner = undefined;
    throw error;
  });
  return scanner;
}

/**
 * The scanner, warmed up: a first lint compiles the rules' code and regular expressions, about
 * 10 ms of a push's first 10 small files, against half a millisecond a file after. The gate
 * starts it as its `git log` starts, so that work is done while git lists the chain, not after
 * it. The warm-up waits a turn of the event loop after the load, for git's answers that came
 * meanwhile to be taken first.
 */
function warmScanner(): Promise<Lint> {
  warmed ??= loadScanner().then(async (lint) => {
    await new Promise((resolve) => setImmediate(resolve));
    // A warm-up that fails leaves the failure to the lint that follows. Twice: V8 runs a regular
    // expression's first match in its interpreter and compiles it to machine code at the second,
    // so after one warm-up the first file git listed paid that compile (about 1.2 ms idle).
    for (let round = 0; round < 2; round += 1) await lint(WARM_UP.path, WARM_UP.content).catch(() => undefined);
    return lint;
  }, (error: unknown) => {
    warmed = undefined;
    throw error;
  });
  return warmed;
}

/**
 * Starts loading the scanner, for a push that is about to read its refs: a push almost always
 * has a new snapshot to scan, and the load (compiling on this thread, about 10 ms) then runs
 * while git reads the refs and the remote's configuration, instead of after. It starts on the
 * event loop's next turn, once the push has started those git processes: started at once, it
 * ran before them (the CLI's import of it is a require in a promise's callback), and they waited
 * for it.
 * @internal
 */
export function preloadScanner(): void {
  setImmediate(() => loadScanner().catch(() => undefined));
}

/**
 * A finding's id: stable across pushes and boxes for the same content at the same path, so a
 * host acknowledges exactly that finding; a changed file is a new finding.
 */
function findingId(blob: string, path: string, rule: string, line: number | null): string {
  return createHash('sha256').update(`${blob}\0${path}\0${rule}\0${line ?? ''}`).digest('hex').slice(0, 20);
}

/**
 * The printable runs of a binary file, one a line, as `strings` prints them: in ASCII, and in
 * UTF-16 of either byte order (`strings -el`, `-eb`), as a binary keeps its wide strings and as a
 * UTF-16 file with no byte order mark reads when it holds a character past Latin-1 (a dash, a
 * curly quote), which puts a byte other than zero where a zero would make it text.
 */
function printableRuns(content: Buffer): string {
  const runs = new Set<string>();
  wideRuns(content, 1, 0, false, runs);
  for (const offset of [0, 1]) for (const zeroFirst of [false, true]) wideRuns(content, 2, offset, zeroFirst, runs);
  return [...runs].join('\n');
}

/**
 * Adds to `runs` the runs of 8 or more printable ASCII characters of `content` in units of
 * `width` bytes from `offset`: one byte, or two whose other byte is zero (after the character, or
 * before it with `zeroFirst`). A loop over the bytes: a regular expression for the wide runs
 * tried every position of a run of zeros, 20 ms a MiB of them.
 */
function wideRuns(content: Buffer, width: 1 | 2, offset: number, zeroFirst: boolean, runs: Set<string>): void {
  const char = width === 2 && zeroFirst ? 1 : 0;
  const zero = zeroFirst ? 0 : 1;
  let start = -1;
  let at = offset;
  for (; at + width <= content.length; at += width) {
    const byte = content[at + char] as number;
    if (byte >= 0x20 && byte <= 0x7e && (width === 1 || content[at + zero] === 0)) {
      if (start < 0) start = at;
    } else if (start >= 0) {
      addRun(content, start, at, width, char, runs);
      start = -1;
    }
  }
  if (start >= 0) addRun(content, start, at, width, char, runs);
}

/** The run of `content` from `start` to `end` in units of `width`, when it is 8 characters or more. */
function addRun(content: Buffer, start: number, end: number, width: 1 | 2, char: number, runs: Set<string>): void {
  if ((end - start) / width < 8) return;
  if (width === 1) {
    runs.add(content.toString('latin1', start, end));
    return;
  }
  const bytes = Buffer.allocUnsafe((end - start) / 2);
  for (let at = start, to = 0; at < end; at += 2, to += 1) bytes[to] = content[at + char] as number;
  runs.add(bytes.toString('latin1'));
}

/** How a file's bytes are read as text: UTF-8, UTF-16 in either order, or a binary's printable runs. */
type Encoding = 'utf8' | 'utf16le' | 'utf16be' | 'binary';

/**
 * How to read a file: UTF-16 with a byte order mark (little or big endian, `skip` its two bytes),
 * or without one where the first bytes are ASCII in UTF-16 (a zero in every second byte, and in
 * no other); else binary when a NUL is in its first 8,000 bytes, as git decides; else UTF-8.
 */
function encodingOf(content: Buffer): { encoding: Encoding; skip: number } {
  if (content.length >= 2 && content[0] === 0xff && content[1] === 0xfe) return { encoding: 'utf16le', skip: 2 };
  if (content.length >= 2 && content[0] === 0xfe && content[1] === 0xff) return { encoding: 'utf16be', skip: 2 };
  const probe = content.subarray(0, Math.min(content.length, BINARY_PROBE) & ~1);
  if (probe.length >= 8) {
    for (const start of [1, 0]) {
      let wide = true;
      for (let at = 0; at < probe.length && wide; at += 1) wide = ((at % 2) === start) === (probe[at] === 0);
      if (wide) return { encoding: start === 1 ? 'utf16le' : 'utf16be', skip: 0 };
    }
  }
  return { encoding: content.subarray(0, BINARY_PROBE).includes(0) ? 'binary' : 'utf8', skip: 0 };
}

/** The text of some bytes of a file read as `encoding` (whole UTF-16 code units). */
function textOf(bytes: Buffer, encoding: Encoding): string {
  if (encoding === 'utf16le') return bytes.toString('utf16le');
  if (encoding === 'utf16be') return Buffer.from(bytes).swap16().toString('utf16le');
  return encoding === 'binary' ? printableRuns(bytes) : bytes.toString('utf8');
}

/** The line feeds in `bytes` read as `encoding` (a UTF-16 one is a whole code unit). */
function lineFeeds(bytes: Buffer, encoding: Encoding): number {
  let count = 0;
  if (encoding === 'utf16le' || encoding === 'utf16be') {
    const [low, high] = encoding === 'utf16le' ? [0x0a, 0] : [0, 0x0a];
    for (let at = 0; at + 1 < bytes.length; at += 2) if (bytes[at] === low && bytes[at + 1] === high) count += 1;
    return count;
  }
  for (let at = bytes.indexOf(0x0a); at >= 0; at = bytes.indexOf(0x0a, at + 1)) count += 1;
  return count;
}

/** A file too big to read whole, read window by window (a large git-lfs object). */
interface ScanFile {
  length: number;
  read(from: number, to: number): Buffer;
}

/**
 * Lints a whole file, in windows of {@link SCAN_WINDOW} bytes each reaching {@link SCAN_OVERLAP}
 * back into the one before, its lines counted from the file's start; a hit of a rule at a line
 * already counted (a window before found it, or a binary's, which has no line, holds it again)
 * is not counted twice: it would be the same finding.
 */
async function lintWhole(lint: Lint, path: string, content: Buffer | ScanFile): Promise<Array<ScanHit & { binary: boolean }>> {
  const read = Buffer.isBuffer(content) ? (from: number, to: number): Buffer => content.subarray(from, to) : content.read;
  const { encoding, skip } = encodingOf(read(0, Math.min(content.length, BINARY_PROBE)));
  const unit = encoding === 'utf16le' || encoding === 'utf16be' ? 2 : 1;
  const end = content.length - ((content.length - skip) % unit);
  const hits: Array<ScanHit & { binary: boolean }> = [];
  const counted = new Set<string>();
  let start = skip;
  let line = 0;
  for (;;) {
    const stop = Math.min(end, start + SCAN_WINDOW);
    const bytes = read(start, stop);
    // A window of a binary that is all zeros (a disk image's empty stretch) holds no run to lint.
    const empty = encoding === 'binary' && bytes.equals((zeros ??= Buffer.alloc(SCAN_WINDOW)).subarray(0, bytes.length));
    // A rule that reads the file itself (the GCP rule's `.p12`) is given its bytes, once.
    const whole = start === skip && Buffer.isBuffer(content) ? content : undefined;
    for (const hit of empty ? [] : await lint(path, textOf(bytes, encoding), whole)) {
      const at = line + hit.line;
      const key = `${hit.rule}\0${encoding === 'binary' ? '' : at}`;
      if (counted.has(key)) continue;
      counted.add(key);
      hits.push({ rule: hit.rule, line: at, binary: encoding === 'binary' });
    }
    if (stop >= end) return hits;
    const next = stop - SCAN_OVERLAP - ((stop - SCAN_OVERLAP - skip) % unit);
    line += lineFeeds(read(start, next), encoding);
    start = next;
  }
}

/**
 * Scans files for likely secrets. Each (content, path) is scanned once, credited to the first
 * snapshot listed that holds it.
 * @param git - the runner
 * @param cwd - a folder inside the checkout
 * @param blobs - the files, oldest snapshot first
 * @returns the findings, in the order of the files
 * @internal
 */
export async function scanBlobs(git: GitRunner, cwd: string, blobs: readonly AddedBlob[]): Promise<SecretFinding[]> {
  const seen = new Set<string>();
  const files = blobs.filter((file) => {
    const key = `${file.blob}\0${file.path}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  if (files.length === 0) return [];
  const [contents, lint] = await Promise.all([readBlobs(git, cwd, files.map((file) => file.blob), Infinity, true), warmed ?? loadScanner()]);
  // A file git-lfs keeps is a pointer in the snapshot; what it points to goes with the push too
  // (its LFS objects are pushed), so that is what is scanned, from the local LFS store.
  const lfs = await lfsContents(git, cwd, contents);
  const findings: SecretFinding[] = [];
  for (const file of files) {
    const content = lfs.get(file.blob) ?? contents.get(file.blob);
    if (content === undefined) continue;
    let hits: Array<ScanHit & { binary: boolean }>;
    if (!Buffer.isBuffer(content)) {
      // A git-lfs object too big to hold is scanned window by window (not unpacked: its files
      // are past what a scan unpacks anyway), the file open for as long as that takes.
      hits = await withFile(content, (source) => lintWhole(lint, file.path, source));
    } else {
      if (content.length === 0) continue;
      // Text in UTF-16 (what Windows PowerShell 5 writes with `>`) holds zero bytes, and would read
      // as binary whose printable runs hold nothing: it is read as the text it is. A file is
      // scanned whole: a key past its first MiB (a log, a dump) is a key all the same.
      hits = await lintWhole(lint, file.path, content);
      // A gzip or zip file (`.env.gz`, a `.tar.gz` or `.zip` of a folder) is compressed bytes with
      // no printable run of what it holds: what it unpacks to is scanned too, each file read as the
      // file it was (a tar's files as a binary's runs), its hits with no line, as a binary's.
      for (const packed of await unpacked(file.path, content)) {
        hits.push(...(await lintWhole(lint, packed.path, packed.content)).map((hit) => ({ ...hit, binary: true })));
      }
    }
    const counted = new Set<string>();
    for (const hit of hits) {
      const line = hit.binary ? null : hit.line;
      const id = findingId(file.blob, file.path, hit.rule, line);
      if (counted.has(id)) continue;
      counted.add(id);
      findings.push({ id, path: file.path, line, rule: hit.rule, snapshot: file.snapshot });
    }
  }
  return findings;
}

/**
 * What a gzip or zip file holds, by the path a rule reads (`.npmrc.gz` holds `.npmrc`),
 * {@link UNPACK_LIMIT} bytes of it at most (a zip's smallest files first); none for another file, or for one that does not
 * unpack (damaged, encrypted, a zip64 directory). A zip's files are read each as its own (text,
 * UTF-16, a binary's runs) and scanned as one text, under the zip's path: a jar of 5,000 classes
 * is then linted in a few windows, not in 5,000 calls. A file of a name some rule reads alone
 * (see {@link NAMED_BY_RULES}) a zip or a tar holds is scanned by its own name too.
 */
async function unpacked(path: string, content: Buffer): Promise<Array<{ path: string; content: Buffer }>> {
  if (content[0] === 0x1f && content[1] === 0x8b) {
    const inner = await inflated(createGunzip(), content, UNPACK_LIMIT);
    return inner.length === 0 ? [] : [...namedInTar(inner), { path: path.replace(/\.gz$/i, ''), content: inner }];
  }
  if (content.length >= 4 && content.readUInt32LE(0) !== ZIP_LOCAL && isTar(content, 0)) return namedInTar(content);
  if (content.length < 22) return [];
  // The end record, after which a comment of up to 64 KiB may stand: a zip from its first byte, or
  // behind a launch script (an executable jar, a self-extracting archive).
  const from = Math.max(0, content.length - 22 - 0xffff);
  const found = content.subarray(from).lastIndexOf(ZIP_END_SIGNATURE, content.length - from - 22);
  if (found < 0 || (content.readUInt32LE(0) !== ZIP_LOCAL && content.readUInt32LE(found + from + 16) + content.readUInt32LE(found + from + 12) > found + from)) return [];
  const end = found + from;
  const texts: string[] = [];
  const named: Array<{ path: string; content: Buffer }> = [];
  let left = UNPACK_LIMIT;
  try {
    // The central directory. Offsets count from the zip's start: a script put before it moves it
    // by its length, which is where the directory ends short of the end record.
    const directory = content.readUInt32LE(end + 16);
    const moved = end - content.readUInt32LE(end + 12) - directory;
    const shift = moved > 0 && directory + moved + 4 <= content.length && content.readUInt32LE(directory + moved) === ZIP_ENTRY ? moved : 0;
    let at = directory + shift;
    const entries: Array<{ name: string; flags: number; method: number; size: number; unpacks: number; local: number }> = [];
    for (let entry = content.readUInt16LE(end + 10); entry > 0 && at + 46 <= content.length && content.readUInt32LE(at) === ZIP_ENTRY; entry -= 1) {
      const [flags, method, size, unpacks] = [content.readUInt16LE(at + 8), content.readUInt16LE(at + 10), content.readUInt32LE(at + 20), content.readUInt32LE(at + 24)];
      const name = content.toString('utf8', at + 46, at + 46 + content.readUInt16LE(at + 28));
      entries.push({ name, flags, method, size, unpacks, local: content.readUInt32LE(at + 42) });
      at += 46 + content.readUInt16LE(at + 28) + content.readUInt16LE(at + 30) + content.readUInt16LE(at + 32);
    }
    // The smallest files first (what the directory says they unpack to): a large file listed
    // first (a dump, an image) spent the whole budget, and the .env after it went unscanned.
    entries.sort((a, b) => a.unpacks - b.unpacks);
    for (const { name, flags, method, size, local } of entries) {
      if (left <= 0) break;
      const header = local + shift;
      if ((flags & 1) !== 0 || header + 30 > content.length || content.readUInt32LE(header) !== ZIP_LOCAL) continue;
      const start = header + 30 + content.readUInt16LE(header + 26) + content.readUInt16LE(header + 28);
      const data = content.subarray(start, start + size);
      const inner = method === 0 ? data.subarray(0, left) : method === 8 ? await inflated(createInflateRaw(), data, left) : Buffer.alloc(0);
      left -= inner.length;
      if (inner.length > 0 && NAMED_BY_RULES.test(name)) {
        named.push({ path: name, content: inner });
        continue;
      }
      const { encoding, skip } = encodingOf(inner);
      if (inner.length > 0) texts.push(textOf(inner.subarray(skip), encoding));
    }
  } catch {
    // A damaged zip: what was read of it is scanned.
  }
  return texts.length === 0 ? named : [...named, { path, content: Buffer.from(texts.join('\n')) }];
}

/**
 * The names of files a rule reads alone: a `_authToken` in an `.npmrc`, a token in a
 * `package.json`'s URLs, a GCP service account's `.p12` key (read from its bytes). Joined into the
 * zip's one text, under the zip's path, they went unflagged.
 */
const NAMED_BY_RULES = /(?:\.npmrc|package\.json|package-lock\.json|\.[pP]12)$/;

/** Whether a tar header (POSIX or GNU) starts at `at`. */
function isTar(content: Buffer, at: number): boolean {
  return at + 512 <= content.length && content.toString('latin1', at + 257, at + 262) === 'ustar';
}

/**
 * The files of a tar a rule reads alone (see {@link NAMED_BY_RULES}), by their names: the tar
 * itself is scanned as a binary's runs, under its own name, where such a rule reads nothing.
 */
function namedInTar(content: Buffer): Array<{ path: string; content: Buffer }> {
  const named: Array<{ path: string; content: Buffer }> = [];
  const field = (from: number, length: number): string => content.toString('utf8', from, from + length).replace(/\0[\s\S]*$/, '');
  for (let at = 0; isTar(content, at);) {
    const size = Number.parseInt(field(at + 124, 12).trim() || '0', 8);
    if (!Number.isSafeInteger(size) || size < 0) break;
    // POSIX's name prefix; GNU's header keeps times there.
    const prefix = content[at + 262] === 0 ? field(at + 345, 155) : '';
    const name = prefix.length > 0 ? `${prefix}/${field(at, 100)}` : field(at, 100);
    const type = content[at + 156];
    if ((type === 0x30 || type === 0) && size > 0 && NAMED_BY_RULES.test(name)) named.push({ path: name, content: content.subarray(at + 512, at + 512 + size) });
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return named;
}

/** A zip's local file header, central directory entry and end of central directory record. */
const ZIP_LOCAL = 0x04034b50;
const ZIP_ENTRY = 0x02014b50;
const ZIP_END_SIGNATURE = Buffer.from([0x50, 0x4b, 0x05, 0x06]);

/**
 * What a zlib stream makes of `content`, up to `limit` bytes; what came before a damaged or cut
 * stream is kept.
 */
function inflated(stream: Transform, content: Buffer, limit: number): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (): void => resolve(Buffer.concat(chunks).subarray(0, limit));
    stream.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= limit) {
        stream.destroy();
        done();
      }
    });
    stream.on('end', done);
    stream.on('error', done);
    stream.end(content);
  });
}

/** A git-lfs pointer file: its object's SHA-256, as the LFS store names it. */
const LFS_POINTER = /^version https:\/\/git-lfs\.github\.com\/spec\/v1\n(?:[a-z0-9.-]+ [^\n]*\n)*?oid sha256:([0-9a-f]{64})\n/;

/** The most bytes of a git-lfs object read whole; a bigger one is read window by window. */
const LFS_WHOLE_MAX = 256 * 1024 * 1024;

/** The most bytes a git-lfs pointer file takes (git-lfs reads no bigger one as a pointer). */
const LFS_POINTER_MAX = 1024;

/**
 * The contents of the LFS objects the pointer blobs among `contents` name, by the pointer's blob
 * id, read from the local LFS store (`<common git dir>/lfs/objects/ab/cd/<oid>`, or under
 * `lfs.storage`); a pointer whose object is not there (never fetched) is left out: no push sends
 * it. Nothing is asked of git unless a pointer is found.
 */
async function lfsContents(git: GitRunner, cwd: string, contents: ReadonlyMap<string, Buffer>): Promise<Map<string, Buffer | { path: string; size: number }>> {
  const found = new Map<string, Buffer | { path: string; size: number }>();
  const pointers = new Map<string, string>();
  for (const [blob, content] of contents) {
    if (content.length > LFS_POINTER_MAX) continue;
    const match = LFS_POINTER.exec(content.toString('utf8'));
    if (match !== null) pointers.set(blob, match[1] as string);
  }
  if (pointers.size === 0) return found;
  const objects = await lfsObjectsDir(git, cwd);
  for (const [blob, oid] of pointers) {
    const path = join(objects, oid.slice(0, 2), oid.slice(2, 4), oid);
    const size = statSync(path, { throwIfNoEntry: false })?.size;
    // Not in the local store: nothing of it leaves the box.
    if (size === undefined) continue;
    // One too big to hold (readFileSync refuses 2 GiB and more, and failed as if it were not
    // there, so it went unscanned) is read window by window. One that cannot be read fails the
    // scan: it is pushed, so it is never left out.
    found.set(blob, size > LFS_WHOLE_MAX ? { path, size } : readFileSync(path));
  }
  return found;
}

/** Opens a large git-lfs object for {@link lintWhole} while `use` runs. */
async function withFile<T>(file: { path: string; size: number }, use: (source: ScanFile) => Promise<T>): Promise<T> {
  const fd = openSync(file.path, 'r');
  try {
    return await use({
      length: file.size,
      read: (from, to) => {
        const bytes = Buffer.allocUnsafe(to - from);
        let got = 0;
        while (got < bytes.length) {
          const read = readSync(fd, bytes, got, bytes.length - got, from + got);
          if (read === 0) throw new Error(`${file.path} is shorter than its ${file.size} bytes: it changed while the secret gate read it`);
          got += read;
        }
        return bytes;
      },
    });
  } finally {
    closeSync(fd);
  }
}

/**
 * What the gate decides for one wip ref: push it whole, push it up to the newest snapshot below
 * the first one holding a finding, or hold it all back.
 * @internal
 */
export interface GateDecision {
  /** The commit to push in the ref's place, or null to push nothing of it. */
  source: string | null;
  held: HeldBack | null;
}

/**
 * Scans what a push of `ref` at `tip` would add over `known` and decides what goes. Content a
 * known commit is seen to hold is not scanned: the remote has it already.
 * @param git - the runner
 * @param cwd - a folder inside the checkout
 * @param ref - the wip ref
 * @param tip - its local tip
 * @param known - commits the remote is known to hold
 * @param allowed - finding ids the host acknowledged
 * @returns what to push of the ref
 * @internal
 */
export async function gateRef(git: GitRunner, cwd: string, ref: string, tip: string, known: readonly string[], allowed: ReadonlySet<string>): Promise<GateDecision> {
  const listing = addedBlobs(git, cwd, tip, known);
  // A ref that moved almost always adds a file to scan: the scanner loads and warms up
  // (compiling on this thread) while git lists the chain on another core, not after it.
  warmScanner().catch(() => undefined);
  const { chain, blobs, held } = await listing;
  // Content the remote already holds (a file put back as it was in a snapshot the remote has)
  // leaves nothing new: it is not read, and with nothing else to scan nothing is linted.
  const unseen = blobs.filter((file) => !held.has(file.blob));
  const findings = (await scanBlobs(git, cwd, unseen)).filter((finding) => !allowed.has(finding.id));
  if (findings.length === 0) return { source: tip, held: null };
  const flagged = new Set(findings.map((finding) => finding.snapshot));
  const first = chain.findIndex((link) => flagged.has(link.commit));
  // The ref goes up to the newest snapshot below the first finding, never to a commit of the
  // head's history below the chain (a head amended away): that is no snapshot, and a wip ref
  // there read as no chain on the remote, and held every later prune push back.
  const below = first > 0 ? chain[first - 1] : undefined;
  const source = below !== undefined && below.snapshot ? below.commit : null;
  return { source, held: { ref, commit: tip, pushed: source, findings } };
}

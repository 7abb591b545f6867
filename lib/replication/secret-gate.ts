// The secret gate: what a push would add of a wip chain is scanned with secretlint's recommended
// rules before it leaves the box, and a snapshot holding a likely secret stays local with every
// snapshot above it. The scanner (secret-scanner.ts, a file of its own in the CLI's bundle) is
// imported as a push starts, while git reads the refs (preloadScanner), so a save or a read
// without a push never loads it. A finding names the path, the rule and the line, never the
// secret: secretlint's own messages quote the match, so they are never passed on.
import { createHash } from 'node:crypto';
import type { HeldBack, SecretFinding } from '../documents/replication.js';
import { addedBlobs, readBlobs } from '../git/storage.js';
import type { AddedBlob } from '../git/storage.js';
import type { GitRunner } from '../git/runner.js';
import type { ScanHit } from './secret-scanner.js';

/** The most bytes of one file scanned: a key sits near the top of the files that hold one. */
const SCAN_LIMIT = 1024 * 1024;

/** git's own test for a binary file: a NUL in the first 8,000 bytes. */
const BINARY_PROBE = 8000;

type Lint = (path: string, content: string) => Promise<ScanHit[]>;

let scanner: Promise<Lint> | undefined;

/** secretlint with its recommended preset (secret-scanner.ts), loaded once, on the first scan. */
function loadScanner(): Promise<Lint> {
  scanner ??= import('./secret-scanner.js').then((module) => module.lint);
  return scanner;
}

/**
 * Starts loading the scanner, for a push that is about to read its refs: a push almost always
 * has a new snapshot to scan, and the load (compiling on this thread, 10 to 18 ms) then runs
 * while git reads the refs and the remote's configuration, instead of after.
 * @internal
 */
export function preloadScanner(): void {
  loadScanner().catch(() => undefined);
}

/**
 * A finding's id: stable across pushes and boxes for the same content at the same path, so a
 * host acknowledges exactly that finding; a changed file is a new finding.
 */
function findingId(blob: string, path: string, rule: string, line: number | null): string {
  return createHash('sha256').update(`${blob}\0${path}\0${rule}\0${line ?? ''}`).digest('hex').slice(0, 20);
}

/** The printable runs of a binary file, one a line, as `strings` prints them. */
function printableRuns(content: Buffer): string {
  return content.toString('latin1').match(/[\x20-\x7e]{8,}/g)?.join('\n') ?? '';
}

/**
 * The text of a file in UTF-16: with a byte order mark (little or big endian), or without one
 * where the first bytes are ASCII in UTF-16 (a zero in every second byte, and in no other); null
 * for anything else.
 */
function utf16Text(content: Buffer): string | null {
  if (content.length >= 2 && content[0] === 0xff && content[1] === 0xfe) return content.subarray(2).toString('utf16le');
  if (content.length >= 2 && content[0] === 0xfe && content[1] === 0xff) return Buffer.from(content.subarray(2, content.length - (content.length % 2))).swap16().toString('utf16le');
  const probe = content.subarray(0, Math.min(content.length, BINARY_PROBE) & ~1);
  if (probe.length < 8) return null;
  for (const start of [1, 0]) {
    let wide = true;
    for (let at = 0; at < probe.length && wide; at += 1) wide = ((at % 2) === start) === (probe[at] === 0);
    if (wide) return start === 1 ? content.toString('utf16le') : Buffer.from(content.subarray(0, content.length & ~1)).swap16().toString('utf16le');
  }
  return null;
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
  const [contents, lint] = await Promise.all([readBlobs(git, cwd, files.map((file) => file.blob), SCAN_LIMIT), loadScanner()]);
  const findings: SecretFinding[] = [];
  for (const file of files) {
    const content = contents.get(file.blob);
    if (content === undefined || content.length === 0) continue;
    // Text in UTF-16 (what Windows PowerShell 5 writes with `>`) holds zero bytes, and would read
    // as binary whose printable runs hold nothing: it is read as the text it is.
    const wide = utf16Text(content);
    const binary = wide === null && content.subarray(0, BINARY_PROBE).includes(0);
    const text = wide ?? (binary ? printableRuns(content) : content.toString('utf8'));
    for (const hit of await lint(file.path, text)) {
      const line = binary ? null : hit.line;
      findings.push({ id: findingId(file.blob, file.path, hit.rule, line), path: file.path, line, rule: hit.rule, snapshot: file.snapshot });
    }
  }
  return findings;
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
  // A ref that moved almost always adds a file to scan: the scanner loads (compiling on this
  // thread) while git lists the chain on another core, not after it.
  loadScanner().catch(() => undefined);
  const { chain, blobs, held } = await listing;
  // Content the remote already holds (a file put back as it was in a snapshot the remote has)
  // leaves nothing new: it is not read, and with nothing else to scan nothing is linted.
  const unseen = blobs.filter((file) => !held.has(file.blob));
  const findings = (await scanBlobs(git, cwd, unseen)).filter((finding) => !allowed.has(finding.id));
  if (findings.length === 0) return { source: tip, held: null };
  const flagged = new Set(findings.map((finding) => finding.snapshot));
  const first = chain.findIndex((link) => flagged.has(link.commit));
  const source = first > 0 ? (chain[first - 1] as { commit: string }).commit : null;
  return { source, held: { ref, commit: tip, pushed: source, findings } };
}

// Fixtures for the tests: real repositories in temporary folders, built with plain git calls
// independent of the SDK. Importing this module isolates git from the machine's own config.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, linkSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, utimesSync, writeFileSync, existsSync, readdirSync, lstatSync, readlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after } from 'node:test';
import assert from 'node:assert/strict';
import { main } from '../cli/main.js';
import { isWipError } from '../lib/errors.js';
import type { WipErrorCode } from '../lib/errors.js';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const BIN = join(ROOT, 'dist', 'bin', 'chant.cjs');

const created: string[] = [];
after(() => {
  for (const dir of created) rmSync(dir, { recursive: true, force: true });
});

/** A fresh temporary folder, removed when the test file ends. */
export function tempDir(prefix = 'chant-wip-'): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  created.push(dir);
  return dir;
}

const HOME = tempDir('chant-wip-home-');
writeFileSync(join(HOME, '.gitconfig'), [
  '[user]', '\tname = Test User', '\temail = test@example.com',
  '[init]', '\tdefaultBranch = main',
  '[protocol "file"]', '\tallow = always',
  '[advice]', '\tdetachedHead = false',
  '',
].join('\n'));
process.env.HOME = HOME;
process.env.XDG_CONFIG_HOME = join(HOME, '.config');
process.env.GIT_CONFIG_NOSYSTEM = '1';
for (const key of Object.keys(process.env)) {
  if (/^GIT_(DIR|WORK_TREE|INDEX_FILE|OBJECT_DIRECTORY|CEILING_DIRECTORIES|COMMON_DIR)$/.test(key)) delete process.env[key];
}

/** The environment the fixtures' own git calls run with: fixed dates so ids are stable. */
export const FIXTURE_ENV: NodeJS.ProcessEnv = {
  ...process.env,
  GIT_AUTHOR_DATE: '2026-10-03T12:00:00Z',
  GIT_COMMITTER_DATE: '2026-10-03T12:00:00Z',
  LC_ALL: 'C',
};

/** Runs plain git and returns its stdout; throws with stderr when it fails. */
export function git(cwd: string, args: readonly string[], options: { input?: string; env?: NodeJS.ProcessEnv; allowFail?: boolean } = {}): string {
  const result = spawnSync('git', args, { cwd, input: options.input, env: { ...FIXTURE_ENV, ...options.env }, encoding: 'utf8', maxBuffer: 1 << 28 });
  if (result.status !== 0 && !options.allowFail) {
    throw new Error(`git ${args.join(' ')} failed (${result.status}): ${result.stderr}`);
  }
  return result.stdout;
}

/** Writes files (creating folders); a null content deletes the path. */
export function writeFiles(dir: string, files: Readonly<Record<string, string | null>>): void {
  for (const [path, content] of Object.entries(files)) {
    const full = join(dir, path);
    if (content === null) {
      rmSync(full, { recursive: true, force: true });
      continue;
    }
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, content);
  }
}

/**
 * The tree `git add --all` gives for the working tree as it is, staged by plain git into a copy
 * of the checkout's index: the reference every save is held to.
 */
export function stagedTree(dir: string): string {
  const gitDir = git(dir, ['rev-parse', '--absolute-git-dir']).trim();
  const index = join(gitDir, 'reference.index');
  rmSync(index, { force: true });
  // A hard link, not a copy: a copy's new mtime would turn off git's racy-clean check, and a
  // same-size edit in the second the index was written would be staged as the old content.
  try {
    linkSync(join(gitDir, 'index'), index);
  } catch {
    // No index yet: git add starts from an empty one.
  }
  const env = { GIT_INDEX_FILE: index };
  git(dir, ['add', '--all', '--sparse'], { env });
  const tree = git(dir, ['write-tree'], { env }).trim();
  rmSync(index, { force: true });
  return tree;
}

/**
 * The tree a save must record for the working tree as it is: what `git add --all` stages into a
 * copy of the checkout's index, but for the local edits of files (and symlinks) under
 * assume-unchanged or skip-worktree, which a save takes and lists as flagged: their entries are
 * written anew in the copy first, without the flags. A copy, not stagedTree's hard link: a link moves the index file's
 * ctime, which the key of a kept private index holds, so the next save would make the copy again.
 */
export function addAllTree(dir: string): string {
  // Each record: the tag, the mode, the blob, the stage, then a tab and the path.
  const flagged = git(dir, ['ls-files', '-s', '-v', '-z']).split('\0').filter((record) => /^[a-zS] /.test(record))
    .map((record) => ({ path: record.slice(record.indexOf('\t') + 1), entry: record.slice(2, record.indexOf('\t')) }))
    .filter(({ path, entry }) => {
      if (!entry.endsWith(' 0')) return false;
      try {
        const stats = lstatSync(join(dir, path));
        return stats.isFile() || stats.isSymbolicLink();
      } catch {
        return false; // gone, or under what is now a file
      }
    });
  const gitDir = git(dir, ['rev-parse', '--absolute-git-dir']).trim();
  const index = join(gitDir, 'expected.index');
  rmSync(index, { force: true });
  if (existsSync(join(gitDir, 'index'))) {
    writeFileSync(index, readFileSync(join(gitDir, 'index')));
    // Given the original's mtime (to the second, earlier rather than later): a copy's new mtime
    // would turn off git's racy-clean check, and a same-size edit in the second the index was
    // written would be staged as the old content.
    const { mtimeMs } = statSync(join(gitDir, 'index'));
    utimesSync(index, Math.floor(mtimeMs / 1000), Math.floor(mtimeMs / 1000));
  }
  const env = { GIT_INDEX_FILE: index };
  // Written anew, without flags or stat data: git stops checking a flagged entry's stat data, so
  // a flag cleared in place could leave a same-size rewrite in the second of its staging unread.
  if (flagged.length > 0) git(dir, ['update-index', '-z', '--index-info'], { env, input: flagged.map(({ path, entry }) => `${entry}\t${path}\0`).join('') });
  git(dir, ['add', '--all', '--sparse'], { env });
  const tree = git(dir, ['write-tree'], { env }).trim();
  rmSync(index, { force: true });
  return tree;
}

/** A repository on `main` with one commit holding `files` (a README by default). */
export function makeRepo(files: Readonly<Record<string, string>> = { 'README.md': 'hello\n' }, options: { initArgs?: readonly string[] } = {}): string {
  const dir = tempDir();
  git(dir, ['init', '-q', '-b', 'main', ...(options.initArgs ?? []), '.']);
  writeFiles(dir, files);
  git(dir, ['add', '-A']);
  git(dir, ['commit', '-q', '-m', 'initial']);
  return dir;
}

/** Every ref and what it names, for "nothing was written" checks. */
export function refsOf(dir: string): string {
  return git(dir, ['for-each-ref', '--format=%(refname) %(objectname)']);
}

/** The working tree as a map of path to a description of content and mode; `.git` left out. */
export function treeOf(dir: string, base = dir): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir)) {
    if (dir === base && name === '.git') continue;
    const full = join(dir, name);
    const rel = full.slice(base.length + 1);
    const stats = lstatSync(full);
    if (stats.isSymbolicLink()) out[rel] = `link:${readlinkSync(full)}`;
    else if (stats.isDirectory()) Object.assign(out, treeOf(full, base));
    else out[rel] = `${(stats.mode & 0o111) !== 0 ? 'x' : '-'}:${readFileSync(full, 'latin1')}`;
  }
  return out;
}

/** The state a write must leave alone when it refuses: refs, index bytes, working tree, status. */
export function stateOf(dir: string): { refs: string; index: string; tree: Record<string, string>; status: string; head: string } {
  const gitDir = git(dir, ['rev-parse', '--absolute-git-dir']).trim();
  const indexFile = join(gitDir, 'index');
  return {
    refs: refsOf(dir),
    index: existsSync(indexFile) ? readFileSync(indexFile).toString('base64') : '',
    tree: treeOf(dir),
    status: git(dir, ['status', '--porcelain=v1', '-z', '--untracked-files=all']),
    head: readFileSync(join(gitDir, 'HEAD'), 'utf8'),
  };
}

/** What one in-process CLI run printed and exited with. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON, or undefined when it is not JSON. */
  doc: any;
}

/** What a run printed, parsed as a JSON document, or undefined when it is not JSON. */
export function parseDocument(stdout: string): any {
  try {
    return JSON.parse(stdout);
  } catch {
    return undefined;
  }
}

/** Runs the CLI in-process, the way the bin does, in `cwd`. */
export async function runCli(cwd: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<CliRun> {
  const { PassThrough } = await import('node:stream');
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const chunks: Buffer[] = [];
  const errors: Buffer[] = [];
  stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
  stderr.on('data', (chunk: Buffer) => errors.push(chunk));
  const code = await main(args, { stdin: process.stdin, stdout, stderr, env, colorDepth: 1, cwd });
  const text = Buffer.concat(chunks).toString('utf8');
  return { code, stdout: text, stderr: Buffer.concat(errors).toString('utf8'), doc: parseDocument(text) };
}

/** Runs the built `chant` bin as a process. */
export function runBin(cwd: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env): CliRun {
  const result = spawnSync(process.execPath, [BIN, ...args], { cwd, env, encoding: 'utf8' });
  return { code: result.status ?? -1, stdout: result.stdout, stderr: result.stderr, doc: parseDocument(result.stdout) };
}

/** Reads a JSON file of the repository. */
export function readJson(path: string): any {
  return JSON.parse(readFileSync(join(ROOT, path), 'utf8'));
}

/**
 * Where the reference implementation's schemas are: beside the repository, outside it, in
 * `../shared/reference`. A clone elsewhere has none, and the comparisons with them are skipped
 * (test/reference.test.ts says so); with CHANT_REQUIRE_REFERENCE=1 (.ci/run sets it) they are
 * mandatory and a missing folder fails every test that compares.
 */
export const REFERENCE_DIR = join(ROOT, '..', 'shared', 'reference');

/** Why the reference schemas are not compared with, or null when they are. */
export function referenceMissing(): string | null {
  if (existsSync(join(REFERENCE_DIR, 'wip.schema.json')) && existsSync(join(REFERENCE_DIR, 'wip-write.schema.json'))) return null;
  const reason = `the reference schemas are not in ${REFERENCE_DIR}: documents are checked against this project's schemas only`;
  if (process.env.CHANT_REQUIRE_REFERENCE === '1') throw new Error(`CHANT_REQUIRE_REFERENCE=1 and ${reason}`);
  return reason;
}

/**
 * Checks a document against this project's schemas and against the reference implementation's
 * (`../shared/reference/`, when present: see {@link referenceMissing}), returning the problems of
 * each; codes this project adds beyond the reference's closed list are the one allowed difference.
 */
export async function schemaProblems(document: unknown): Promise<{ ours: string[]; reference: string[] }> {
  const { validateDocument } = await import('../lib/documents/validate.js');
  const ours = validateDocument(document).map((problem) => `${problem.path} ${problem.message}`);
  if (referenceMissing() !== null) return { ours, reference: [] };
  const { Ajv2020 } = await import('ajv/dist/2020.js');
  if (referenceAjv === undefined) {
    referenceAjv = new Ajv2020({ allErrors: true, strict: false });
    for (const name of ['wip.schema.json', 'wip-write.schema.json']) {
      referenceAjv.addSchema(JSON.parse(readFileSync(join(REFERENCE_DIR, name), 'utf8')));
    }
  }
  const validate = referenceAjv.getSchema((document as { $schema: string }).$schema);
  const reference = validate === undefined ? ['no reference schema'] : validate(document) ? [] : (validate.errors ?? []).map((error) => `${error.instancePath} ${error.message}`);
  return { ours, reference };
}
let referenceAjv: import('ajv/dist/2020.js').Ajv2020 | undefined;

/** Asserts a document validates against both schema sets (the reference's unless `oursOnly`). */
export async function assertValidDocument(document: unknown, options: { oursOnly?: boolean } = {}): Promise<void> {
  const { ours, reference } = await schemaProblems(document);
  if (ours.length > 0) throw new Error(`document does not follow our schema: ${ours.join('; ')}\n${JSON.stringify(document, null, 2)}`);
  if (!options.oursOnly && reference.length > 0) throw new Error(`document does not follow the reference schema: ${reference.join('; ')}\n${JSON.stringify(document, null, 2)}`);
}

/** Asserts that a promise or call fails with a WipError of `code` whose message matches; returns the message. */
export async function assertRefusal(run: () => unknown, code: WipErrorCode, message?: RegExp): Promise<string> {
  let caught: unknown;
  try {
    await run();
  } catch (error) {
    caught = error;
  }
  assert.ok(isWipError(caught, code), `expected ${code}, got ${caught instanceof Error ? `${(caught as { code?: string }).code}: ${caught.message}` : String(caught)}`);
  if (message) assert.match(caught.message, message);
  return caught.message;
}

/** git's own numstat totals of two commits, independent of the SDK. */
export function numstat(dir: string, from: string, to: string): { files: number; added: number; removed: number } {
  const lines = git(dir, ['diff', '--numstat', '--no-renames', from, to]).trim().split('\n').filter((line) => line.length > 0);
  let added = 0;
  let removed = 0;
  for (const line of lines) {
    const [a, r] = line.split('\t');
    if (a !== '-') added += Number(a);
    if (r !== '-') removed += Number(r);
  }
  return { files: lines.length, added, removed };
}

/** The git first on the test's PATH: a script that stands in for git runs it by this path. */
export const REAL_GIT = spawnSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).stdout.trim();

/** A shell word that holds `text` as it is. */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * A `git` that stands in for the real one, first on PATH in the environment it gives: a shell
 * script of `lines`, in `bin/` of a new temporary folder (`dir`, for the script's own files).
 * The paths are written into the script, since chant hands git a curated environment.
 */
export function gitStandIn(prefix: string, lines: (dir: string) => readonly string[]): { dir: string; env: NodeJS.ProcessEnv } {
  const dir = tempDir(prefix);
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'git'), ['#!/bin/sh', `d=${shellQuote(dir)}`, ...lines(dir), ''].join('\n'));
  chmodSync(join(bin, 'git'), 0o755);
  return { dir, env: { ...process.env, PATH: `${bin}:${process.env.PATH}` } };
}

/** How a process of the built bin ended, and what it wrote. */
export interface BinProcess {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
}

/** Starts the built bin as a process of its own, without waiting for it: how it ends. */
export function startBin(cwd: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<BinProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') }));
  });
}

/**
 * A PKCS#12 file as GCP issues a service account's key: an RSA key and its certificate under the
 * password `notasecret`, made by openssl (a new key each run, never issued), 3DES and SHA-1 as
 * GCP's are. `password` makes one that is not a GCP key.
 */
/** Why a test that needs a `.p12` key ({@link p12Key}) is skipped: openssl, which makes it, is not installed; false when it is. */
export const NO_OPENSSL: string | false = spawnSync('openssl', ['version']).error === undefined ? false : 'openssl is not installed here (it makes the .p12 key)';

export function p12Key(password = 'notasecret'): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'chant-p12-'));
  try {
    const openssl = (args: readonly string[]): void => {
      const result = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
      assert.equal(result.status, 0, `openssl ${args.join(' ')}: ${result.stderr}`);
    };
    openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=sa', '-days', '1', '-keyout', 'key.pem', '-out', 'cert.pem']);
    openssl(['pkcs12', '-export', '-inkey', 'key.pem', '-in', 'cert.pem', '-passout', `pass:${password}`, '-keypbe', 'PBE-SHA1-3DES', '-certpbe', 'PBE-SHA1-3DES', '-macalg', 'sha1', '-out', 'key.p12']);
    return readFileSync(join(dir, 'key.p12'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// secretlint with its recommended preset, in a module of its own: the secret gate imports it on
// its first scan, and the CLI's bundle keeps it in a file of its own (scripts/bundle.mjs), so a
// run that scans nothing never reads it. Its messages quote the match, so only the rule and the
// line leave this file.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, extname, join } from 'node:path';
import { lintSource } from '@secretlint/core';
import { secretLintProfiler } from '@secretlint/profiler';
import { creator } from '@secretlint/secretlint-rule-preset-recommend';

// secretlint's profiler puts 36 marks a file on the process's performance timeline and keeps
// each for the process's life (6,000 files: 216,000 marks): in a process that lives as long as
// Studio's, that only grows, and the host's own timeline fills with them. The CLI's and the
// CommonJS copies leave the profiler out (scripts/bundle.mjs); this quiets it where the package's
// ES modules load secretlint as it is.
secretLintProfiler.mark = () => undefined;

/**
 * One hit of a rule: the rule's id and message id, and the line it starts on.
 * @internal
 */
export interface ScanHit {
  rule: string;
  line: number;
}

const config = { rules: [{ id: '@secretlint/secretlint-rule-preset-recommend', rule: creator }] };

/**
 * The extensions whose rule reads the file itself, from the path it is given, not the content:
 * the GCP rule opens a `.p12` (a service account's key, under the password `notasecret`) with
 * node-forge. Handed the snapshot's path, it read nothing, or the working tree's file rather than
 * what the push sends.
 */
const READ_FROM_FILE = new Set(['.p12']);

/**
 * Lints one file's text with the recommended rules.
 * @param path - the file's path, which some rules read
 * @param content - its text
 * @param bytes - its bytes, for a rule that reads the file itself (see {@link READ_FROM_FILE}):
 *   written to a private temporary folder for that lint only, and removed after
 * @returns the hits, never the matched text
 * @internal
 */
export function lint(path: string, content: string, bytes?: Uint8Array): Promise<ScanHit[]> {
  // secretlint's own CLI gives every file its extension; a rule that tells files by it (the GCP
  // rule's `.p12` keys) found nothing without it. Not `.json`: the GCP rule then parses every JSON
  // file (a 96 KB package-lock.json linted in 1.4 ms instead of 1.0) for a service account's key,
  // which the privatekey rule finds in it already.
  const ext = extname(path).toLowerCase();
  if (!READ_FROM_FILE.has(ext)) return hits(path, ext === '.json' ? '' : ext, content);
  // Without the bytes, the rule is not told the extension: it would read whatever the path names
  // on this disk.
  return bytes === undefined ? hits(path, '', content) : hitsInCopy(path, ext, content, bytes);
}

/** {@link hits} where the rule reads the file: `bytes` written to a private temporary folder, removed after. */
async function hitsInCopy(path: string, ext: string, content: string, bytes: Uint8Array): Promise<ScanHit[]> {
  const dir = mkdtempSync(join(tmpdir(), 'chant-wip-scan-'));
  try {
    const file = join(dir, basename(path));
    writeFileSync(file, bytes, { mode: 0o600 });
    return await hits(file, ext, content);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What the rules find in one text, as {@link ScanHit}s. */
async function hits(filePath: string, ext: string, content: string): Promise<ScanHit[]> {
  const result = await lintSource({ source: { filePath, ext, content, contentType: 'text' }, options: { config } });
  return result.messages.map((message) => ({ rule: `${message.ruleId}:${message.messageId}`, line: message.loc.start.line }));
}

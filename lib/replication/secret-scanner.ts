// secretlint with its recommended preset, in a module of its own: the secret gate imports it on
// its first scan, and the CLI's bundle keeps it in a file of its own (scripts/bundle.mjs), so a
// run that scans nothing never reads it. Its messages quote the match, so only the rule and the
// line leave this file.
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
 * Lints one file's text with the recommended rules.
 * @param path - the file's path, which some rules read
 * @param content - its text
 * @returns the hits, never the matched text
 * @internal
 */
export async function lint(path: string, content: string): Promise<ScanHit[]> {
  const result = await lintSource({ source: { filePath: path, content, contentType: 'text' }, options: { config } });
  return result.messages.map((message) => ({ rule: `${message.ruleId}:${message.messageId}`, line: message.loc.start.line }));
}

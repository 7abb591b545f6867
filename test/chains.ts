// Chains of snapshots built fast, with one git fast-import stream instead of a save per snapshot.
import { join } from 'node:path';
import { git, tempDir } from './helpers.js';

/** When the first snapshot of a built chain is taken, in seconds. */
export const BASE = Date.parse('2026-10-01T00:00:00Z') / 1000;

/**
 * Builds `count` snapshots on refs/chant/wip/main with one fast-import stream: snapshot i adds
 * `turns/<i % 50>.txt` holding i, is taken at BASE + i minutes, and is labelled `keep:<i>` when
 * `labelled(i)`.
 */
export function buildChain(dir: string, count: number, labelled: (i: number) => boolean = () => false): string[] {
  const head = git(dir, ['rev-parse', 'HEAD']).trim();
  const parts: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const label = labelled(i) ? `keep:${i}` : null;
    const message = `chant wip: main${label === null ? '' : ` (${label})`}\n\nChant-Wip-Branch: main\nChant-Wip-Head: ${head}\nChant-Wip-Kind: save\n${label === null ? '' : `Chant-Wip-Label: ${label}\n`}`;
    const content = `turn ${i}\n`;
    parts.push(
      'commit refs/chant/wip/main', `mark :${i + 1}`, `committer Test User <test@example.com> ${BASE + i * 60} +0000`,
      `data ${Buffer.byteLength(message)}`, message,
      i === 0 ? `from ${head}` : `from :${i}`, ...(i === 0 ? [] : [`merge ${head}`]),
      `M 100644 inline turns/${i % 50}.txt`, `data ${Buffer.byteLength(content)}`, content, '',
    );
  }
  const marks = join(tempDir(), 'marks');
  git(dir, ['fast-import', '--quiet', `--export-marks=${marks}`], { input: `${parts.join('\n')}\n` });
  const tips = git(dir, ['rev-list', '--first-parent', 'refs/chant/wip/main']).trim().split('\n');
  return tips.slice(0, count);
}


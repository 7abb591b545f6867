import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { BIN, ROOT } from './helpers.js';

// The hosts run the built bin, as CHANT names it, and build their own scratch repositories.
const env = { ...process.env, CHANT: `${process.execPath} ${BIN}` };

function has(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`]).status === 0;
}

describe('hosts driving every verb and every failure', () => {
  it('examples/host-drive.py gets one document from every command line', (t) => {
    if (!has('python3')) return t.skip('python3 is not installed');
    const result = spawnSync('python3', [join(ROOT, 'examples', 'host-drive.py')], { env, encoding: 'utf8', timeout: 240_000 });
    assert.equal(result.status, 0, result.stdout + result.stderr);
    assert.equal(result.stderr, '');
    assert.doesNotMatch(result.stdout, /^FAIL/m);
    assert.match(result.stdout, /^29 steps, each one document; /m);
    for (const code of ['write-usage-invalid', 'principal-unidentified', 'wip-snapshot-unknown', 'wip-none', 'wip-branch-other', 'wip-no-branch', 'wip-restore-blocked',
      'wip-policy-none', 'wip-remote-unknown', 'declaration-unparseable', 'not-a-git-repository', 'git-failed']) {
      assert.match(result.stdout, new RegExp(`^ok .*: ${code}$`, 'm'), code);
    }
    if (/not validated/.test(result.stdout)) t.diagnostic('python3 has no jsonschema: the documents were parsed, not validated');
  });

  it('examples/host-drive.sh gets one document from every command line', (t) => {
    if (!has('bash')) return t.skip('bash is not installed');
    const result = spawnSync('bash', [join(ROOT, 'examples', 'host-drive.sh')], { env, encoding: 'utf8', timeout: 240_000 });
    assert.equal(result.status, 0, result.stdout + result.stderr);
    assert.equal(result.stderr, '');
    assert.match(result.stdout, /^29 steps, each one document$/m);
  });
});

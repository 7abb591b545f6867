import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { compileFromFile } from 'json-schema-to-typescript';
import { WIP_ERROR_CODES } from '../lib/errors.js';
import { makeRepo, ROOT, runCli, tempDir, writeFiles } from './helpers.js';

const WRITE_SCHEMA = join(ROOT, 'schemas', 'workspace', 'wip-write', 'v1', 'wip-write.schema.json');
const READ_SCHEMA = join(ROOT, 'schemas', 'workspace', 'wip', 'v1', 'wip.schema.json');
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const QUICKTYPE = join(ROOT, 'node_modules', 'quicktype', 'dist', 'index.js');

function has(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`]).status === 0;
}

function tsc(dir: string, file: string): { code: number | null; output: string } {
  const result = spawnSync(process.execPath, [TSC, '--ignoreConfig', '--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--skipLibCheck', file], { cwd: dir, encoding: 'utf8' });
  return { code: result.status, output: result.stdout + result.stderr };
}

/** A save and a refusal, as the CLI prints them. */
async function realDocuments(): Promise<{ save: unknown; refusal: unknown }> {
  const dir = makeRepo();
  writeFiles(dir, { 'a.txt': 'one\n' });
  const save = await runCli(dir, ['workspace', 'wip', 'save', '--label', 'turn:1']);
  const refusal = await runCli(dir, ['workspace', 'wip', 'restore', '0000000']);
  return { save: save.doc, refusal: refusal.doc };
}

describe('code generated from the published schemas', () => {
  it('json-schema-to-typescript: generated types narrow a save from a refusal and know every code', async () => {
    const dir = tempDir('chant-codegen-ts-');
    for (const [schema, name] of [[WRITE_SCHEMA, 'wip-write.ts'], [READ_SCHEMA, 'wip.ts']] as const) {
      writeFileSync(join(dir, name), await compileFromFile(schema, { bannerComment: '', additionalProperties: false, cwd: dir }));
    }
    const generated = readFileSync(join(dir, 'wip-write.ts'), 'utf8');
    assert.doesNotMatch(generated, /\[k: string\]: unknown/, 'no open objects');
    assert.match(generated, /export interface WipSaveDocument \{/, 'the $defs titles name the types');
    assert.match(generated, /contract: 1;/);
    writeFileSync(join(dir, 'package.json'), '{"type": "module"}\n');
    const cases = WIP_ERROR_CODES.map((code) => `    case '${code}': return '${code}';`).join('\n');
    writeFileSync(join(dir, 'host.ts'), [
      "import type { ChantWorkspaceWipSaveRestorePushFetchOutput as WriteOutput, WipWriteErrorCode } from './wip-write.js';",
      "import type { ChantWorkspaceWipOutput as ReadOutput } from './wip.js';",
      'export function describe(doc: WriteOutput): string {',
      "  if ('error' in doc) return refusal(doc.error.code);",
      "  if (doc.action === 'save') return `saved ${doc.snapshot.commit} ${doc.created}`;",
      "  if (doc.action === 'restore') return `restored ${doc.paths.length}`;",
      "  if (doc.action === 'push') return `pushed ${doc.replication.pushed.length}`;",
      '  return `fetched ${doc.refs.length}`;',
      '}',
      'function refusal(code: WipWriteErrorCode): string {',
      '  switch (code) {',
      cases,
      '    default: { const unknown: never = code; return unknown; }',
      '  }',
      '}',
      'export function latest(doc: ReadOutput): string | null {',
      "  if ('error' in doc) return doc.error.code;",
      '  const contract: 1 = doc.contract;',
      '  return doc.branches[0]?.snapshots[0]?.commit ?? String(contract);',
      '}',
      '',
    ].join('\n'));
    const good = tsc(dir, 'host.ts');
    assert.equal(good.code, 0, good.output);
    // The narrowing is needed, and a code outside the list is refused: the types say so.
    writeFileSync(join(dir, 'wrong.ts'), [
      "import type { ChantWorkspaceWipSaveRestorePushFetchOutput as WriteOutput, WipWriteErrorCode } from './wip-write.js';",
      "export const commit = (doc: WriteOutput) => doc.action === 'save' ? doc.snapshot.commit : null;",
      "export const code: WipWriteErrorCode = 'no-such-code';",
      '',
    ].join('\n'));
    const wrong = tsc(dir, 'wrong.ts');
    assert.notEqual(wrong.code, 0);
    assert.match(wrong.output, /snapshot/);
    assert.match(wrong.output, /no-such-code/);
  });

  it('quicktype: generated Python (or TypeScript without python3) reads a save and a refusal and knows every code', async (t) => {
    const dir = tempDir('chant-codegen-qt-');
    const python = has('python3');
    const out = join(dir, python ? 'wip_write.py' : 'wip-write.ts');
    const args = python ? ['--lang', 'python', '--python-version', '3.7'] : ['--lang', 'typescript'];
    const generated = spawnSync(process.execPath, [QUICKTYPE, '--src-lang', 'schema', ...args, '--top-level', 'WipWrite', '-o', out, WRITE_SCHEMA], { encoding: 'utf8', timeout: 120_000 });
    assert.equal(generated.status, 0, generated.stdout + generated.stderr);
    const source = readFileSync(out, 'utf8');
    for (const code of WIP_ERROR_CODES) assert.ok(source.includes(`"${code}"`), `${code} is in the generated enum`);
    if (!python) {
      t.diagnostic('python3 is not installed: quicktype wrote TypeScript, compiled here');
      writeFileSync(join(dir, 'package.json'), '{"type": "module"}\n');
      const compiled = tsc(dir, 'wip-write.ts');
      assert.equal(compiled.code, 0, compiled.output);
      return;
    }
    const { save, refusal } = await realDocuments();
    writeFileSync(join(dir, 'save.json'), JSON.stringify(save));
    writeFileSync(join(dir, 'refusal.json'), JSON.stringify(refusal));
    writeFileSync(join(dir, 'host.py'), [
      'import json, sys',
      'from wip_write import WipWriteErrorCode, wip_write_from_dict',
      'save = wip_write_from_dict(json.load(open("save.json")))',
      'refusal = wip_write_from_dict(json.load(open("refusal.json")))',
      'assert save.error is None and save.snapshot is not None and isinstance(save.contract, int), save',
      'assert refusal.error is not None and refusal.error.code is WipWriteErrorCode.WIP_SNAPSHOT_UNKNOWN, refusal',
      'print(json.dumps(sorted(code.value for code in WipWriteErrorCode)))',
      '',
    ].join('\n'));
    const run = spawnSync('python3', ['host.py'], { cwd: dir, encoding: 'utf8' });
    assert.equal(run.status, 0, run.stdout + run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), [...WIP_ERROR_CODES].sort());
  });
});

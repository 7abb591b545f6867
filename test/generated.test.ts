import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ROOT } from './helpers.js';
import { publishedSchemas } from '../lib/documents/schemas.js';
import { cliReference } from '../cli/reference.js';
import { VERSION } from '../lib/version.js';

describe('generated files', () => {
  it('keeps every committed schema equal to what the TypeBox types generate (npm run schemas rewrites them)', () => {
    for (const { path, schema } of publishedSchemas()) {
      assert.equal(readFileSync(join(ROOT, path), 'utf8'), `${JSON.stringify(schema, null, 2)}\n`, `${path} is stale: run npm run schemas`);
    }
  });

  it('publishes the schemas at the $ids the contract names, draft 2020-12', () => {
    const ids = publishedSchemas().map(({ schema }) => [schema.$schema, schema.$id]);
    assert.deepEqual(ids.slice(0, 2), [
      ['https://json-schema.org/draft/2020-12/schema', 'https://intentius.io/chant/schemas/workspace/wip/v1/wip.schema.json'],
      ['https://json-schema.org/draft/2020-12/schema', 'https://intentius.io/chant/schemas/workspace/wip-write/v1/wip-write.schema.json'],
    ]);
  });

  it('keeps the result interfaces in lib/documents/ equal to what the TypeBox types generate (npm run interfaces rewrites them)', () => {
    const result = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts', 'interfaces.ts'), '--check'], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(result.status, 0, result.stderr);
  });

  it('keeps the verb lists, the WipStore methods, the entry\'s verb types and the CLI registry equal to what the verb tables generate (npm run verbs rewrites them)', () => {
    const result = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts', 'verbs.ts'), '--check'], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(result.status, 0, result.stderr);
  });

  it('keeps docs/cli.md equal to what the CLI definitions generate (npm run docs rewrites it)', () => {
    assert.equal(readFileSync(join(ROOT, 'docs', 'cli.md'), 'utf8'), cliReference(), 'docs/cli.md is stale: run npm run docs');
  });

  it('keeps the version documents print equal to package.json', () => {
    assert.equal(VERSION, JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version);
  });

  for (const [config, report] of [['api-extractor.json', 'etc/chant-wip.api.md'], ['api-extractor.documents.json', 'etc/chant-wip-documents.api.md']] as const) {
    it(`keeps the committed API report ${report} equal to the built declarations (npm run api rewrites it)`, () => {
      const result = spawnSync(process.execPath, [join(ROOT, 'node_modules', '@microsoft', 'api-extractor', 'bin', 'api-extractor'), 'run', '-c', config], { cwd: ROOT, encoding: 'utf8' });
      assert.equal(result.status, 0, `api-extractor failed or ${report} is stale: run npm run api\n${result.stdout}${result.stderr}`);
      assert.doesNotMatch(result.stdout, /Warning:/, 'api-extractor runs clean');
    });
  }
});

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, it } from 'node:test';
import { ROOT } from './helpers.js';

// A resolve hook that refuses TypeBox and Ajv: an entry that loads either fails to import.
const REFUSE = `export async function resolve(specifier, context, next) {
  if (/^(typebox|ajv|ajv-formats)(\\/|$)/.test(specifier)) throw new Error('loaded ' + specifier);
  return next(specifier, context);
}`;
const PRELOAD = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(REFUSE)}`)});`;

/** Imports a built entry in a node whose loader refuses TypeBox and Ajv; the exit code and what it printed. */
function importRefusing(entry: string): { status: number | null; output: string } {
  const url = pathToFileURL(join(ROOT, 'dist', 'lib', entry)).href;
  const result = spawnSync(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(PRELOAD)}`, '--input-type=module', '-e', `const m = await import(${JSON.stringify(url)}); console.log(Object.keys(m).length);`], { encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describe('the package entries (after npm run build)', () => {
  it('loads the SDK, chant-wip, without TypeBox or Ajv', () => {
    const { status, output } = importRefusing('index.js');
    assert.equal(status, 0, output);
  });

  it('loads TypeBox for chant-wip/documents, so the check above can fail', () => {
    const { status, output } = importRefusing(join('documents', 'index.js'));
    assert.notEqual(status, 0);
    assert.match(output, /loaded typebox/);
  });
});

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { publishedSchemas } from '../lib/documents/schemas.js';
import { REFERENCE_DIR, referenceMissing } from './helpers.js';

// The reference implementation's schemas live outside the repository, in ../shared/reference.
// Every test that checks a document checks it against them too when they are there (see
// schemaProblems and assertDocument); this file says, once, when they are not, and .ci/run sets
// CHANT_REQUIRE_REFERENCE=1 so that there they must be.

describe('the reference schemas', () => {
  it('are compared with: every document a test checks is checked against ../shared/reference too', (t) => {
    const missing = referenceMissing();
    if (missing !== null) {
      t.skip(`${missing} (set CHANT_REQUIRE_REFERENCE=1 to make them mandatory, as .ci/run does)`);
      return;
    }
    const ajv = new Ajv2020({ allErrors: true, strict: false });
    for (const name of ['wip.schema.json', 'wip-write.schema.json']) ajv.addSchema(JSON.parse(readFileSync(join(REFERENCE_DIR, name), 'utf8')));
    const ours = new Set(publishedSchemas().map(({ schema }) => schema.$id));
    for (const name of ['wip.schema.json', 'wip-write.schema.json']) {
      const { $id } = JSON.parse(readFileSync(join(REFERENCE_DIR, name), 'utf8')) as { $id: string };
      assert.ok(ajv.getSchema($id), `${name} compiles`);
      assert.ok(ours.has($id), `this project publishes a schema at the reference's $id ${$id}`);
    }
  });
});

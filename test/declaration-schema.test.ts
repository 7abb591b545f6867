import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { publishedSchemas } from '../lib/documents/schemas.js';
import { isWipError } from '../lib/errors.js';
import { Policy } from '../lib/replication/policy.js';
import { makeRepo, writeFiles } from './helpers.js';

const replicate = { remote: 'origin', refs: ['wip'], on: ['save'], every: '10m' };

// What chant-wip reads and tolerates, each form with the verdict the SDK gives it.
const ACCEPTED: Array<[string, unknown]> = [
  ['an empty declaration', {}],
  ['unknown keys everywhere', { workspace: 'x', members: [{ name: 'app', role: 'web', box: { image: 'node', replicate: { ...replicate, 'x-note': 1 } } }], 'x-top': true }],
  ['a minReader that is older', { minReader: '0.90.0' }],
  ['a minReader with pre-release and build', { minReader: '0.103.0-rc.1+build.5' }],
  ['identity of any shape', { identity: 'identified' }],
  ['identity identified', { identity: { attribution: 'identified' } }],
  ['agents of any shape', { agents: [1, { name: 'hud', principals: 'x' }] }],
  ['members without names or boxes', { members: [{}, { name: 3 }] }],
  ['one box with replicate among others', { members: [{ name: 'a', box: {} }, { name: 'b', box: { replicate: {} } }, { name: 'c' }] }],
];
const REFUSED: Array<[string, unknown]> = [
  ['a top level that is not an object', [1, 2]],
  ['a minReader that is not a version', { minReader: 'latest' }],
  ['members that is not an array', { members: { app: {} } }],
  ['a member that is not an object', { members: ['app'] }],
  ['a box that is null', { members: [{ name: 'app', box: null }] }],
  ['a replicate with an unknown key', { members: [{ name: 'app', box: { replicate: { remotes: ['origin'] } } }] }],
  ['a replicate with a URL for remote', { members: [{ name: 'app', box: { replicate: { remote: 'https://example.com/r.git' } } }] }],
  ['two boxes with replicate', { members: [{ name: 'a', box: { replicate: {} } }, { name: 'b', box: { replicate: {} } }] }],
];

describe('the published schema of the whole declaration', () => {
  const published = publishedSchemas().find((entry) => entry.path === 'schemas/workspace/declaration/v1/declaration.schema.json');
  const validate = new Ajv2020({ strict: true, allErrors: true }).compile(published?.schema ?? {});

  it('accepts what chant-wip reads and tolerates, as the SDK does', async () => {
    assert.ok(published);
    for (const [name, declaration] of ACCEPTED) {
      const dir = makeRepo();
      writeFiles(dir, { 'chant.workspace.json': JSON.stringify(declaration) });
      await Policy.load({ cwd: dir });
      assert.equal(validate(declaration), true, `the schema accepts ${name}: ${JSON.stringify(validate.errors)}`);
    }
  });

  it('refuses what chant-wip refuses', async () => {
    for (const [name, declaration] of REFUSED) {
      const dir = makeRepo();
      writeFiles(dir, { 'chant.workspace.json': JSON.stringify(declaration) });
      await assert.rejects(Policy.load({ cwd: dir }), (error) => isWipError(error, 'declaration-invalid'), name);
      assert.equal(validate(declaration), false, `the schema refuses ${name}`);
    }
  });
});

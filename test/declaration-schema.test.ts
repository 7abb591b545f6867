import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { publishedSchemas } from '../lib/documents/schemas.js';
import { isWipError } from '../lib/errors.js';
import { Policy } from '../lib/replication/policy.js';
import { readWipSettings } from '../lib/workspace/wip-settings.js';
import { makeRepo, writeFiles } from './helpers.js';

/** What the SDK makes of a declaration: the policy and the save settings, both read. */
function sdkReads(dir: string): Promise<unknown> {
  return Promise.all([Policy.load({ cwd: dir }), readWipSettings(dir, dir)]);
}

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
  ['a replicate with an allowlist', { members: [{ name: 'app', box: { replicate: { allow: ['0123456789abcdef0123'] } } }] }],
  ['a retain with every rule', { members: [{ name: 'app', box: { retain: { keepLast: 100, keepWithin: '7d', keepLabelled: true, onSave: true, 'x-note': 1 } } }] }],
  ['a retain of labelled snapshots only', { members: [{ name: 'app', box: { retain: { keepLabelled: true } } }] }],
  ['retain and replicate on different boxes', { members: [{ name: 'a', box: { replicate: {} } }, { name: 'b', box: { retain: { keepWithin: '12h' } } }] }],
  ['a wip maxFileSize as a size', { wip: { maxFileSize: '64M' } }],
  ['a wip maxFileSize in bytes, and other wip keys', { wip: { maxFileSize: 1000, later: true } }],
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
  ['an allowlist entry that is not a finding id', { members: [{ name: 'app', box: { replicate: { allow: ['GHP_TOKEN'] } } }] }],
  ['an allowlist naming an id twice', { members: [{ name: 'app', box: { replicate: { allow: ['0123456789abcdef0123', '0123456789abcdef0123'] } } }] }],
  ['a retain with no rule', { members: [{ name: 'app', box: { retain: { onSave: true } } }] }],
  ['a retain whose only rule is keepLabelled false', { members: [{ name: 'app', box: { retain: { keepLabelled: false } } }] }],
  ['a retain with keepLast 0', { members: [{ name: 'app', box: { retain: { keepLast: 0 } } }] }],
  ['a retain with a fractional keepLast', { members: [{ name: 'app', box: { retain: { keepLast: 2.5 } } }] }],
  ['a retain with an age in words', { members: [{ name: 'app', box: { retain: { keepWithin: '7 days' } } }] }],
  ['a retain with an unknown key', { members: [{ name: 'app', box: { retain: { keepFirst: 3 } } }] }],
  ['a retain that is a number', { members: [{ name: 'app', box: { retain: 30 } }] }],
  ['two boxes with retain', { members: [{ name: 'a', box: { retain: { keepLast: 1 } } }, { name: 'b', box: { retain: { keepLast: 2 } } }] }],
  ['a wip that is not an object', { wip: '32M' }],
  ['a wip maxFileSize that is no size', { wip: { maxFileSize: 'lots' } }],
  ['a negative wip maxFileSize', { wip: { maxFileSize: -1 } }],
];

describe('the published schema of the whole declaration', () => {
  const published = publishedSchemas().find((entry) => entry.path === 'schemas/workspace/declaration/v1/declaration.schema.json');
  const validate = new Ajv2020({ strict: true, allErrors: true }).compile(published?.schema ?? {});

  it('accepts what chant-wip reads and tolerates, as the SDK does', async () => {
    assert.ok(published);
    for (const [name, declaration] of ACCEPTED) {
      const dir = makeRepo();
      writeFiles(dir, { 'chant.workspace.json': JSON.stringify(declaration) });
      await sdkReads(dir);
      assert.equal(validate(declaration), true, `the schema accepts ${name}: ${JSON.stringify(validate.errors)}`);
    }
  });

  it('refuses what chant-wip refuses', async () => {
    for (const [name, declaration] of REFUSED) {
      const dir = makeRepo();
      writeFiles(dir, { 'chant.workspace.json': JSON.stringify(declaration) });
      await assert.rejects(sdkReads(dir), (error) => isWipError(error, 'declaration-invalid'), name);
      assert.equal(validate(declaration), false, `the schema refuses ${name}`);
    }
  });
});

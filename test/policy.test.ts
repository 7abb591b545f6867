import { makeRepo, readJson, tempDir, writeFiles, assertRefusal } from './helpers.js';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { findDeclaration, parseDeclaration, readDeclaration } from '../lib/workspace/declaration.js';
import { declaredReplicate } from '../lib/replication/policy.js';
import { publishedSchemas } from '../lib/documents/schemas.js';
import { isWipError } from '../lib/errors.js';
import { Policy } from '../lib/replication/policy.js';
import { Replicator } from '../lib/replication/replicator.js';
import { WipStore } from '../lib/store/wip-store.js';
import type { PolicyDocument } from '../lib/documents/replication.js';

const ALL = { remote: 'origin', refs: ['work', 'kept', 'wip', 'ledger'], on: ['save', 'release'], every: null };

/** A checkout whose top holds `files`, the declaration among them. */
function checkout(files: Readonly<Record<string, string>>): string {
  const top = makeRepo();
  writeFiles(top, files);
  return top;
}

function declaring(replicate: unknown, name = 'app'): string {
  return `${JSON.stringify({ members: [{ name, box: { replicate } }] }, null, 2)}\n`;
}

const refuses = assertRefusal;

/** Where a token first appears in a text, as `line:column`, counted independently of the SDK. */
function positionOf(text: string, token: string): string {
  const lines = text.split('\n');
  const line = lines.findIndex((candidate) => candidate.includes(token));
  assert.ok(line >= 0, `${token} is in the text`);
  return `${line + 1}:${(lines[line] as string).indexOf(token) + 1}`;
}

// Each refused form with the field its message must name.
const REFUSED: readonly { name: string; replicate: Record<string, unknown>; field: string }[] = [
  { name: 'an unknown ref class', replicate: { refs: ['everything'] }, field: 'refs[0]' },
  { name: 'an empty refs', replicate: { refs: [] }, field: 'refs' },
  { name: 'a repeated ref class', replicate: { refs: ['wip', 'kept', 'wip'] }, field: 'refs[2]' },
  { name: 'a repeated trigger', replicate: { on: ['save', 'save'] }, field: 'on[1]' },
  { name: 'an unknown trigger', replicate: { on: ['write'] }, field: 'on[0]' },
  { name: 'an every of words', replicate: { every: 'soon' }, field: 'every' },
  { name: 'an every of zero', replicate: { every: '0m' }, field: 'every' },
  { name: 'an every in days', replicate: { every: '5d' }, field: 'every' },
  { name: 'an every that is a number', replicate: { every: 10 }, field: 'every' },
  { name: 'a URL as remote', replicate: { remote: 'https://example.com/repo.git' }, field: 'remote' },
  { name: 'a remote starting with a dot', replicate: { remote: '.origin' }, field: 'remote' },
  { name: 'a remote of 65 characters', replicate: { remote: `a${'b'.repeat(64)}` }, field: 'remote' },
  { name: 'refs that is a string', replicate: { refs: 'wip' }, field: 'refs' },
  { name: 'an unknown key', replicate: { remotes: 'origin' }, field: 'remotes' },
];

// Each accepted form with what it reads back as.
const ACCEPTED: readonly { name: string; replicate: Record<string, unknown>; reads: Record<string, unknown> }[] = [
  { name: 'an empty block', replicate: {}, reads: ALL },
  { name: 'an x- key', replicate: { 'x-studio': { tier: 2 } }, reads: ALL },
  { name: 'reordered lists', replicate: { refs: ['wip', 'kept'], on: ['release', 'save'] }, reads: { ...ALL, refs: ['kept', 'wip'] } },
  { name: 'an empty on', replicate: { on: [] }, reads: { ...ALL, on: [] } },
  { name: 'every field', replicate: { remote: 'mirror_1.a-b', refs: ['ledger'], on: ['release'], every: '90s' }, reads: { remote: 'mirror_1.a-b', refs: ['ledger'], on: ['release'], every: '90s' } },
  { name: 'a remote of 64 characters', replicate: { remote: `a${'b'.repeat(63)}` }, reads: { ...ALL, remote: `a${'b'.repeat(63)}` } },
];

describe('the replicate policy', () => {
  test('a box with an empty replicate block reads as every default, in the document key order', async () => {
    const top = checkout({ 'chant.workspace.json': declaring({}) });
    const policy = await Policy.load({ cwd: top, top });
    assert.ok(policy);
    assert.deepEqual(policy.toJSON(), { box: 'app', ...ALL });
    assert.deepEqual(Object.keys(policy.toJSON()), ['box', 'remote', 'refs', 'on', 'every']);
    assert.equal(policy.has('save'), true);
    assert.equal(policy.has('release'), true);
  });

  test('load runs no git when it is given the top', async () => {
    const top = checkout({ 'chant.workspace.json': declaring({}) });
    const git = { run: () => Promise.reject(new Error('git was run')) };
    assert.equal((await Policy.load({ cwd: top, top, git }))?.box, 'app');
  });

  test('load finds the top through git when it is not given', async () => {
    const top = checkout({ 'chant.workspace.json': declaring({ every: '10m' }), 'src/a.txt': 'a\n' });
    const policy = await Policy.load({ cwd: join(top, 'src') });
    assert.equal(policy?.every, '10m');
  });

  test('load outside a git checkout without a top is not-a-git-repository', async () => {
    await refuses(() => Policy.load({ cwd: tempDir() }), 'not-a-git-repository');
  });

  test('refs and on read back in canonical order whatever order they were written in', async () => {
    const top = checkout({ 'chant.workspace.json': declaring({ refs: ['ledger', 'wip', 'work'], on: ['release', 'save'] }) });
    const policy = await Policy.load({ cwd: top, top });
    assert.deepEqual(policy?.refs, ['work', 'wip', 'ledger']);
    assert.deepEqual(policy?.on, ['save', 'release']);
  });

  test('a policy that leaves save out does not push on save', async () => {
    const policy = Policy.from({ on: ['release'] }, { box: 'app' });
    assert.equal(policy.has('save'), false);
    assert.equal(policy.has('release'), true);
  });

  test('a box without replicate, a member without box and no declaration all mean no policy', async () => {
    const boxOnly = checkout({ 'chant.workspace.json': JSON.stringify({ members: [{ name: 'app', box: {} }, { name: 'lib' }] }) });
    assert.equal(await Policy.load({ cwd: boxOnly, top: boxOnly }), null);
    const noMembers = checkout({ 'chant.workspace.json': '{"name": "ws"}' });
    assert.equal(await Policy.load({ cwd: noMembers, top: noMembers }), null);
    const none = makeRepo();
    assert.equal(await Policy.load({ cwd: none, top: none }), null);
  });

  test('the rest of the declaration is tolerated', async () => {
    const top = checkout({
      'chant.workspace.json': JSON.stringify({ name: 'ws', lexicons: ['aws'], members: [{ name: 'web', path: 'web', kind: 9 }, { name: 'app', box: { image: 'x', replicate: { refs: ['wip'] } } }] }),
    });
    assert.deepEqual((await Policy.load({ cwd: top, top }))?.toJSON(), { box: 'app', ...ALL, refs: ['wip'] });
  });

  test('a member without a name is named by its index', async () => {
    const top = checkout({ 'chant.workspace.json': JSON.stringify({ members: [{ path: 'a' }, { box: { replicate: {} } }] }) });
    assert.equal((await Policy.load({ cwd: top, top }))?.box, 'members[1]');
  });

  for (const form of ACCEPTED) {
    test(`a declaration with ${form.name} is accepted`, async () => {
      const top = checkout({ 'chant.workspace.json': declaring(form.replicate) });
      assert.deepEqual((await Policy.load({ cwd: top, top }))?.toJSON(), { box: 'app', ...form.reads });
    });
  }

  for (const form of REFUSED) {
    test(`a declaration with ${form.name} is declaration-invalid, naming the field and where it is`, async () => {
      const top = checkout({ 'chant.workspace.json': declaring(form.replicate) });
      const field = `members[0].box.replicate.${form.field}`.replace(/\.\[/g, '[').replace(/[.[\]]/g, '\\$&');
      await refuses(() => Policy.load({ cwd: top, top }), 'declaration-invalid', new RegExp(`chant\\.workspace\\.json:\\d+:\\d+: ${field} `));
    });
  }

  test('declaration-invalid carries the line and column of the offending value', async () => {
    const text = [
      '{',
      '  "members": [',
      '    { "name": "web" },',
      '    { "name": "app", "box": { "replicate": { "refs": ["wip", "everything"] } } }',
      '  ]',
      '}',
      '',
    ].join('\n');
    const top = checkout({ 'chant.workspace.json': text });
    await refuses(
      () => Policy.load({ cwd: top, top }),
      'declaration-invalid',
      new RegExp(`^${join(top, 'chant.workspace.json').replace(/[.]/g, '\\.')}:${positionOf(text, '"everything"')}: members\\[1\\]\\.box\\.replicate\\.refs\\[1\\] must be one of work, kept, wip, ledger; it is "everything"$`),
    );
  });

  test('an unknown key is located at the key itself', async () => {
    const text = '{\n  "members": [{ "box": { "replicate": {\n    "remote": "origin", "pushOn": ["save"] } } }]\n}\n';
    const top = checkout({ 'chant.workspace.json': text });
    await refuses(() => Policy.load({ cwd: top, top }), 'declaration-invalid', new RegExp(`:${positionOf(text, '"pushOn"')}: members\\[0\\]\\.box\\.replicate\\.pushOn is not a replicate key`));
  });

  test('the wrong shape on the way to replicate is declaration-invalid, with its place', async () => {
    const cases: readonly [unknown, RegExp][] = [
      [[], /:1:1: \(top level\) must be a JSON object; it is an array/],
      [{ members: { app: {} } }, /:1:\d+: members must be an array; it is an object/],
      [{ members: ['app'] }, /:1:\d+: members\[0\] must be an object; it is a string/],
      [{ members: [{ name: 'app', box: true }] }, /:1:\d+: members\[0\]\.box must be an object; it is a boolean/],
      [{ members: [{ name: 'app', box: { replicate: null } }] }, /:1:\d+: members\[0\]\.box\.replicate must be an object; it is null/],
    ];
    for (const [declaration, message] of cases) {
      const top = checkout({ 'chant.workspace.json': JSON.stringify(declaration) });
      await refuses(() => Policy.load({ cwd: top, top }), 'declaration-invalid', message);
    }
  });

  test('two boxes declaring replicate is declaration-invalid, naming both members', async () => {
    const top = checkout({
      'chant.workspace.json': JSON.stringify({ members: [{ name: 'app', box: { replicate: {} } }, { name: 'lib' }, { box: { replicate: { refs: ['wip'] } } }] }, null, 2),
    });
    await refuses(() => Policy.load({ cwd: top, top }), 'declaration-invalid', /members\[2\]\.box\.replicate .*"app" \(members\[0\]\) and members\[2\] both do/);
  });
});

describe('the workspace declaration', () => {
  test('a .jsonc declaration may hold comments and trailing commas', async () => {
    const text = [
      '// the workspace',
      '{',
      '  /* members */',
      '  "members": [',
      '    { "name": "app", "box": { "replicate": { "refs": ["wip", "kept",], }, }, },',
      '  ],',
      '}',
      '',
    ].join('\n');
    const top = checkout({ 'chant.workspace.jsonc': text });
    assert.deepEqual((await Policy.load({ cwd: top, top }))?.toJSON(), { box: 'app', ...ALL, refs: ['kept', 'wip'] });
  });

  test('a .jsonc declaration still reports its mistakes with line and column', async () => {
    const text = '// comment\n{ "members": [ { "box": { "replicate": { "every": "5d", } } } ] }\n';
    const top = checkout({ 'chant.workspace.jsonc': text });
    await refuses(() => Policy.load({ cwd: top, top }), 'declaration-invalid', new RegExp(`chant\\.workspace\\.jsonc:${positionOf(text, '"5d"')}: members\\[0\\]\\.box\\.replicate\\.every `));
  });

  test('a .json declaration is strict JSON: a comment or a trailing comma is declaration-unparseable', async () => {
    const comment = checkout({ 'chant.workspace.json': '{\n  // no\n  "members": []\n}\n' });
    await refuses(() => Policy.load({ cwd: comment, top: comment }), 'declaration-unparseable', /chant\.workspace\.json:2:3: not JSON: a comment; comments and trailing commas are allowed only in chant\.workspace\.jsonc/);
    const comma = checkout({ 'chant.workspace.json': '{\n  "members": [],\n}\n' });
    await refuses(() => Policy.load({ cwd: comma, top: comma }), 'declaration-unparseable', /chant\.workspace\.json:3:1: not JSON: a trailing comma/);
  });

  test('a declaration that is not JSON is declaration-unparseable, with line and column', async () => {
    const top = checkout({ 'chant.workspace.json': '{\n  "members": [\n    { name: "app" }\n  ]\n}\n' });
    await refuses(() => Policy.load({ cwd: top, top }), 'declaration-unparseable', /chant\.workspace\.json:3:7: not JSON: /);
    const empty = checkout({ 'chant.workspace.json': '' });
    await refuses(() => Policy.load({ cwd: empty, top: empty }), 'declaration-unparseable', /chant\.workspace\.json:1:1: not JSON: a value was expected/);
  });

  test('a declaration nested deeper than a reader follows is declaration-unparseable, located, never an internal error', async () => {
    const deep = `{"x": ${'['.repeat(200_000)}${']'.repeat(200_000)}}`;
    for (const name of ['chant.workspace.json', 'chant.workspace.jsonc']) {
      const top = checkout({ [name]: deep });
      await refuses(() => Policy.load({ cwd: top, top }), 'declaration-unparseable', new RegExp(`${name.replaceAll('.', '\\.')}:1:\\d+: not JSONC?: nested more than 1000 deep`));
    }
    const fine = checkout({ 'chant.workspace.json': `{"x": ${'['.repeat(999)}${']'.repeat(999)}, ${declaring({ refs: ['wip'] }).slice(1)}` });
    assert.deepEqual((await Policy.load({ cwd: fine, top: fine }))?.refs, ['wip']);
  });

  test('a byte-order mark does not make a declaration unparseable', async () => {
    const top = checkout({ 'chant.workspace.json': `\uFEFF${declaring({ refs: ['wip'] })}` });
    assert.deepEqual((await Policy.load({ cwd: top, top }))?.refs, ['wip']);
  });

  test('both names in one folder is declaration-ambiguous, naming both paths', async () => {
    const top = checkout({ 'chant.workspace.json': '{}', 'chant.workspace.jsonc': '{}' });
    const message = await refuses(() => Policy.load({ cwd: top, top }), 'declaration-ambiguous');
    assert.ok(message.includes(join(top, 'chant.workspace.json')), message);
    assert.ok(message.includes(join(top, 'chant.workspace.jsonc')), message);
  });

  test('the nearest declaration wins when walking up from a subfolder', async () => {
    const top = checkout({
      'chant.workspace.json': declaring({ remote: 'top' }),
      'team/chant.workspace.jsonc': declaring({ remote: 'team' }, 'team-app'),
      'team/svc/deep/file.txt': 'x\n',
    });
    assert.equal((await Policy.load({ cwd: join(top, 'team', 'svc', 'deep'), top }))?.remote, 'team');
    assert.equal((await Policy.load({ cwd: join(top, 'team'), top }))?.box, 'team-app');
    assert.equal((await Policy.load({ cwd: top, top }))?.remote, 'top');
    assert.equal(await findDeclaration(join(top, 'team', 'svc'), top), join(top, 'team', 'chant.workspace.jsonc'));
  });

  test('an ambiguous folder above the nearest declaration does not matter', async () => {
    const top = checkout({ 'chant.workspace.json': '{}', 'chant.workspace.jsonc': '{}', 'sub/chant.workspace.json': declaring({}) });
    assert.equal((await Policy.load({ cwd: join(top, 'sub'), top }))?.box, 'app');
  });

  test('the walk stops at the top of the checkout', async () => {
    const outer = tempDir();
    writeFiles(outer, { 'chant.workspace.json': declaring({}) });
    const top = join(outer, 'repo');
    mkdirSync(top);
    assert.equal(await findDeclaration(top, top), null);
  });

  test('a minReader newer than 0.103.0 is reader-too-old', async () => {
    for (const minReader of ['0.103.1', '0.104.0', '1.0.0', '0.104.0-rc.1']) {
      const top = checkout({ 'chant.workspace.json': JSON.stringify({ minReader, members: 'not even read' }) });
      await refuses(() => Policy.load({ cwd: top, top }), 'reader-too-old', new RegExp(`chant\\.workspace\\.json:1:\\d+: .*${minReader.replace(/\./g, '\\.')}.*0\\.103\\.0`));
    }
  });

  test('a minReader older than or equal to 0.103.0 is fine', async () => {
    for (const minReader of ['0.103.0', '0.102.9', '0.9.0', '0.103.0-rc.1', '0.103.0+build.5']) {
      const top = checkout({ 'chant.workspace.json': JSON.stringify({ minReader, members: [{ name: 'app', box: { replicate: {} } }] }) });
      assert.equal((await Policy.load({ cwd: top, top }))?.box, 'app', minReader);
    }
  });

  test('a minReader that is not a version is declaration-invalid', async () => {
    for (const minReader of ['latest', '0.103', 103, null, 'v0.104.0', ' 0.104.0', '0.104.0-01']) {
      const top = checkout({ 'chant.workspace.json': JSON.stringify({ minReader }) });
      await refuses(() => Policy.load({ cwd: top, top }), 'declaration-invalid', /minReader must be a semantic version/);
    }
  });

  test('a parsed declaration keeps __proto__ as a plain key and the last of duplicate keys', () => {
    const declaration = parseDeclaration('{"__proto__": {"members": []}, "members": [1], "members": [{"box": {"replicate": {"refs": ["wip"]}}}]}', 'x.json');
    assert.equal(Object.getPrototypeOf(declaration.root), Object.prototype);
    assert.deepEqual(declaredReplicate(declaration)?.settings.refs, ['wip']);
  });

  test('readDeclaration returns null where there is none', async () => {
    const top = makeRepo();
    assert.equal(await readDeclaration(top, top), null);
  });
});

describe('Policy.from', () => {
  test('Policy.from fills in the defaults and names the box', () => {
    assert.deepEqual(Policy.from({ refs: ['wip', 'work'] }, { box: 'app' }).toJSON(), { box: 'app', ...ALL, refs: ['work', 'wip'] });
  });

  for (const form of ACCEPTED) {
    test(`Policy.from accepts ${form.name}`, () => {
      assert.deepEqual(Policy.from(form.replicate, { box: 'b' }).toJSON(), { box: 'b', ...form.reads });
    });
  }

  for (const form of REFUSED) {
    test(`Policy.from refuses ${form.name} with declaration-invalid`, async () => {
      await refuses(() => Policy.from(form.replicate, { where: 'studio.json' }), 'declaration-invalid', new RegExp(`^studio\\.json: replicate\\.${form.field.replace(/[.[\]]/g, '\\$&')} `));
    });
  }

  test('Policy.from refuses a block that is not an object', async () => {
    await refuses(() => Policy.from(['wip']), 'declaration-invalid', /^replicate must be an object; it is an array$/);
  });
});

describe('a policy document given to WipStore or Replicator', () => {
  test('is checked as Policy.from checks a block: a malformed one is declaration-invalid, never a TypeError', async () => {
    const top = makeRepo();
    const malformed: readonly unknown[] = [
      { box: 'app', remote: 'origin', refs: ['everything'], on: ['save'], every: null },
      { box: 'app', remote: '--receive-pack=x', refs: ['wip'], on: ['save'], every: null },
      { box: 5, remote: 'origin', refs: ['wip'], on: ['save'], every: null },
      'origin',
    ];
    for (const policy of malformed) {
      await refuses(() => new Replicator({ cwd: top, policy: policy as PolicyDocument }).state(), 'declaration-invalid', /^policy/);
      await refuses(() => new WipStore({ cwd: top, policy: policy as PolicyDocument }).save({}), 'declaration-invalid', /^policy/);
    }
  });

  test('is taken with its defaults filled in, as Policy.from takes a block', async () => {
    const top = makeRepo();
    const document = Policy.from({ refs: ['wip'] }, { box: 'app' }).toJSON();
    assert.deepEqual(new Replicator({ cwd: top, policy: document }).policy?.toJSON(), document);
    assert.deepEqual(new Replicator({ cwd: top, policy: { box: 'app', refs: ['wip'] } as unknown as PolicyDocument }).policy?.toJSON(), document);
  });
});

describe('the published replicate schema', () => {
  const published = publishedSchemas().find((entry) => entry.path === 'schemas/workspace/replicate/v1/replicate.schema.json');

  test('the committed replicate schema is what publishedSchemas generates (npm run schemas rewrites it)', () => {
    assert.ok(published, 'publishedSchemas lists the replicate schema');
    assert.deepEqual(readJson(published.path), published.schema, 'run `npm run schemas` to regenerate it');
    assert.equal(published.schema.$id, 'https://intentius.io/chant/schemas/workspace/replicate/v1/replicate.schema.json');
    assert.equal(published.schema.$schema, 'https://json-schema.org/draft/2020-12/schema');
  });

  test('the schema and the hand validation agree on every accepted and refused form', () => {
    assert.ok(published);
    const validate = new Ajv2020({ strict: true, allErrors: true }).compile(published.schema);
    for (const form of ACCEPTED) {
      assert.equal(validate(form.replicate), true, `the schema accepts ${form.name}: ${JSON.stringify(validate.errors)}`);
      assert.doesNotThrow(() => Policy.from(form.replicate));
    }
    for (const form of REFUSED) {
      assert.equal(validate(form.replicate), false, `the schema refuses ${form.name}`);
      assert.throws(() => Policy.from(form.replicate), (error) => isWipError(error, 'declaration-invalid'));
    }
  });
});

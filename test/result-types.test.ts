// The result types an editor shows: each is an interface of its own name (Snapshot, RestoreResult,
// ...) equal to its TypeBox type, every field documented, and the SDK's methods return them by
// name in the built declarations. Checked with the TypeScript compiler, as an editor would.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import ts from 'typescript';
import { ROOT } from './helpers.js';

const DOCUMENTS = join(ROOT, 'lib', 'documents');
const HERE = join(ROOT, 'test', 'result-types');

/** Every interface in lib/documents/ that has a TypeBox value of the same name, by module. */
function interfaces(): Array<{ module: string; name: string }> {
  const found: Array<{ module: string; name: string }> = [];
  for (const file of readdirSync(DOCUMENTS).filter((name) => name.endsWith('.ts')).sort()) {
    const source = readFileSync(join(DOCUMENTS, file), 'utf8');
    for (const match of source.matchAll(/^export interface (\w+) \{/gm)) {
      const name = match[1] as string;
      if (new RegExp(`^export const ${name} = `, 'm').test(source)) found.push({ module: file.replace(/\.ts$/, ''), name });
    }
  }
  return found;
}

const EQUAL = [
  "import type { Static } from 'typebox';",
  // Mutually assignable, the same keys, the same required keys: an optional field added to one
  // side only, or made required, is caught too.
  'type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;',
  'type RequiredKeys<T> = { [K in keyof T]-?: {} extends Pick<T, K> ? never : K }[keyof T];',
  'export type Equal<A, B> = Same<A, B> extends true ? (Same<keyof A, keyof B> extends true ? Same<RequiredKeys<A>, RequiredKeys<B>> : false) : false;',
];

const RESULTS: ReadonlyArray<[string, string]> = [
  ['await store.save()', 'SaveResult'],
  ['await store.restore()', 'RestoreResult'],
  ['await store.plan()', 'RestorePlan'],
  ["await store.show({ snapshot: 'x' })", 'ShowResult'],
  ["await store.diff({ from: 'x' })", 'DiffResult'],
  ['await store.list()', 'ListResult'],
  ['await store.storage()', 'StorageResult'],
  ['await store.prune()', 'PruneResult'],
  ['(await store.save()).snapshot', 'Snapshot'],
  ['(await store.list({ changes: true })).branches[0]?.snapshots[0]?.changes', 'ChangeCounts | undefined'],
  ['await replicator.state()', 'ReplicationState | null'],
  ['await replicator.push()', 'PushOutcome'],
  ['await replicator.pushOrReport()', 'PushResult'],
  ['await replicator.fetch()', 'FetchResult'],
  ["await replicator.after('save')", 'PushResult | null'],
  ['replicator.policy', 'Policy | null'],
];

function program(files: Readonly<Record<string, string>>): ts.Program {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true, noEmit: true, skipLibCheck: true, types: ['node'], lib: ['lib.es2022.d.ts'],
  };
  const host = ts.createCompilerHost(options);
  const virtual = new Map(Object.entries(files).map(([name, text]) => [join(HERE, name), text]));
  const { getSourceFile, fileExists, readFile } = host;
  host.getSourceFile = (name, language, ...rest) => (virtual.has(name) ? ts.createSourceFile(name, virtual.get(name) as string, language) : getSourceFile.call(host, name, language, ...rest));
  host.fileExists = (name) => virtual.has(name) || fileExists.call(host, name);
  host.readFile = (name) => virtual.get(name) ?? readFile.call(host, name);
  return ts.createProgram([...virtual.keys()], options, host);
}

function diagnosticsOf(built: ts.Program, name: string): string[] {
  const file = built.getSourceFile(join(HERE, name));
  assert.ok(file !== undefined, name);
  return [...built.getSemanticDiagnostics(file), ...built.getSyntacticDiagnostics(file)]
    .map((diagnostic) => `${diagnostic.start === undefined ? '' : `${file.getLineAndCharacterOfPosition(diagnostic.start).line + 1}: `}${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`);
}

describe('the result types', () => {
  const declared = interfaces();
  let built: ts.Program;

  before(() => {
    assert.ok(existsSync(join(ROOT, 'dist', 'lib', 'index.d.ts')), 'dist/lib/index.d.ts is missing: run npm run build');
    const modules = [...new Set(declared.map((entry) => entry.module))];
    built = program({
      'equal.ts': [
        ...EQUAL,
        ...modules.map((module) => `import type * as ${module.replace(/-/g, '_')} from '../../lib/documents/${module}.js';`),
        ...declared.map(({ module, name }) => `export const ${name}: Equal<${module.replace(/-/g, '_')}.${name}, Static<typeof ${module.replace(/-/g, '_')}.${name}>> = true;`),
      ].join('\n'),
      'unequal.ts': [
        ...EQUAL,
        "import type * as D from '../../lib/documents/index.js';",
        'export const other: Equal<D.Snapshot, Static<typeof D.ChangeCounts>> = true;',
        'export const extraOptional: Equal<D.Snapshot & { extra?: string }, Static<typeof D.Snapshot>> = true;',
        "export const madeRequired: Equal<Omit<D.Snapshot, 'unsaved'> & { unsaved: D.Unsaved }, Static<typeof D.Snapshot>> = true;",
        "export const nullDropped: Equal<Omit<D.Snapshot, 'label'> & { label: string }, Static<typeof D.Snapshot>> = true;",
      ].join('\n'),
      'editor.ts': [
        "import { Replicator, WipStore } from '../../dist/lib/index.js';",
        "const store = new WipStore({ cwd: '.' });",
        "const replicator = new Replicator({ cwd: '.', policy: null });",
        'export async function timeline() {',
        ...RESULTS.map(([expression], index) => `  const shown${index} = ${expression};`),
        '  const both = new WipStore({ cwd: \'.\', policy: replicator.policy });',
        `  return [${RESULTS.map((_, index) => `shown${index}`).join(', ')}, both];`,
        '}',
      ].join('\n'),
    });
  });

  it('are interfaces for every object result type the documents declare', () => {
    const names = declared.map((entry) => entry.name);
    for (const name of ['Snapshot', 'ChangeCounts', 'SaveResult', 'RestoreResult', 'Checkpoint', 'RestorePlan', 'DiffResult', 'PathChange', 'ShowResult', 'ListResult', 'BranchSnapshots', 'StorageResult', 'PruneResult', 'PushResult', 'PushOutcome', 'FetchResult', 'ReplicationState', 'PolicyDocument']) {
      assert.ok(names.includes(name), `${name} is an interface`);
    }
  });

  it('are each equal to the TypeBox Static of the same name (npm run interfaces rewrites them)', () => {
    assert.deepEqual(diagnosticsOf(built, 'equal.ts'), []);
  });

  it('the equality check fails for another type, an optional field added, a field made required, or null dropped', () => {
    const errors = diagnosticsOf(built, 'unequal.ts');
    assert.deepEqual(errors.map((line) => Number(line.split(':')[0])).sort((a, b) => a - b), [6, 7, 8, 9], errors.join('\n'));
  });

  it('are what an editor shows for each SDK result, by name, from the built declarations', () => {
    assert.deepEqual(diagnosticsOf(built, 'editor.ts'), [], 'a WipStore takes the Policy a Replicator exposes');
    const file = built.getSourceFile(join(HERE, 'editor.ts')) as ts.SourceFile;
    const checker = built.getTypeChecker();
    const shown: string[] = [];
    const visit = (node: ts.Node): void => {
      if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.name.text.startsWith('shown')) {
        shown.push(checker.typeToString(checker.getTypeAtLocation(node.name)));
      }
      ts.forEachChild(node, visit);
    };
    visit(file);
    assert.deepEqual(shown, RESULTS.map(([, type]) => type));
  });

  it('document every field, as far as the results reach', () => {
    const file = built.getSourceFile(join(HERE, 'editor.ts')) as ts.SourceFile;
    const checker = built.getTypeChecker();
    const seen = new Set<ts.Symbol>();
    const undocumented: string[] = [];
    const walk = (type: ts.Type): void => {
      for (const part of type.isUnion() ? type.types : [type]) {
        const element = checker.isArrayType(part) ? checker.getTypeArguments(part as ts.TypeReference)[0] : part;
        if (element === undefined) continue;
        const symbol = element.getSymbol();
        const where = symbol?.declarations?.[0]?.getSourceFile().fileName ?? '';
        if (!(element.flags & ts.TypeFlags.Object) || !where.includes(`${join('dist', 'lib', 'documents')}`)) continue;
        if (symbol !== undefined && seen.has(symbol)) continue;
        if (symbol !== undefined) seen.add(symbol);
        for (const property of element.getProperties()) {
          if (ts.displayPartsToString(property.getDocumentationComment(checker)).trim() === '') undocumented.push(`${checker.typeToString(element)}.${property.name}`);
          walk(checker.getNonNullableType(checker.getTypeOfSymbol(property)));
        }
      }
    };
    const visit = (node: ts.Node): void => {
      if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.name.text.startsWith('shown')) walk(checker.getTypeAtLocation(node.name));
      ts.forEachChild(node, visit);
    };
    visit(file);
    assert.ok(seen.size >= 20, `walked ${seen.size} types`);
    assert.deepEqual(undocumented, []);
  });

  it('name the interfaces in the built .d.ts of WipStore and Replicator', () => {
    const store = readFileSync(join(ROOT, 'dist', 'lib', 'store', 'wip-store.d.ts'), 'utf8');
    for (const [method, result] of [['save', 'SaveResult'], ['restore', 'RestoreResult'], ['plan', 'RestorePlan'], ['list', 'ListResult'], ['show', 'ShowResult'], ['diff', 'DiffResult'], ['storage', 'StorageResult'], ['prune', 'PruneResult']]) {
      assert.match(store, new RegExp(`^ {4}${method}\\(options\\??: \\w+\\): Promise<${result}>;$`, 'm'));
    }
    const snapshot = readFileSync(join(ROOT, 'dist', 'lib', 'documents', 'snapshot.d.ts'), 'utf8');
    assert.match(snapshot, /^export interface Snapshot \{$/m);
    const replicator = readFileSync(join(ROOT, 'dist', 'lib', 'replication', 'replicator.d.ts'), 'utf8');
    assert.match(replicator, /^ {4}fetch\(options\?: ReplicatorCallOptions\): Promise<FetchResult>;$/m);
    assert.match(replicator, /^ {4}get policy\(\): Policy \| null;$/m);
  });
});

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { ROOT } from './helpers.js';

// The layering docs/contributing.md draws, read from the import graph of the sources.

interface Source {
  /** Repository-relative, `/`-separated. */
  path: string;
  text: string;
  /** What it imports at run time: repository-relative paths of its own files, or package names. */
  imports: string[];
  /** Everything it imports, type-only imports included. */
  allImports: string[];
}

function sources(folder: string): Source[] {
  const found: Source[] = [];
  for (const entry of readdirSync(join(ROOT, folder), { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !/\.c?ts$/.test(entry.name)) continue;
    const path = relative(ROOT, join(entry.parentPath, entry.name)).split('\\').join('/');
    const text = readFileSync(join(ROOT, path), 'utf8');
    const imports: string[] = [];
    const allImports: string[] = [];
    for (const match of text.matchAll(/^(import|export)\s+(type\s+)?[^'"]*?from\s+'([^']+)'|^import\s+'([^']+)'/gm)) {
      const specifier = (match[3] ?? match[4]) as string;
      const target = specifier.startsWith('.')
        ? relative(ROOT, resolve(ROOT, dirname(path), specifier)).split('\\').join('/').replace(/\.js$/, '.ts')
        : specifier;
      allImports.push(target);
      if (match[2] === undefined) imports.push(target);
    }
    found.push({ path, text, imports, allImports });
  }
  return found.sort((a, b) => (a.path < b.path ? -1 : 1));
}

const lib = sources('lib');

/** Whether a file runs git: it calls a runner's run, implements one (a wrapper that forwards), or imports what starts processes. */
function runsGit(file: Source): boolean {
  return /\.run\(|\brun\s*:\s*(?:async\b|\()/.test(file.text) || file.imports.some((target) => /child_process|simple-git/.test(target));
}
const cli = sources('cli');

describe('the layers', () => {
  it('has lib/git import nothing above it but the error module and the byte order', () => {
    const wrong = lib.filter((file) => file.path.startsWith('lib/git/'))
      .flatMap((file) => file.allImports.filter((target) => target.startsWith('lib/') && !target.startsWith('lib/git/') && target !== 'lib/errors.ts' && target !== 'lib/order.ts').map((target) => `${file.path} -> ${target}`));
    assert.deepEqual(wrong, []);
  });

  it('keeps git\'s formats free of processes: lib/git/formats imports no runner, plumbing, child_process or simple-git', () => {
    const wrong = lib.filter((file) => file.path.startsWith('lib/git/formats/'))
      .flatMap((file) => file.imports.filter((target) => (target.startsWith('lib/') && !target.startsWith('lib/git/formats/')) || /child_process|simple-git/.test(target)).map((target) => `${file.path} -> ${target}`));
    assert.deepEqual(wrong, []);
  });

  it('runs git only under lib/git: no other file calls a runner, wraps one, or imports simple-git or child_process', () => {
    const wrong = lib.filter((file) => !file.path.startsWith('lib/git/') && runsGit(file)).map((file) => file.path);
    assert.deepEqual(wrong, []);
    // The CLI's own `.run(` is clipanion's; what it must not do is start a process.
    assert.deepEqual(cli.filter((file) => file.imports.some((target) => /child_process|simple-git/.test(target))).map((file) => file.path), []);
  });

  it('has no file that both runs git and decides policy: the files that run git import no policy, declaration, store or document module', () => {
    const running = lib.filter(runsGit);
    assert.ok(running.some((file) => file.path === 'lib/git/runner.ts') && running.some((file) => file.path === 'lib/git/plumbing.ts'), 'the check sees the files that run git');
    const deciding = (target: string): boolean => /^lib\/(store|replication|workspace|snapshot|documents|managers)\//.test(target);
    const wrong = running.flatMap((file) => [
      ...(deciding(file.path) ? [`${file.path} runs git`] : []),
      ...file.allImports.filter(deciding).map((target) => `${file.path} runs git and imports ${target}`),
    ]);
    assert.deepEqual(wrong, []);
  });

  it('has only lib/git/runner.ts start processes, and nothing import simple-git', () => {
    assert.deepEqual(lib.filter((file) => file.allImports.some((target) => /^(?:node:)?child_process$/.test(target))).map((file) => file.path), ['lib/git/runner.ts']);
    assert.deepEqual(lib.filter((file) => file.allImports.includes('simple-git')).map((file) => file.path), []);
  });

  it('has the CLI import the SDK only through its public entries, and never the git layer', () => {
    const entries = new Set(['lib/index.ts', 'lib/documents/index.ts']);
    const wrong = cli.flatMap((file) => file.allImports.filter((target) => target.startsWith('lib/') && !entries.has(target)).map((target) => `${file.path} -> ${target}`));
    assert.deepEqual(wrong, []);
  });

  it('has no import cycle in lib', () => {
    const graph = new Map(lib.map((file) => [file.path, file.imports.filter((target) => target.startsWith('lib/'))]));
    const state = new Map<string, 'open' | 'done'>();
    const cycles: string[] = [];
    const visit = (path: string, trail: string[]): void => {
      if (state.get(path) === 'done') return;
      if (state.get(path) === 'open') {
        cycles.push([...trail.slice(trail.indexOf(path)), path].join(' -> '));
        return;
      }
      state.set(path, 'open');
      for (const next of graph.get(path) ?? []) visit(next, [...trail, path]);
      state.set(path, 'done');
    };
    for (const path of graph.keys()) visit(path, []);
    assert.deepEqual(cycles, []);
  });

  it('keeps the SDK free of TypeBox and Ajv: nothing lib/index.ts loads imports them at run time', () => {
    const byPath = new Map(lib.map((file) => [file.path, file]));
    const loaded = new Set<string>();
    const walk = (path: string): void => {
      if (loaded.has(path)) return;
      loaded.add(path);
      for (const target of byPath.get(path)?.imports ?? []) if (target.startsWith('lib/')) walk(target);
    };
    walk('lib/index.ts');
    const wrong = [...loaded].flatMap((path) => (byPath.get(path)?.imports ?? []).filter((target) => /^(typebox|ajv|ajv-formats)(\/|$)/.test(target)).map((target) => `${path} -> ${target}`));
    assert.deepEqual(wrong, []);
  });
});

#!/usr/bin/env node
// The `chant` bin. It answers --version before loading anything, then loads the CLI bundle
// through V8's code cache beside it: compiling the bundle anew on every run costs more than a
// small save's own git work. `npm run build` writes the cache for local runs; the package holds
// none (V8's cache differs from build to build, and a tarball must not), so an installed bin
// writes its own after its first run, and again after V8 rejected it (another Node). Where the
// folder cannot be written, the bundle compiles on every run, as it would without a cache.
// CommonJS, because an ES module entry costs Node's module loader its start-up on every run.
import buffer = require('node:buffer');
import fs = require('node:fs');
import nodeModule = require('node:module');
import path = require('node:path');
import vm = require('node:vm');

/** package.json's version, put in by the bundler. */
declare const CHANT_VERSION: string;

type Context = Record<string, unknown>;
type Main = (argv: readonly string[], context: Context) => Promise<number>;
type PrintFault = (argv: readonly string[], context: Context, error: unknown) => void;

// A reader that went away (`| head -1`, a host that died) closes the pipe: the document cannot
// be delivered, but whatever the command did is done and the exit code still says what it was.
// Without a listener Node would throw the EPIPE as a stack trace and exit 1.
let stdoutClosed = false;
process.stdout.on('error', () => {
  stdoutClosed = true;
});

const argv = process.argv.slice(2);

/** The verbs of `workspace wip` whose runs read and write a code cache of their own. */
const VERBS = new Set(['save', 'restore', 'push', 'fetch', 'prune', 'storage', 'diff', 'show']);

/**
 * The indexes of the arguments whose bytes are not UTF-8, which Node reads as U+FFFD: from
 * /proc/self/cmdline, where there is one, and only when an argument holds a U+FFFD at all.
 */
function argumentsNotUtf8(words: readonly string[]): number[] {
  if (!words.some((word) => word.includes('\uFFFD'))) return [];
  try {
    const raw = fs.readFileSync('/proc/self/cmdline');
    const all: Buffer[] = [];
    for (let start = 0; start < raw.length;) {
      const end = raw.indexOf(0, start);
      all.push(raw.subarray(start, end < 0 ? raw.length : end));
      start = end < 0 ? raw.length : end + 1;
    }
    const tail = all.slice(-words.length);
    if (tail.length !== words.length) return [];
    return tail.flatMap((word, index) => (buffer.isUtf8(word) ? [] : [index]));
  } catch {
    return [];
  }
}
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v')) {
  process.stdout.write(`${CHANT_VERSION}\n`);
} else {
  const rewrite = process.env.CHANT_WIP_WRITE_CODE_CACHE === '1';
  // The CLI's cache, one a verb: V8 reads a whole cache on load, and a cache holds what the run
  // that wrote it compiled. One cache for all (a read's, then a save's and a restore's functions
  // added) made a save about 9 ms faster and a read about 5 ms slower than a read's cache alone.
  const verb = argv[0] === 'workspace' && argv[1] === 'wip' && VERBS.has(argv[2] ?? '') ? argv[2] : 'read';
  const compiled: Array<{ script: vm.Script; cacheFile: string; stale: boolean }> = [];
  const base = nodeModule.createRequire(path.join(__dirname, 'main.cjs'));
  // The bundle's files (main.cjs, and secret-scanner.cjs, which the secret gate requires on its
  // first scan), each through its own code cache; anything else through Node.
  const modules = new Map<string, unknown>();
  const load = (name: string): unknown => {
    if (modules.has(name)) return modules.get(name);
    const file = path.join(__dirname, name);
    const cacheFile = name === 'main.cjs' ? `${file}.${verb}.v8cache` : `${file}.v8cache`;
    let cachedData: Buffer | undefined;
    try {
      cachedData = fs.readFileSync(cacheFile);
    } catch {
      cachedData = undefined;
    }
    const script = new vm.Script(nodeModule.wrap(fs.readFileSync(file, 'utf8')), { filename: file, ...(cachedData === undefined ? {} : { cachedData }) });
    compiled.push({ script, cacheFile, stale: rewrite || cachedData === undefined || script.cachedDataRejected === true });
    const loaded = { exports: {} };
    modules.set(name, loaded.exports);
    script.runInThisContext()(loaded.exports, bundleRequire, loaded, file, __dirname);
    modules.set(name, loaded.exports);
    return loaded.exports;
  };
  const bundleRequire = Object.assign((id: string) => (/^\.\/[\w-]+\.cjs$/.test(id) ? load(id.slice(2)) : base(id)), base);
  const loaded = { exports: load('main.cjs') as { main: Main; printFault: PrintFault } };
  let cwd = '';
  try {
    cwd = process.cwd();
  } catch {
    // The folder was deleted under the process (uv_cwd): main answers with a document.
  }
  const context = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env, colorDepth: 1, cwd, argvNotUtf8: argumentsNotUtf8(argv) };
  const fault = (error: unknown) => {
    if (stdoutClosed || (error as NodeJS.ErrnoException | null)?.code === 'EPIPE') return;
    loaded.exports.printFault(argv, context, error);
    process.exitCode = 1;
  };
  process.on('uncaughtException', fault);
  process.on('unhandledRejection', fault);
  void loaded.exports.main(argv, context).then((code) => {
    process.exitCode = code;
    // After a run, so each cache holds what a run compiles. Written whole under a name of this
    // process's own, then renamed, so a concurrent first run never reads half of one.
    for (const { script, cacheFile, stale } of compiled) {
      if (!stale) continue;
      const temporary = `${cacheFile}.${process.pid}.tmp`;
      try {
        fs.writeFileSync(temporary, script.createCachedData());
        fs.renameSync(temporary, cacheFile);
      } catch {
        fs.rmSync(temporary, { force: true });
      }
    }
  });
}

#!/usr/bin/env node
// The `chant` bin. It answers --version before loading anything, then loads the CLI bundle
// through V8's code cache, which `npm run build` writes beside it: compiling the bundle anew on
// every run costs more than a small save's own git work. A cache that V8 rejects (another Node)
// is ignored, never rewritten here, and the bundle compiles as usual. CommonJS, because an ES
// module entry costs Node's module loader its start-up on every run.
import fs = require('node:fs');
import nodeModule = require('node:module');
import path = require('node:path');
import vm = require('node:vm');

/** package.json's version, put in by the bundler. */
declare const CHANT_VERSION: string;

type Main = (argv: readonly string[], context: Record<string, unknown>) => Promise<number>;

const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v')) {
  process.stdout.write(`${CHANT_VERSION}\n`);
} else {
  const file = path.join(__dirname, 'main.cjs');
  const cacheFile = `${file}.v8cache`;
  let cachedData: Buffer | undefined;
  try {
    cachedData = fs.readFileSync(cacheFile);
  } catch {
    cachedData = undefined;
  }
  const script = new vm.Script(nodeModule.wrap(fs.readFileSync(file, 'utf8')), { filename: file, ...(cachedData === undefined ? {} : { cachedData }) });
  const loaded = { exports: {} as { main: Main } };
  script.runInThisContext()(loaded.exports, nodeModule.createRequire(file), loaded, file, __dirname);
  void loaded.exports.main(argv, {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    colorDepth: 1,
    cwd: process.cwd(),
  }).then((code) => {
    process.exitCode = code;
    if (process.env.CHANT_WIP_WRITE_CODE_CACHE === '1') {
      // Only the build asks for this, after a run, so the cache holds what a run compiles.
      fs.writeFileSync(`${cacheFile}.tmp`, script.createCachedData());
      fs.renameSync(`${cacheFile}.tmp`, cacheFile);
    }
  });
}

#!/usr/bin/env node
import { VERSION } from '../lib/version.js';

const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v')) {
  // Answered before the CLI loads: a version check should cost no more than starting Node.
  process.stdout.write(`${VERSION}\n`);
} else {
  const { main } = await import('./main.js');
  process.exitCode = await main(argv, {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    colorDepth: 1,
    cwd: process.cwd(),
  });
}

// npm run docs: writes docs/cli.md from the CLI's definitions.
import { writeFile } from 'node:fs/promises';
import { cliReference } from '../cli/reference.js';

await writeFile('docs/cli.md', cliReference());
process.stderr.write('wrote docs/cli.md\n');

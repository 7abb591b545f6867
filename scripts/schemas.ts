// npm run schemas: writes the published JSON Schemas from the TypeBox types.
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { publishedSchemas } from '../lib/documents/schemas.js';

for (const { path, schema } of publishedSchemas()) {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, `${JSON.stringify(schema, null, 2)}\n`);
  process.stderr.write(`wrote ${path}\n`);
}

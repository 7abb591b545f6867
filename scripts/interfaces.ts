// npm run interfaces: writes, beside each TypeBox result type in lib/documents/, the TypeScript
// interface of the same name, every field documented from the schema's descriptions. An editor
// then shows `Snapshot` or `RestoreResult` where `Static<typeof ...>` showed the expanded shape;
// test/result-types.test.ts holds each interface equal to its TypeBox type.
//
// `node --import tsx scripts/interfaces.ts --check` writes nothing and exits 1 when a file is stale.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(fileURLToPath(import.meta.url), '..', '..');

/** The modules whose object types become interfaces, and the names that stay TypeBox `Static`s. */
const MODULES = ['snapshot', 'changes', 'wip-read', 'wip-write', 'replication', 'storage'] as const;
/**
 * Documents (a header, then a result) and failures stay `Static`: they are what the CLI prints,
 * not what a method returns. The policy document is a result's field, and a `Policy`'s JSON.
 * Declarations (the `replicate` block) are what an author writes, not what chant prints.
 */
const KEEP_STATIC = /^(?!PolicyDocument$).*(Document|Failure|Success|Declaration)$/;

type Schema = Record<string, unknown> & { description?: string };

interface Named {
  name: string;
  module: string;
  schema: Schema;
  json: string;
}

const MAX = 100;

async function registry(): Promise<Named[]> {
  const named: Named[] = [];
  for (const module of MODULES) {
    const exports = await import(join(ROOT, 'lib', 'documents', `${module}.ts`)) as Record<string, unknown>;
    const source = readFileSync(join(ROOT, 'lib', 'documents', `${module}.ts`), 'utf8');
    for (const [name, value] of Object.entries(exports)) {
      if (value === null || typeof value !== 'object' || !isSchema(value as Schema)) continue;
      // Only a name that is a type as well as a value can be written in a type.
      if (!new RegExp(`^export (type|interface) ${name}\\b`, 'm').test(source)) continue;
      named.push({ name, module, schema: value as Schema, json: shape(value as Schema) });
    }
  }
  return named;
}

function isSchema(value: Schema): boolean {
  return typeof value.type === 'string' || Array.isArray(value.anyOf) || 'const' in value;
}

/** A schema's JSON without its own description: a field may describe a named type its own way. */
function shape(schema: Schema): string {
  const { description: _description, ...rest } = schema;
  return JSON.stringify(rest);
}

/** The name a schema is known by: the same object, else the one named type of the same shape. */
function nameOf(schema: Schema, named: readonly Named[], self: string): string | null {
  const same = named.find((entry) => entry.schema === schema);
  if (same !== undefined) return same.name === self ? null : same.name;
  const json = shape(schema);
  const equal = named.filter((entry) => entry.json === json);
  return equal.length === 1 && equal[0]!.name !== self ? equal[0]!.name : null;
}

function literal(value: unknown): string {
  return typeof value === 'string' ? `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'` : JSON.stringify(value);
}

/** A description as TSDoc text: the characters TSDoc reads as syntax escaped. */
function tsdoc(text: string): string {
  return text.replace(/\*\//g, '*\\/').replace(/([@{}<>\\])/g, '\\$1');
}

function comment(text: string, indent: string): string[] {
  const words = tsdoc(text).split(/\s+/).filter((word) => word.length > 0);
  const oneLine = `${indent}/** ${words.join(' ')} */`;
  if (oneLine.length <= MAX) return [oneLine];
  const lines = [`${indent}/**`];
  let line = `${indent} *`;
  for (const word of words) {
    if (line.length + 1 + word.length > MAX && line !== `${indent} *`) {
      lines.push(line);
      line = `${indent} *`;
    }
    line += ` ${word}`;
  }
  lines.push(line, `${indent} */`);
  return lines;
}

/** The fields without a description, over the whole run. */
const missing: string[] = [];

/** The TypeScript of a schema, `indent` being the indentation of the line it starts on. */
function typeOf(schema: Schema, named: readonly Named[], self: string, indent: string, where: string): string {
  const name = nameOf(schema, named, self);
  if (name !== null) return name;
  if ('const' in schema) return literal(schema.const);
  if (Array.isArray(schema.anyOf)) {
    // `T | null`, as TypeScript is usually written, though the schema lists null first.
    const types = (schema.anyOf as Schema[]).map((member) => typeOf(member, named, self, indent, where));
    return [...types.filter((type) => type !== 'null'), ...types.filter((type) => type === 'null')].join(' | ');
  }
  if (schema.not !== undefined && Object.keys(schema.not as object).length === 0) return 'never';
  switch (schema.type) {
    case 'string': return 'string';
    case 'integer':
    case 'number': return 'number';
    case 'boolean': return 'boolean';
    case 'null': return 'null';
    case 'array': {
      const item = typeOf(schema.items as Schema, named, self, indent, `${where}[]`);
      return /[| ]/.test(item) && !item.startsWith('{') ? `Array<${item}>` : `${item}[]`;
    }
    case 'object': return `{\n${members(schema, named, self, `${indent}  `, where).join('\n')}\n${indent}}`;
    default: throw new Error(`${where}: no TypeScript for ${JSON.stringify(schema)}`);
  }
}

/** The documented members of an object schema. */
function members(schema: Schema, named: readonly Named[], self: string, indent: string, where: string): string[] {
  if (schema.patternProperties !== undefined) throw new Error(`${where}: patternProperties have no interface here`);
  const required = new Set((schema.required as string[] | undefined) ?? []);
  const lines: string[] = [];
  for (const [key, property] of Object.entries(schema.properties as Record<string, Schema>)) {
    const path = `${where}.${key}`;
    // A field's own description, else the description of the named type it is.
    const referenced = nameOf(property, named, self);
    const description = property.description ?? (referenced === null ? undefined : named.find((entry) => entry.name === referenced)?.schema.description);
    if (description === undefined) missing.push(`${path} has no description`);
    else lines.push(...comment(description, indent));
    lines.push(`${indent}${key}${required.has(key) ? '' : '?'}: ${typeOf(property, named, self, indent, path)};`);
  }
  return lines;
}

const named = await registry();
const check = process.argv.includes('--check');
let stale = false;
for (const module of MODULES) {
  const file = join(ROOT, 'lib', 'documents', `${module}.ts`);
  const before = readFileSync(file, 'utf8');
  let text = before;
  for (const entry of named.filter((candidate) => candidate.module === module)) {
    if (entry.schema.type !== 'object' || KEEP_STATIC.test(entry.name)) continue;
    const body = members(entry.schema, named, entry.name, '  ', entry.name);
    const declaration = `export interface ${entry.name} {\n${body.join('\n')}\n}\n`;
    const alias = new RegExp(`^export type ${entry.name} = Static<typeof ${entry.name}>;\\n`, 'm');
    const written = new RegExp(`^export interface ${entry.name} \\{\\n[\\s\\S]*?^\\}\\n`, 'm');
    if (alias.test(text)) text = text.replace(alias, () => declaration);
    else if (written.test(text)) text = text.replace(written, () => declaration);
    else throw new Error(`${file}: neither export type ${entry.name} = Static<typeof ${entry.name}> nor its interface`);
  }
  if (text === before) continue;
  stale = true;
  if (check) process.stderr.write(`${file} is stale: run npm run interfaces\n`);
  else {
    writeFileSync(file, text);
    process.stderr.write(`wrote ${file}\n`);
  }
}
if (missing.length > 0) {
  // Nothing written is kept: a field without TSDoc is what the interfaces are for.
  process.stderr.write(`every field needs a description (the interface's TSDoc):\n${missing.map((line) => `  ${line}\n`).join('')}`);
  process.exit(1);
}
if (check && stale) process.exit(1);

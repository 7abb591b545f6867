import { readFile, realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { createScanner, parseTree, printParseErrorCode } from 'jsonc-parser';
import type { Node as JsonNode, ParseError } from 'jsonc-parser';
import { WipError } from '../errors.js';
import type { SemVer } from 'semver';
import compareSemver from 'semver/functions/compare.js';
import parseSemver from 'semver/functions/parse.js';
import { CONTRACT_VERSION } from '../version.js';

/**
 * The names a workspace declaration may have; both in one folder is `declaration-ambiguous`.
 * @public
 */
export const DECLARATION_FILE_NAMES = ['chant.workspace.json', 'chant.workspace.jsonc'] as const;

/**
 * Where a value sits in a declaration, as keys and indexes from its top (`["members", 1, "box"]`).
 * @public
 */
export type FieldPath = readonly (string | number)[];

/**
 * Says where a field is, for a message: `file:line:column`, the file alone when the field is not
 * in it, or null when there is no file at all. `at: 'key'` points at an object key rather than its value.
 * @public
 */
export type Locator = (field: FieldPath, at?: 'value' | 'key') => string | null;

/**
 * A workspace declaration, parsed: syntax checked, its top level an object, its `minReader` met.
 * The rest is read by whoever needs it and tolerated otherwise.
 * @public
 */
export interface Declaration {
  /** Where it was read from, as messages name it. */
  readonly path: string;
  /** Its top level, parsed; keys such as `__proto__` are plain own keys. */
  readonly root: Readonly<Record<string, unknown>>;
  /** Where a field is: `file:line:column`, or the file alone when the field is not in it. */
  readonly where: Locator;
}

/**
 * The folders a declaration is looked for in, nearest first: the working directory's folder
 * relative to the checkout's top (with `/` separators), then each one above it, ending with the
 * top itself (`''`). A working directory outside the top yields the top alone.
 * @param cwd - the working directory
 * @param top - the top of the git checkout
 * @returns repository-relative folders, nearest first
 * @public
 */
export async function declarationFolders(cwd: string, top: string): Promise<string[]> {
  let rel = inside(top, cwd);
  // git reports the top with symlinks resolved; a cwd reached through a symlink still belongs.
  if (rel === null) rel = inside(await realpath(top).catch(() => top), await realpath(cwd).catch(() => cwd));
  if (rel === null || rel === '') return [''];
  const parts = rel.split(sep);
  const folders: string[] = [];
  for (let length = parts.length; length >= 0; length -= 1) folders.push(parts.slice(0, length).join('/'));
  return folders;
}

function inside(top: string, cwd: string): string | null {
  const rel = relative(resolve(top), resolve(cwd));
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return null;
  return rel;
}

/**
 * Finds the workspace declaration that governs a working directory: walking up from it to the
 * checkout's top, inclusive, the nearest folder holding `chant.workspace.json` or
 * `chant.workspace.jsonc` wins.
 * @param cwd - the working directory
 * @param top - the top of the git checkout
 * @returns the declaration's absolute path, or null when there is none
 * @throws {@link WipError} `declaration-ambiguous` when the nearest folder holds both names
 * @public
 */
export async function findDeclaration(cwd: string, top: string): Promise<string | null> {
  const folders = await declarationFolders(cwd, top);
  const found = await Promise.all(folders.map(async (folder) => {
    const paths = DECLARATION_FILE_NAMES.map((name) => join(top, ...folder.split('/'), name));
    const present = await Promise.all(paths.map(isFile));
    return paths.filter((_, index) => present[index]);
  }));
  return nearestDeclaration(found);
}

/**
 * The nearest folder's declaration among candidates listed nearest first, each folder's list
 * holding the names present there.
 * @param found - for each folder, nearest first, the declaration paths present in it
 * @returns the one path of the nearest folder that has any, or null
 * @throws {@link WipError} `declaration-ambiguous` when that folder has both
 * @public
 */
export function nearestDeclaration(found: readonly (readonly string[])[]): string | null {
  for (const paths of found) {
    if (paths.length > 1) {
      throw new WipError('declaration-ambiguous', `both ${paths.join(' and ')} exist; keep one of them`);
    }
    if (paths[0] !== undefined) return paths[0];
  }
  return null;
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/**
 * Finds and parses the workspace declaration that governs a working directory.
 * @param cwd - the working directory
 * @param top - the top of the git checkout
 * @returns the declaration, or null when there is none
 * @throws {@link WipError} `declaration-ambiguous`, `declaration-unparseable`, `declaration-invalid` or `reader-too-old`
 * @public
 */
export async function readDeclaration(cwd: string, top: string): Promise<Declaration | null> {
  const path = await findDeclaration(cwd, top);
  if (path === null) return null;
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new WipError('declaration-unparseable', `${path}: cannot be read: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  return parseDeclaration(text, path);
}

const PARSE_PROBLEMS: Readonly<Record<string, string>> = {
  InvalidSymbol: 'an unexpected character',
  InvalidNumberFormat: 'a malformed number',
  PropertyNameExpected: 'a property name was expected',
  ValueExpected: 'a value was expected',
  ColonExpected: 'a colon was expected',
  CommaExpected: 'a comma was expected',
  CloseBraceExpected: "a closing '}' was expected",
  CloseBracketExpected: "a closing ']' was expected",
  EndOfFileExpected: 'the end of the file was expected',
  InvalidCommentToken: 'a comment',
  UnexpectedEndOfComment: 'a comment that never ends',
  UnexpectedEndOfString: 'a string that never ends',
  UnexpectedEndOfNumber: 'a number that never ends',
  InvalidUnicode: 'a malformed \\u escape',
  InvalidEscapeCharacter: 'a malformed escape',
  InvalidCharacter: 'a control character inside a string',
};

/**
 * Parses a workspace declaration's text. A path ending in `.jsonc` allows comments and trailing
 * commas; any other is strict JSON. Checks the syntax, that the top level is an object, and
 * `minReader`; everything else is left to whoever reads it.
 * @param text - the declaration's content
 * @param path - where it came from, as messages name it (a file, or `main:chant.workspace.json`)
 * @returns the parsed declaration
 * @throws {@link WipError} `declaration-unparseable`, `declaration-invalid` or `reader-too-old`
 * @public
 */
export function parseDeclaration(text: string, path: string): Declaration {
  const jsonc = path.endsWith('.jsonc');
  // A byte-order mark is not JSON, but editors write one; a space keeps every offset in place.
  const source = text.startsWith('\uFEFF') ? ` ${text.slice(1)}` : text;
  const deep = tooDeep(source);
  if (deep !== null) {
    throw new WipError('declaration-unparseable', `${path}:${position(source, deep)}: not ${jsonc ? 'JSONC' : 'JSON'}: nested more than ${MAX_DEPTH} deep`);
  }
  const errors: ParseError[] = [];
  const tree = parseTree(source, errors, { allowTrailingComma: jsonc, disallowComments: !jsonc, allowEmptyContent: false });
  const first = errors[0];
  if (tree === undefined || first !== undefined) {
    const offset = first?.offset ?? 0;
    let problem = first === undefined ? 'no value' : PARSE_PROBLEMS[printParseErrorCode(first.error)] ?? printParseErrorCode(first.error);
    if (!jsonc && first !== undefined) {
      const lenient: ParseError[] = [];
      parseTree(source, lenient, { allowTrailingComma: true, disallowComments: false });
      if (lenient.length === 0) {
        problem = `${printParseErrorCode(first.error) === 'InvalidCommentToken' ? 'a comment' : 'a trailing comma'}; comments and trailing commas are allowed only in chant.workspace.jsonc`;
      }
    }
    throw new WipError('declaration-unparseable', `${path}:${position(source, offset)}: not ${jsonc ? 'JSONC' : 'JSON'}: ${problem}`);
  }
  const where: Locator = (field, at = 'value') => {
    const offset = locate(tree, field, at);
    return offset === null ? path : `${path}:${position(source, offset)}`;
  };
  const root = valueOf(tree);
  if (!isObject(root)) throw invalid(where, [], `must be a JSON object; it is ${kind(root)}`);
  checkMinReader(root, where);
  return { path, root, where };
}

/** How deep arrays and objects may nest: the parser and the readers after it recurse, so a deeper text would exhaust the stack. */
const MAX_DEPTH = 1000;

/** The offset of the first bracket nested deeper than {@link MAX_DEPTH}, or null; found by the scanner, which does not recurse. */
function tooDeep(text: string): number | null {
  const scanner = createScanner(text, true);
  let depth = 0;
  // jsonc-parser's SyntaxKind is a const enum, which this build cannot import: 1 and 3 open, 2 and 4 close, 17 ends.
  for (let token = scanner.scan(); token !== 17; token = scanner.scan()) {
    if (token === 1 || token === 3) {
      depth += 1;
      if (depth > MAX_DEPTH) return scanner.getTokenOffset();
    } else if (token === 2 || token === 4) {
      depth -= 1;
    }
  }
  return null;
}

function checkMinReader(root: Readonly<Record<string, unknown>>, where: Locator): void {
  if (!Object.hasOwn(root, 'minReader')) return;
  const wanted = root.minReader;
  const version = typeof wanted === 'string' ? parseVersion(wanted) : null;
  if (version === null) throw invalid(where, ['minReader'], `must be a semantic version such as "${CONTRACT_VERSION}"; it is ${show(wanted)}`);
  if (compareSemver(version, CONTRACT_VERSION) > 0) {
    throw new WipError('reader-too-old', `${where(['minReader'])}: the declaration needs a reader of contract ${wanted as string} or newer; this chant-wip implements ${CONTRACT_VERSION}`);
  }
}

/**
 * A version as the contract writes one: semver's, with its one twist that the text is the
 * version itself (semver also takes a leading `v` or `=`, and blanks around it).
 */
function parseVersion(text: string): SemVer | null {
  return /^[0-9]/.test(text) && text.trim() === text ? parseSemver(text) : null;
}

/**
 * A field path as people read it: `members[1].box.replicate.refs[0]`.
 * @param field - keys and indexes from the top
 * @returns the path, or `(top level)` for the empty path
 * @public
 */
export function formatField(field: FieldPath): string {
  let text = '';
  for (const part of field) {
    if (typeof part === 'number') text += `[${part}]`;
    else if (/^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(part)) text += text === '' ? part : `.${part}`;
    else text += `[${JSON.stringify(part)}]`;
  }
  return text === '' ? '(top level)' : text;
}

/**
 * A block a member's box declares (`replicate`, `retain`).
 * @internal
 */
export interface BoxBlock {
  /** The member's `name`, or `members[i]` when it has none. */
  box: string;
  /** The member as messages name it: `"app" (members[0])`, or `members[0]`. */
  label: string;
  /** Where the block sits: `["members", 0, "box", key]`. */
  field: FieldPath;
  /** The block as written. */
  value: unknown;
}

/**
 * The one block of a kind the declaration's boxes declare, checking the shape of the path to it:
 * `members` an array, each member an object, each `box` an object; at most one box declares it.
 * @param declaration - a parsed declaration
 * @param key - the block's key under `box`
 * @returns the block, or null when no box declares it
 * @throws {@link WipError} `declaration-invalid` when the shape is wrong or two boxes declare it
 * @internal
 */
export function boxBlock(declaration: Declaration, key: string): BoxBlock | null {
  const { root, where } = declaration;
  if (!Object.hasOwn(root, 'members')) return null;
  const members = root.members;
  if (!Array.isArray(members)) throw invalid(where, ['members'], `must be an array; it is ${kind(members)}`);
  let found: BoxBlock | null = null;
  for (const [index, member] of members.entries()) {
    if (!isObject(member)) throw invalid(where, ['members', index], `must be an object; it is ${kind(member)}`);
    if (!Object.hasOwn(member, 'box')) continue;
    if (!isObject(member.box)) throw invalid(where, ['members', index, 'box'], `must be an object; it is ${kind(member.box)}`);
    if (!Object.hasOwn(member.box, key)) continue;
    const named = typeof member.name === 'string' && member.name.length > 0;
    const box = named ? (member.name as string) : `members[${index}]`;
    const label = named ? `${JSON.stringify(box)} (members[${index}])` : box;
    const field = ['members', index, 'box', key];
    if (found !== null) throw invalid(where, field, `is a second ${key}: only one box may declare ${key}, but members ${found.label} and ${label} both do`);
    found = { box, label, field, value: member.box[key] };
  }
  return found;
}

/**
 * A `declaration-invalid` refusal naming the field and where it is.
 * @internal
 */
export function invalid(where: Locator, field: FieldPath, problem: string, at: 'value' | 'key' = 'value'): WipError {
  const location = where(field, at);
  return new WipError('declaration-invalid', `${location === null ? '' : `${location}: `}${formatField(field)} ${problem}`);
}

/** @internal */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** What kind of JSON value this is, for a message (`an array`, `a string`). @internal */
export function kind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}

/** A value as a message shows it, shortened. @internal */
export function show(value: unknown): string {
  if (typeof value === 'object' && value !== null) return kind(value);
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** A parse tree's value, with every key an own property (`__proto__` included) and the last of duplicates winning, as JSON.parse does. */
function valueOf(node: JsonNode): unknown {
  switch (node.type) {
    case 'object': {
      const object: Record<string, unknown> = {};
      for (const property of node.children ?? []) {
        const [key, value] = property.children ?? [];
        if (key === undefined || value === undefined) continue;
        Object.defineProperty(object, key.value as string, { value: valueOf(value), enumerable: true, writable: true, configurable: true });
      }
      return object;
    }
    case 'array':
      return (node.children ?? []).map(valueOf);
    default:
      return node.value;
  }
}

/** The offset of a field's value (or key) in the text, or null when the field is not there. */
function locate(tree: JsonNode, field: FieldPath, at: 'value' | 'key'): number | null {
  let node = tree;
  let keyOffset = tree.offset;
  for (const part of field) {
    let next: JsonNode | undefined;
    if (node.type === 'object' && typeof part === 'string') {
      let property: JsonNode | undefined;
      for (const candidate of node.children ?? []) if (candidate.children?.[0]?.value === part) property = candidate;
      next = property?.children?.[1];
      keyOffset = property?.offset ?? keyOffset;
    } else if (node.type === 'array' && typeof part === 'number') {
      next = node.children?.[part];
      keyOffset = next?.offset ?? keyOffset;
    }
    if (next === undefined) return null;
    node = next;
  }
  return at === 'key' ? keyOffset : node.offset;
}

/** `line:column`, both from 1, the column counted in characters. */
function position(text: string, offset: number): string {
  const before = text.slice(0, offset);
  const lineStart = before.lastIndexOf('\n') + 1;
  const line = before.length - before.replaceAll('\n', '').length + 1;
  return `${line}:${[...before.slice(lineStart)].length + 1}`;
}

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DECLARATION_FILE_NAMES, declarationFolders, nearestDeclaration, parseDeclaration, readDeclaration } from './declaration.js';
import type { Declaration } from './declaration.js';
import { WipError } from '../errors.js';
import { findBlobs, readBlob, resolveBase } from '../git/objects.js';
import type { BaseCommit } from '../git/objects.js';
import type { GitRunner } from '../git/runner.js';

/**
 * The forges a `<forge>@<host>:<login>` identity may name.
 * @public
 */
export const FORGES = ['github', 'gitlab', 'forgejo', 'gitea'] as const;

/**
 * The roles in `.chant/trust.json` that make a principal identified.
 * @public
 */
export const IDENTIFIED_ROLES = ['agent', 'runner', 'service'] as const;

/** Where the signers file and the trust file sit, from the checkout's top. */
const SIGNERS_FILE = '.chant/allowed_signers';
const TRUST_FILE = '.chant/trust.json';

/**
 * What {@link checkPrincipal} judges, and with what.
 * @public
 */
export interface CheckPrincipalOptions {
  /** How git is run. */
  git: GitRunner;
  /** The working directory: the declaration is the one governing it. */
  cwd: string;
  /** The top of the git checkout. */
  top: string;
  /** The `--by` value, or null when none was given (never judged). */
  by: string | null;
  /** Where `CHANT_AGENT` is read from; `process.env` when absent. */
  env?: Readonly<Record<string, string | undefined>>;
}

/**
 * A principal as it is compared: NFKC-normalised, trimmed, lower-cased.
 * @param value - a principal as written
 * @returns its comparable form
 * @public
 */
export function normalizePrincipal(value: string): string {
  return value.normalize('NFKC').trim().toLowerCase();
}

// A login: a letter or digit, then up to 98 of letters, digits, ".", "_" and "-", the last of
// which is a letter, digit or "_"; so 1 to 99 characters. A host: dot-separated DNS labels.
const LOGIN = '[a-z0-9](?:[a-z0-9._-]{0,97}[a-z0-9_])?';
const HOST = '(?=[a-z0-9.-]{1,253}:)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*';
const FORGE_IDENTITY = new RegExp(`^(?:(?:github|gitlab):${LOGIN}|(?:${FORGES.join('|')})@${HOST}:${LOGIN})$`);

/**
 * Whether a principal is a forge identity: `github:<login>`, `gitlab:<login>`, or
 * `<forge>@<host>:<login>` with forge one of {@link FORGES}, compared after
 * {@link normalizePrincipal}.
 * @param value - a principal as written
 * @returns true when it is one
 * @public
 */
export function isForgeIdentity(value: string): boolean {
  return FORGE_IDENTITY.test(normalizePrincipal(value));
}

/** Where the identity rule reads its files: the base commit, or the working tree without one. */
interface Source {
  /** How messages name it: `at main`, `in the working tree`. */
  label: string;
  /** The content of a file given from the top, or null when it is not there. */
  read(path: string): Promise<string | null>;
}

/**
 * Holds `--by` to the identity rule (CONTRACT section 8). Nothing is judged unless the
 * declaration at base (or, without one there, in the working tree) sets
 * `identity.attribution` to `"identified"`, and nothing is judged when `by` is null or
 * `CHANT_AGENT` names an agent session the declaration lists. Otherwise `by` must be a forge
 * identity, a principal of `.chant/allowed_signers`, a principal of an agent session
 * (`agents[].principals`), or one holding the agent, runner or service role in
 * `.chant/trust.json`, all read at base. A forge identity is accepted before git is asked anything.
 * @param options - the principal and where to judge it
 * @returns when the principal is accepted or nothing is judged
 * @throws {@link WipError} `principal-unidentified` when it is refused, with the accepted forms;
 * the declaration codes when the declaration read is broken; `git-failed` when git fails
 * @public
 */
export async function checkPrincipal(options: CheckPrincipalOptions): Promise<void> {
  const { git, cwd, top, by } = options;
  if (by === null || isForgeIdentity(by)) return;
  const base = await resolveBase(git, top);
  const folders = await declarationFolders(cwd, top);
  const declarationPaths = folders.flatMap((folder) => DECLARATION_FILE_NAMES.map((name) => (folder === '' ? name : `${folder}/${name}`)));
  let source: Source;
  let declaration: Declaration | null = null;
  if (base === null) {
    source = workingTree(top);
  } else {
    const blobs = await findBlobs(git, top, base.commit, [...declarationPaths, SIGNERS_FILE, TRUST_FILE]);
    source = atBase(git, top, base, blobs);
    // Named as git names a blob (`main:chant.workspace.json`), so messages say where it was read.
    const named = new Map(declarationPaths.map((path) => [`${baseName(base)}:${path}`, path]));
    const found: string[][] = [];
    for (let i = 0; i < declarationPaths.length; i += DECLARATION_FILE_NAMES.length) {
      found.push([...named].slice(i, i + DECLARATION_FILE_NAMES.length).filter(([, path]) => blobs.has(path)).map(([name]) => name));
    }
    const nearest = nearestDeclaration(found);
    if (nearest !== null) declaration = parseDeclaration((await source.read(named.get(nearest) as string)) ?? '', nearest);
  }
  declaration ??= await readDeclaration(cwd, top);
  if (declaration === null || attribution(declaration) !== 'identified') return;

  const agents = agentSessions(declaration);
  const agent = normalizePrincipal((options.env ?? process.env).CHANT_AGENT ?? '');
  if (agent !== '' && agents.some((session) => session.name === agent)) return;

  const wanted = normalizePrincipal(by);
  if (agents.some((session) => session.principals.includes(wanted))) return;
  const signers = await source.read(SIGNERS_FILE);
  if (signers !== null && signerPrincipals(signers).includes(wanted)) return;
  const trust = await source.read(TRUST_FILE);
  const roles = trust === null ? { principals: [], broken: false } : identifiedByRole(trust);
  if (roles.principals.includes(wanted)) return;

  const at = source.label;
  throw new WipError(
    'principal-unidentified',
    `--by ${JSON.stringify(by)} is not an identified principal, and ${declaration.path} requires one (identity.attribution "identified"). `
      + 'Accepted: a forge identity (github:<login>, gitlab:<login>, or <forge>@<host>:<login> with forge github, gitlab, forgejo or gitea); '
      + `a principal listed in ${SIGNERS_FILE} ${at}; a principal of an agent session (agents[].principals) in the declaration; `
      + `or a principal holding the agent, runner or service role in ${TRUST_FILE} roles ${at}.`
      + (roles.broken ? ` (${TRUST_FILE} ${at} is not JSON, so it granted no roles.)` : ''),
  );
}

function baseName(base: BaseCommit): string {
  return base.ref.replace(/^refs\/(?:heads|remotes)\//, '');
}

function atBase(git: GitRunner, top: string, base: BaseCommit, blobs: ReadonlyMap<string, string>): Source {
  return {
    label: `at ${baseName(base)}`,
    read: async (path) => {
      const oid = blobs.get(path);
      return oid === undefined ? null : readBlob(git, top, oid);
    },
  };
}

function workingTree(top: string): Source {
  return {
    label: 'in the working tree',
    read: async (path) => {
      try {
        return await readFile(join(top, ...path.split('/')), 'utf8');
      } catch {
        return null;
      }
    },
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function attribution(declaration: Declaration): string {
  const identity = declaration.root.identity;
  return isObject(identity) && typeof identity.attribution === 'string' ? identity.attribution : 'any';
}

/** The declaration's agent sessions, names and principals normalised; malformed entries are skipped. */
function agentSessions(declaration: Declaration): { name: string; principals: string[] }[] {
  const agents = declaration.root.agents;
  if (!Array.isArray(agents)) return [];
  return agents.filter(isObject).map((agent) => ({
    name: typeof agent.name === 'string' ? normalizePrincipal(agent.name) : '',
    principals: Array.isArray(agent.principals)
      ? agent.principals.filter((item): item is string => typeof item === 'string').map(normalizePrincipal).filter((item) => item !== '')
      : [],
  }));
}

/**
 * The principals an ssh allowed_signers file lists: the first field of each line that is not
 * blank or a comment, split at commas. Patterns (`*`, `?`, `!`) are not expanded: they name no one.
 */
function signerPrincipals(text: string): string[] {
  const principals: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const field = trimmed.startsWith('"') ? trimmed.slice(1, trimmed.indexOf('"', 1) === -1 ? undefined : trimmed.indexOf('"', 1)) : (trimmed.split(/\s+/)[0] ?? '');
    for (const principal of field.split(',')) {
      const normalized = normalizePrincipal(principal);
      if (normalized !== '' && !/[*?!]/.test(normalized)) principals.push(normalized);
    }
  }
  return principals;
}

/**
 * The principals `.chant/trust.json` gives the agent, runner or service role. `roles` is read
 * as a map from principal to a role or a list of roles, or as a list of
 * `{principal, role}` / `{principal, roles}` entries; anything else grants nothing.
 */
function identifiedByRole(text: string): { principals: string[]; broken: boolean } {
  let trust: unknown;
  try {
    trust = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch {
    return { principals: [], broken: true };
  }
  const roles = isObject(trust) ? trust.roles : undefined;
  const entries: [unknown, unknown][] = Array.isArray(roles)
    ? roles.filter(isObject).map((entry) => [entry.principal, entry.roles ?? entry.role])
    : isObject(roles) ? Object.entries(roles) : [];
  const principals: string[] = [];
  for (const [principal, held] of entries) {
    if (typeof principal !== 'string') continue;
    const list = (Array.isArray(held) ? held : [held]).filter((role): role is string => typeof role === 'string');
    if (list.some((role) => (IDENTIFIED_ROLES as readonly string[]).includes(normalizePrincipal(role)))) principals.push(normalizePrincipal(principal));
  }
  return { principals, broken: false };
}

// Real remotes on 127.0.0.1 for the replication tests: a bare repository by path, `git daemon`
// over git://, and smart HTTP through `git http-backend` behind Basic auth. Every server started
// here is stopped when the test file ends. Also the document checks both replication test files
// share: this project's schemas and the reference's.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { connect, createServer as createNetServer } from 'node:net';
import { join } from 'node:path';
import { after } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { FIXTURE_ENV, git, ROOT, tempDir } from './helpers.js';
import { validateDocument } from '../lib/validate.js';

const stops: Array<() => Promise<void>> = [];
after(async () => {
  await Promise.all(stops.splice(0).map((stop) => stop()));
});

const EXEC_PATH = spawnSync('git', ['--exec-path'], { encoding: 'utf8', env: FIXTURE_ENV }).stdout.trim();

/** A bare repository on `main`, in `dir` (a fresh temporary folder when absent). */
export function bareRemote(dir: string = join(tempDir('chant-remote-'), 'remote.git')): string {
  mkdirSync(dir, { recursive: true });
  git(dir, ['init', '-q', '--bare', '-b', 'main']);
  return dir;
}

/** A port on 127.0.0.1 nothing listens on: the kernel's pick for port 0, released again. */
export async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

async function acceptsConnections(port: number, child: ChildProcess, waitMs = 10_000): Promise<void> {
  const deadline = Date.now() + waitMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode} before accepting connections`);
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`nothing accepted connections on 127.0.0.1:${port} within ${waitMs} ms`);
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 2_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** A running server of repositories. */
export interface RepositoryServer {
  /** Where the served repositories live. */
  base: string;
  port: number;
  /** Creates a bare repository `name` (such as `shared.git`) and returns its URL. */
  repository(name: string): string;
  /** The URL of repository `name`, with `user:password@` when given. */
  url(name: string, credentials?: string): string;
  stop(): Promise<void>;
}

/** `git daemon` serving every repository under a fresh folder over git://, pushes allowed. */
export async function startGitDaemon(): Promise<RepositoryServer> {
  const base = tempDir('chant-daemon-');
  const port = await freePort();
  // The daemon program itself, not the `git daemon` wrapper, so that stopping it stops it.
  const child = spawn(join(EXEC_PATH, 'git-daemon'), [
    '--reuseaddr', '--export-all', '--enable=receive-pack', `--base-path=${base}`, '--listen=127.0.0.1', `--port=${port}`,
    '--timeout=20', '--init-timeout=10', '--max-connections=16', base,
  ], { env: FIXTURE_ENV, stdio: ['ignore', 'ignore', 'ignore'] });
  const stop = () => stopChild(child);
  stops.push(stop);
  await acceptsConnections(port, child);
  const url = (name: string, credentials?: string) => `git://${credentials === undefined ? '' : `${credentials}@`}127.0.0.1:${port}/${name}`;
  return {
    base,
    port,
    url,
    repository(name) {
      bareRemote(join(base, name));
      return url(name);
    },
    stop,
  };
}

/**
 * Smart HTTP through `git http-backend`, behind a Node server on 127.0.0.1 that answers 401 with
 * `WWW-Authenticate` unless the request carries Basic `user:password`.
 */
export async function startHttpRemote(user: string, password: string): Promise<RepositoryServer> {
  const base = tempDir('chant-http-');
  const expected = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  const children = new Set<ChildProcess>();
  const server = createServer((request, response) => {
    if (request.headers.authorization !== expected) {
      request.resume();
      response.writeHead(401, { 'WWW-Authenticate': 'Basic realm="chant-test"', 'Content-Type': 'text/plain' });
      response.end('authentication required\n');
      return;
    }
    serveCgi(base, user, request, response, children);
  });
  server.requestTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  const port = address.port;
  const stop = async () => {
    await Promise.all([...children].map((child) => stopChild(child)));
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  stops.push(stop);
  const url = (name: string, credentials?: string) => `http://${credentials === undefined ? '' : `${credentials}@`}127.0.0.1:${port}/${name}`;
  return {
    base,
    port,
    url,
    repository(name) {
      const dir = bareRemote(join(base, name));
      git(dir, ['config', 'http.receivepack', 'true']);
      return url(name);
    },
    stop,
  };
}

/** Runs `git http-backend` as a CGI for one request. */
function serveCgi(base: string, user: string, request: IncomingMessage, response: ServerResponse, children: Set<ChildProcess>): void {
  const url = new URL(request.url ?? '/', 'http://127.0.0.1');
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: FIXTURE_ENV.HOME,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_PROJECT_ROOT: base,
    GIT_HTTP_EXPORT_ALL: '1',
    GATEWAY_INTERFACE: 'CGI/1.1',
    SERVER_PROTOCOL: 'HTTP/1.1',
    REQUEST_METHOD: request.method ?? 'GET',
    PATH_INFO: decodeURIComponent(url.pathname),
    QUERY_STRING: url.search.slice(1),
    CONTENT_TYPE: request.headers['content-type'] ?? '',
    REMOTE_USER: user,
    REMOTE_ADDR: '127.0.0.1',
  };
  if (request.headers['content-length'] !== undefined) env.CONTENT_LENGTH = request.headers['content-length'];
  if (request.headers['content-encoding'] !== undefined) env.HTTP_CONTENT_ENCODING = request.headers['content-encoding'];
  const protocol = request.headers['git-protocol'];
  if (typeof protocol === 'string') env.GIT_PROTOCOL = protocol;
  const child = spawn(join(EXEC_PATH, 'git-http-backend'), [], { env, stdio: ['pipe', 'pipe', 'ignore'] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  child.once('exit', () => clearTimeout(timer));
  request.pipe(child.stdin);
  child.stdin.on('error', () => undefined);
  let head = Buffer.alloc(0);
  let started = false;
  child.stdout.on('data', (chunk: Buffer) => {
    if (started) {
      response.write(chunk);
      return;
    }
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf('\r\n\r\n');
    if (end < 0) return;
    started = true;
    let status = 200;
    const headers: Record<string, string> = {};
    for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
      const colon = line.indexOf(':');
      if (colon < 0) continue;
      const name = line.slice(0, colon).trim();
      const value = line.slice(colon + 1).trim();
      if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10);
      else headers[name] = value;
    }
    response.writeHead(status, headers);
    response.write(head.subarray(end + 4));
  });
  child.stdout.once('end', () => {
    if (!started) response.writeHead(502);
    response.end();
  });
}

const REFERENCE = join(ROOT, '..', 'shared', 'reference');
let reference: Ajv2020 | undefined;

function referenceValidator(file: 'wip.schema.json' | 'wip-write.schema.json') {
  if (reference === undefined) {
    reference = new Ajv2020({ allErrors: true, strict: false });
    (addFormatsModule as unknown as (target: Ajv2020) => void)(reference);
    for (const name of ['wip.schema.json', 'wip-write.schema.json']) reference.addSchema(JSON.parse(readFileSync(join(REFERENCE, name), 'utf8')));
  }
  const schema = JSON.parse(readFileSync(join(REFERENCE, file), 'utf8')) as { $id: string };
  const validate = reference.getSchema(schema.$id);
  assert.ok(validate, `the reference schema ${file} loads`);
  return validate;
}

/** Asserts a document validates against this project's schemas and the reference's. */
export function assertDocument(document: { $schema: string }): void {
  assert.deepEqual(validateDocument(document), [], `follows this project's schema: ${JSON.stringify(document)}`);
  const validate = referenceValidator(document.$schema.includes('/wip-write/') ? 'wip-write.schema.json' : 'wip.schema.json');
  assert.ok(validate(document), `follows the reference schema: ${JSON.stringify(validate.errors)}`);
}

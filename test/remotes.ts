// Real remotes on 127.0.0.1 for the replication tests: a bare repository by path, `git daemon`
// over git://, smart HTTP through `git http-backend` behind a Node server with Basic auth and
// behind lighttpd (with or without Basic auth, over TLS), sshd with a key account and a
// password-only account, a listener that never answers, a proxy that is slow or dies midway, a
// secret-scanning pre-receive hook. Every server started here is stopped when the test file ends.
// In-process servers (the proxy, the listener) only run while the test awaits: drive git through
// the SDK or an asynchronous spawn past them, never spawnSync. Also the document checks both replication test files
// share: this project's schemas and the reference's.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { connect, createServer as createNetServer } from 'node:net';
import { serveLink } from './paced-link.js';
import type { LinkOptions } from './paced-link.js';
import { join } from 'node:path';
import { after } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { FIXTURE_ENV, git, makeRepo, REFERENCE_DIR, referenceMissing, ROOT, tempDir } from './helpers.js';
import { SimpleGitRunner } from '../lib/git/runner.js';
import { validateDocument } from '../lib/documents/validate.js';

const stops: Array<() => Promise<void>> = [];
after(async () => {
  await Promise.all(stops.splice(0).map((stop) => stop()));
});

const EXEC_PATH = spawnSync('git', ['--exec-path'], { encoding: 'utf8', env: FIXTURE_ENV }).stdout.trim();

/** The refs of `dir` under `pattern`, each with the commit it names. */
export function refsIn(dir: string, pattern: string): Record<string, string> {
  const refs: Record<string, string> = {};
  for (const line of git(dir, ['for-each-ref', '--format=%(refname) %(objectname)', pattern]).split('\n').filter(Boolean)) {
    const [ref, commit] = line.split(' ') as [string, string];
    refs[ref] = commit;
  }
  return refs;
}

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

let reference: Ajv2020 | undefined;

function referenceValidator(file: 'wip.schema.json' | 'wip-write.schema.json') {
  if (reference === undefined) {
    reference = new Ajv2020({ allErrors: true, strict: false });
    (addFormatsModule as unknown as (target: Ajv2020) => void)(reference);
    for (const name of ['wip.schema.json', 'wip-write.schema.json']) reference.addSchema(JSON.parse(readFileSync(join(REFERENCE_DIR, name), 'utf8')));
  }
  const schema = JSON.parse(readFileSync(join(REFERENCE_DIR, file), 'utf8')) as { $id: string };
  const validate = reference.getSchema(schema.$id);
  assert.ok(validate, `the reference schema ${file} loads`);
  return validate;
}

/** Asserts a document validates against this project's schemas and the reference's (when present: see referenceMissing). */
export function assertDocument(document: { $schema: string }): void {
  assert.deepEqual(validateDocument(document), [], `follows this project's schema: ${JSON.stringify(document)}`);
  if (referenceMissing() !== null) return;
  const validate = referenceValidator(document.$schema.includes('/wip-write/') ? 'wip-write.schema.json' : 'wip.schema.json');
  assert.ok(validate(document), `follows the reference schema: ${JSON.stringify(validate.errors)}`);
}

/**
 * Why a program the tests need is not on this machine, or null when it is. `.ci/run` installs
 * them; a clone without those installs skips the tests that need them, saying why.
 */
export function missingProgram(program: string): string | null {
  const found = spawnSync('sh', ['-c', 'command -v "$1"', 'sh', program], { encoding: 'utf8', env: { PATH: `${process.env.PATH ?? ''}:/usr/sbin:/sbin` } });
  return found.status === 0 && found.stdout.trim().length > 0 ? null : `${program} is not installed (.ci/run installs it)`;
}

/** The full path of a program on PATH or in the sbin folders. */
function programPath(program: string): string {
  const found = spawnSync('sh', ['-c', 'command -v "$1"', 'sh', program], { encoding: 'utf8', env: { PATH: `${process.env.PATH ?? ''}:/usr/sbin:/sbin` } });
  return found.stdout.trim();
}

/** Whether git-lfs is installed; its reason when not. */
export function missingLfs(): string | null {
  const found = spawnSync('git', ['lfs', 'version'], { encoding: 'utf8', env: FIXTURE_ENV });
  return found.status === 0 ? null : 'git-lfs is not installed (.ci/run installs it)';
}

/** A web server with TLS: what a client needs to trust it. */
export interface TlsServer extends RepositoryServer {
  /** The self-signed certificate, for GIT_SSL_CAINFO or http.sslCAInfo. */
  caFile: string | null;
}

/**
 * Smart HTTP through `git http-backend` run as a CGI by lighttpd, a real web server, on
 * 127.0.0.1: with Basic auth when `auth` is given (every request, reads included), over TLS with
 * a self-signed certificate for 127.0.0.1 when `tls` is set.
 */
export async function startLighttpd(options: { auth?: { user: string; password: string }; tls?: boolean; maxRequestKiB?: number } = {}): Promise<TlsServer> {
  const base = tempDir('chant-lighttpd-');
  const repos = join(base, 'repos');
  mkdirSync(repos);
  const port = await freePort();
  const modules = ['mod_alias', 'mod_setenv'];
  const lines: string[] = [];
  if (options.auth !== undefined) {
    modules.push('mod_auth', 'mod_authn_file');
    writeFileSync(join(base, 'users'), `${options.auth.user}:${options.auth.password}\n`);
    lines.push(
      'auth.backend = "plain"',
      `auth.backend.plain.userfile = "${join(base, 'users')}"`,
      'auth.require = ( "/" => ( "method" => "basic", "realm" => "chant-test", "require" => "valid-user" ) )',
    );
  }
  modules.push('mod_cgi');
  let caFile: string | null = null;
  if (options.tls === true) {
    modules.push('mod_openssl');
    caFile = join(base, 'cert.pem');
    const key = join(base, 'key.pem');
    const made = spawnSync('openssl', [
      'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=127.0.0.1',
      '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', key, '-out', caFile,
    ], { encoding: 'utf8' });
    if (made.status !== 0) throw new Error(`openssl could not make a certificate: ${made.stderr}`);
    lines.push('ssl.engine = "enable"', `ssl.pemfile = "${caFile}"`, `ssl.privkey = "${key}"`);
  }
  const config = [
    `server.modules = ( ${modules.map((name) => `"${name}"`).join(', ')} )`,
    `server.document-root = "${base}"`,
    `server.port = ${port}`,
    'server.bind = "127.0.0.1"',
    `server.errorlog = "${join(base, 'error.log')}"`,
    `server.max-request-size = ${options.maxRequestKiB ?? 1048576}`,
    `alias.url = ( "/" => "${join(EXEC_PATH, 'git-http-backend')}/" )`,
    'cgi.assign = ( "" => "" )',
    `setenv.add-environment = ( "GIT_PROJECT_ROOT" => "${repos}", "GIT_HTTP_EXPORT_ALL" => "1", "GIT_CONFIG_NOSYSTEM" => "1", "HOME" => "${FIXTURE_ENV.HOME}" )`,
    ...lines,
    '',
  ].join('\n');
  writeFileSync(join(base, 'lighttpd.conf'), config);
  const child = spawn(programPath('lighttpd'), ['-D', '-f', join(base, 'lighttpd.conf')], { stdio: ['ignore', 'ignore', 'ignore'] });
  const stop = () => stopChild(child);
  stops.push(stop);
  await acceptsConnections(port, child);
  const scheme = options.tls === true ? 'https' : 'http';
  const url = (name: string, credentials?: string) => `${scheme}://${credentials === undefined ? '' : `${credentials}@`}127.0.0.1:${port}/${name}`;
  return {
    base: repos,
    port,
    url,
    caFile,
    repository(name) {
      const dir = bareRemote(join(repos, name));
      git(dir, ['config', 'http.receivepack', 'true']);
      return url(name);
    },
    stop,
  };
}

/** sshd on 127.0.0.1 with two accounts: root by key only, and `nobody` by password only. */
export interface SshServer extends RepositoryServer {
  /** The ssh command a host would configure (`core.sshCommand`) for root's key, without batch mode. */
  sshCommand: string;
  /** The same without the key: what the password-only account can use. */
  sshCommandWithoutKey: string;
  /** The private key of root's account. */
  key: string;
  /** A known_hosts file holding the server's host key. */
  knownHosts: string;
}

/**
 * OpenSSH's sshd on 127.0.0.1 (run as root, which the tests are): root logs in by key only,
 * `nobody` by password only, so a client in batch mode is refused at once. Repository URLs are
 * `ssh://<user>@127.0.0.1:<port>/<absolute path>`.
 */
export async function startSshd(): Promise<SshServer> {
  const base = tempDir('chant-sshd-');
  const repos = join(base, 'repos');
  mkdirSync(repos);
  mkdirSync(join(base, 'keys'));
  const keygen = (file: string) => {
    const made = spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'chant-test', '-f', file], { encoding: 'utf8' });
    if (made.status !== 0) throw new Error(`ssh-keygen failed: ${made.stderr}`);
  };
  keygen(join(base, 'host'));
  keygen(join(base, 'id'));
  writeFileSync(join(base, 'keys', 'root'), readFileSync(join(base, 'id.pub')));
  const port = await freePort();
  writeFileSync(join(base, 'sshd_config'), [
    `Port ${port}`,
    'ListenAddress 127.0.0.1',
    `HostKey ${join(base, 'host')}`,
    `PidFile ${join(base, 'sshd.pid')}`,
    `AuthorizedKeysFile ${join(base, 'keys')}/%u`,
    'StrictModes no',
    'UsePAM no',
    'PermitRootLogin prohibit-password',
    'PasswordAuthentication yes',
    'KbdInteractiveAuthentication no',
    'AllowUsers root nobody',
    'Match User nobody',
    '  AuthenticationMethods password',
    '',
  ].join('\n'));
  // sshd wants its privilege separation folder.
  mkdirSync('/run/sshd', { recursive: true });
  const child = spawn(programPath('sshd'), ['-D', '-e', '-f', join(base, 'sshd_config')], { stdio: ['ignore', 'ignore', 'ignore'] });
  const stop = () => stopChild(child);
  stops.push(stop);
  await acceptsConnections(port, child);
  const knownHosts = join(base, 'known_hosts');
  writeFileSync(knownHosts, `[127.0.0.1]:${port} ${readFileSync(join(base, 'host.pub'), 'utf8')}`);
  // -F /dev/null: never the machine's own ~/.ssh/config, which ssh finds through the passwd entry.
  const common = `ssh -F /dev/null -o UserKnownHostsFile=${knownHosts} -o StrictHostKeyChecking=yes`;
  const url = (name: string, credentials?: string) => `ssh://${credentials ?? 'root'}@127.0.0.1:${port}${join(repos, name)}`;
  return {
    base: repos,
    port,
    url,
    key: join(base, 'id'),
    knownHosts,
    sshCommand: `${common} -o IdentitiesOnly=yes -i ${join(base, 'id')}`,
    sshCommandWithoutKey: `${common} -o IdentitiesOnly=yes -o PubkeyAuthentication=no`,
    repository(name) {
      bareRemote(join(repos, name));
      return url(name);
    },
    stop,
  };
}

/**
 * A TCP listener on 127.0.0.1 that accepts every connection and never says a word; `open()` says
 * how many connections are still open (one a client's process holds until it dies).
 */
export async function startSilentListener(): Promise<{ port: number; open(): number; stop(): Promise<void> }> {
  return startListener(() => undefined);
}

/**
 * A TCP listener on 127.0.0.1 that answers every connection with the length of a pkt-line of
 * 65,520 bytes (`fff0`), then one byte of it a second, forever: git keeps reading and would
 * finish the line in 18 hours. `open()` as for {@link startSilentListener}.
 */
export async function startTricklingListener(): Promise<{ port: number; open(): number; stop(): Promise<void> }> {
  return startListener((socket) => {
    socket.write('fff0');
    const timer = setInterval(() => socket.write('a'), 1_000);
    socket.once('close', () => clearInterval(timer));
  });
}

async function startListener(answer: (socket: import('node:net').Socket) => void): Promise<{ port: number; open(): number; stop(): Promise<void> }> {
  const sockets = new Set<import('node:net').Socket>();
  const server = createNetServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.once('close', () => sockets.delete(socket));
    // Reads and drops what the client says, so that its end (the client's process gone) is seen.
    socket.resume();
    answer(socket);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  const stop = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  stops.push(stop);
  return { port: address.port, open: () => sockets.size, stop };
}

/**
 * A TCP proxy on 127.0.0.1 in front of `target`: with `bytesPerSecond`, a slow but healthy link
 * (every byte arrives, paced in both directions); with `cutAfterBytes`, a server that dies
 * mid-transfer (both ends are closed once that many bytes went from client to server).
 *
 * A paced link runs in a process of its own whose listening socket has a small receive buffer
 * (`test/paced-link.ts`): the kernel otherwise grows a loopback socket's buffer to a megabyte or
 * more, takes (and acknowledges) a second of the client's bytes per 30 KB of it, and so hides half
 * a minute of a 30 KB/s transfer from the client's socket queue, which no real link does: there the
 * bytes leave the sender's queue when the far end acknowledges them.
 */
export async function startProxy(target: number, options: LinkOptions = {}): Promise<{ port: number; stop(): Promise<void> }> {
  if (options.bytesPerSecond !== undefined) return startPacedProcess(target, options.bytesPerSecond);
  const server = createNetServer();
  const sockets = serveLink(server, target, options);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  const stop = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  stops.push(stop);
  return { port: address.port, stop };
}

/** Listens with a receive buffer of this many bytes (the kernel doubles it) and hands the socket to the link. */
const LINK_RECEIVE_BUFFER = 16 * 1024;

async function startPacedProcess(target: number, bytesPerSecond: number): Promise<{ port: number; stop(): Promise<void> }> {
  // Perl (which git itself depends on) makes the listening socket, since Node cannot set
  // SO_RCVBUF; accepted sockets inherit it, and a size set by hand stops the kernel growing it.
  const listen = [
    'BEGIN { $^F = 255 } use Socket; use POSIX qw(dup2);',
    'socket(my $s, PF_INET, SOCK_STREAM, 0) or die "socket: $!";',
    'setsockopt($s, SOL_SOCKET, SO_RCVBUF, pack("i", $ENV{LINK_RCVBUF})) or die "rcvbuf: $!";',
    'bind($s, pack_sockaddr_in(0, inet_aton("127.0.0.1"))) or die "bind: $!";',
    'listen($s, 64) or die "listen: $!";',
    'my ($port) = unpack_sockaddr_in(getsockname($s));',
    'if (fileno($s) != 3) { dup2(fileno($s), 3) or die "dup2: $!"; }',
    '$| = 1; print "$port\n"; exec @ARGV or die "exec: $!";',
  ].join(' ');
  const child = spawn('perl', ['-e', listen, process.execPath, '--import', 'tsx', join(ROOT, 'test', 'paced-link.ts'), String(target), String(bytesPerSecond)], {
    cwd: ROOT,
    env: { ...process.env, LINK_RCVBUF: String(LINK_RECEIVE_BUFFER) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let text = '';
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the paced link ended before listening (exit ${code})`)));
    child.stdout.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      if (text.includes('\n')) resolve(Number(text.trim()));
    });
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  };
  stops.push(stop);
  return { port, stop };
}

/**
 * Installs a pre-receive hook in a bare repository that refuses any push updating a ref whose
 * tree holds a file named `SECRET`, printing the hook's own reason first, as a secret scanner does.
 */
export function refuseSecrets(bare: string): void {
  const hook = join(bare, 'hooks', 'pre-receive');
  writeFileSync(hook, [
    '#!/bin/sh',
    'status=0',
    'while read old new ref; do',
    '  case "$new" in 0000000000000000000000000000000000000000) continue ;; esac',
    '  if git ls-tree -r --name-only "$new" | grep -qx SECRET; then',
    '    echo "secret-scanner: $ref adds the file SECRET, which holds a credential" >&2',
    '    status=1',
    '  fi',
    'done',
    'exit $status',
    '',
  ].join('\n'));
  chmodSync(hook, 0o755);
}

/** Deletes a bare repository and makes an empty one in its place, as a host recreating a remote does. */
export function recreateEmpty(bare: string): void {
  rmSync(bare, { recursive: true, force: true });
  bareRemote(bare);
}

/** Sets environment variables for the length of `work`, then puts them back. */
export async function withEnvironment<T>(env: Record<string, string>, work: () => Promise<T>): Promise<T> {
  const saved = new Map(Object.keys(env).map((key) => [key, process.env[key]]));
  Object.assign(process.env, env);
  try {
    return await work();
  } finally {
    for (const [key, value] of saved) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  }
}

/**
 * Whether the runner hands the host's `env` to git: an alias running `env` shows what git got.
 * Which variables pass is the runner's rule (lib/git/runner.ts); until it passes one, the test
 * that needs it is a todo that still runs, so it turns green by itself when the rule lands.
 */
export async function runnerPasses(t: import('node:test').TestContext, env: Record<string, string>): Promise<void> {
  const probe = makeRepo();
  git(probe, ['config', 'alias.chant-env-probe', '!env']);
  const seen = await withEnvironment(env, async () => (await new SimpleGitRunner(probe).run(['chant-env-probe'])).stdout);
  const dropped = Object.entries(env).filter(([key, value]) => !seen.split('\n').includes(`${key}=${value}`)).map(([key]) => key);
  if (dropped.length > 0) t.todo(`the runner does not pass ${dropped.join(', ')} to git yet (lib/git/runner.ts decides which host settings pass)`);
}

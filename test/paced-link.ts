// A TCP link between a client and a server on 127.0.0.1 (see `startProxy` in `test/remotes.ts`):
// paced, it delivers every byte at `bytesPerSecond` in each direction; cut, it closes both ends
// once `cutAfterBytes` went from the client to the server. Run as a program
// (`paced-link.ts <target port> <bytes per second>`), it serves the listening socket it is given
// as descriptor 3, which its parent made with a small receive buffer.
import { connect } from 'node:net';
import type { Server, Socket } from 'node:net';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

export interface LinkOptions {
  bytesPerSecond?: number;
  cutAfterBytes?: number;
}

const TICK_MS = 50;

/** Sends what `from` says on to `to`, paced when the link has a rate. */
function pipePaced(from: Socket, to: Socket, rate: number | undefined, onBytes: (count: number) => void): void {
  if (rate === undefined) {
    from.on('data', (chunk: Buffer) => {
      onBytes(chunk.length);
      if (!to.destroyed) to.write(chunk);
    });
    from.once('end', () => to.end());
    return;
  }
  const queue: Buffer[] = [];
  // A link holds about a second's worth in flight, not megabytes: the rest waits in the
  // sender's socket, where a sender (and the runner watching it) sees it drain.
  let queued = 0;
  let ended = false;
  const budget = Math.max(1, Math.floor((rate * TICK_MS) / 1000));
  const timer = setInterval(() => {
    let left = budget;
    while (left > 0 && queue.length > 0) {
      const head = queue[0] as Buffer;
      const part = head.subarray(0, left);
      if (part.length === head.length) queue.shift();
      else queue[0] = head.subarray(left);
      left -= part.length;
      queued -= part.length;
      onBytes(part.length);
      if (!to.destroyed) to.write(part);
    }
    if (queued < rate && from.isPaused()) from.resume();
    if (queue.length === 0 && ended) {
      clearInterval(timer);
      to.end();
    }
  }, TICK_MS);
  from.on('data', (chunk: Buffer) => {
    queue.push(chunk);
    queued += chunk.length;
    if (queued >= rate) from.pause();
  });
  from.once('end', () => {
    ended = true;
  });
  // Whatever is still queued is delivered before the other end is closed, as a link does.
  from.once('close', () => {
    ended = true;
  });
  to.once('close', () => clearInterval(timer));
}

/** Makes `server` a link to `target`; returns the sockets it holds, for a stop to destroy. */
export function serveLink(server: Server, target: number, options: LinkOptions): Set<Socket> {
  const sockets = new Set<Socket>();
  server.on('connection', (client: Socket) => {
    const upstream = connect(target, '127.0.0.1');
    sockets.add(client);
    sockets.add(upstream);
    let sent = 0;
    const cut = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', cut);
    upstream.on('error', cut);
    client.once('close', () => {
      sockets.delete(client);
      upstream.destroy();
    });
    upstream.once('close', () => {
      sockets.delete(upstream);
      // A paced link still delivers what it holds, then ends the client (pipePaced); a plain one has nothing held.
      if (options.bytesPerSecond === undefined) client.destroy();
    });
    pipePaced(client, upstream, options.bytesPerSecond, (count) => {
      sent += count;
      if (options.cutAfterBytes !== undefined && sent >= options.cutAfterBytes) cut();
    });
    pipePaced(upstream, client, options.bytesPerSecond, () => undefined);
  });
  return sockets;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [target, rate] = process.argv.slice(2).map(Number);
  if (target === undefined || rate === undefined || !(rate > 0)) throw new Error('usage: paced-link.ts <target port> <bytes per second>');
  const server = createServer();
  serveLink(server, target, { bytesPerSecond: rate });
  server.listen({ fd: 3 });
}

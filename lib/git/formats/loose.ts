// git's loose objects, made and read byte for byte: a header (`<type> <size>` and a NUL), the
// content, the two deflated together; the id is the hash of the inflated bytes.
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { constants, deflate, deflateSync, inflateSync } from 'node:zlib';
import { objectHash } from './object-format.js';

/** An object's id, and the bytes of its loose file. */
export interface LooseObject {
  oid: string;
  file: Buffer;
}

/** The loose file of an object, compressed as git's default `core.looseCompression` does (level 1). */
export function looseObject(type: string, content: Buffer, objectFormat: string): LooseObject {
  const raw = withHeader(type, content);
  return { oid: objectIdOf(raw, objectFormat), file: deflateSync(raw, { level: 1, chunkSize: outputChunk(raw.length) }) };
}

const deflating = promisify(deflate);

/**
 * {@link looseObject}, compressed on libuv's thread pool: a save's folder trees (8 of 200 KB in
 * wide folders: 25 ms of deflate) are compressed side by side, off the main thread.
 */
export async function looseObjectAsync(type: string, content: Buffer, objectFormat: string): Promise<LooseObject> {
  const raw = withHeader(type, content);
  return { oid: objectIdOf(raw, objectFormat), file: await deflating(raw, { level: 1, chunkSize: outputChunk(raw.length) }) };
}

/** Up to this many bytes, {@link looseObjectSoon} compresses on the main thread. */
const SMALL_OBJECT = 64 * 1024;

/**
 * {@link looseObject} for a small object, {@link looseObjectAsync} for a larger one: handing a
 * small object to the thread pool costs more than compressing it (10 blobs of a few dozen bytes:
 * 8 to 11 ms through the pool against 2 to 4 ms in a fresh process, the pool's start included).
 */
export async function looseObjectSoon(type: string, content: Buffer, objectFormat: string): Promise<LooseObject> {
  return content.length <= SMALL_OBJECT ? looseObject(type, content, objectFormat) : looseObjectAsync(type, content, objectFormat);
}

/** zlib's output chunk for an output of about `bytes`: 16 KiB (zlib's own) to 64 MiB. */
function outputChunk(bytes: number): number {
  return Math.min(Math.max(bytes + 64, 16 * 1024), 64 * 1024 * 1024);
}

function withHeader(type: string, content: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${type} ${content.length}\0`, 'latin1'), content]);
}

function objectIdOf(raw: Buffer, objectFormat: string): string {
  return createHash(objectHash(objectFormat).algorithm).update(raw).digest('hex');
}

/** A loose file's type and content; null when it is not one (a bad header or a size that does not match). */
export function readLoose(file: Buffer): { type: string; content: Buffer } | null {
  let raw: Buffer;
  try {
    // Trees and code inflate to a few times their size: one output chunk of about that, where
    // zlib's 16 KiB chunks, joined after, made inflating 8 trees of 200 KB 40% slower.
    raw = inflateSync(file, { chunkSize: outputChunk(file.length * 4) });
  } catch {
    return null;
  }
  const nul = raw.indexOf(0);
  const match = nul < 0 ? null : /^([a-z]+) (\d+)$/.exec(raw.toString('latin1', 0, nul));
  if (match === null || Number(match[2]) !== raw.length - nul - 1) return null;
  return { type: match[1] as string, content: raw.subarray(nul + 1) };
}

/**
 * The type and size a loose file's header states, from the first bytes of the file (the header
 * and the Huffman tables before it fit in a kilobyte), as `cat-file --batch-check` reads them
 * without the content; null when the bytes do not hold a whole header.
 */
export function readLooseHeader(prefix: Buffer): { type: string; size: number } | null {
  let raw: Buffer;
  try {
    // A prefix of the stream: what it holds is inflated, the rest not asked for.
    raw = inflateSync(prefix, { finishFlush: constants.Z_SYNC_FLUSH });
  } catch {
    return null;
  }
  const nul = raw.indexOf(0);
  const match = nul < 0 ? null : /^(blob|tree|commit|tag) (\d+)$/.exec(raw.toString('latin1', 0, nul));
  return match === null ? null : { type: match[1] as string, size: Number(match[2]) };
}

/** An object's id, from its type and content. */
export function objectId(type: string, content: Buffer, objectFormat: string): string {
  return createHash(objectHash(objectFormat).algorithm).update(`${type} ${content.length}\0`, 'latin1').update(content).digest('hex');
}

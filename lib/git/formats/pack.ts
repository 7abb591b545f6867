// A pack file of whole objects, built byte for byte: git's version 2 pack format, its entries'
// zlib streams, and its checksum.
import { createHash } from 'node:crypto';
import { objectHash } from './object-format.js';

/** The pack type of a tree object. */
export const OBJ_TREE = 2;

/** A version 2 pack of whole objects of one type, with its checksum. */
export function packOf(bodies: readonly Buffer[], type: number, objectFormat: string): Buffer {
  const header = Buffer.alloc(12);
  header.write('PACK', 0, 'latin1');
  header.writeUInt32BE(2, 4);
  header.writeUInt32BE(bodies.length, 8);
  const parts: Buffer[] = [header];
  for (const body of bodies) {
    // The entry header: type and size, seven bits a byte after the first's four.
    const bytes: number[] = [];
    let size = body.length;
    let byte = (type << 4) | (size & 0x0f);
    size = Math.floor(size / 16);
    while (size > 0) {
      bytes.push(byte | 0x80);
      byte = size & 0x7f;
      size = Math.floor(size / 128);
    }
    bytes.push(byte);
    parts.push(Buffer.from(bytes), zlibStored(body));
  }
  const pack = Buffer.concat(parts);
  return Buffer.concat([pack, createHash(objectHash(objectFormat).algorithm).update(pack).digest()]);
}

/**
 * `body` as a zlib stream of stored (uncompressed) deflate blocks. git inflates it as any
 * other, and unpack-objects compresses the loose objects it writes with its own settings, so
 * compressing here would only cost time: a zlib stream set up per object, in a process that
 * has just started, costs more than the few trees of a save take to send whole.
 * @internal
 */
export function zlibStored(body: Uint8Array): Buffer {
  const BLOCK = 0xffff;
  const blocks = Math.max(1, Math.ceil(body.length / BLOCK));
  const out = Buffer.alloc(2 + blocks * 5 + body.length + 4);
  // CMF 0x78 (deflate, 32 KiB window) and FLG 0x01 (fastest), which together divide by 31.
  out[0] = 0x78;
  out[1] = 0x01;
  let at = 2;
  for (let block = 0; block < blocks; block += 1) {
    const start = block * BLOCK;
    const end = Math.min(body.length, start + BLOCK);
    const length = end - start;
    // BFINAL on the last block, BTYPE 00 (stored), then LEN and its one's complement.
    out[at] = block === blocks - 1 ? 1 : 0;
    out.writeUInt16LE(length, at + 1);
    out.writeUInt16LE(~length & 0xffff, at + 3);
    out.set(body.subarray(start, end), at + 5);
    at += 5 + length;
  }
  out.writeUInt32BE(adler32(body), at);
  return out;
}

/** zlib's Adler-32 checksum, its sums reduced every 5,552 bytes (the most that cannot overflow). */
function adler32(data: Uint8Array): number {
  let a = 1;
  let b = 0;
  for (let i = 0; i < data.length;) {
    const stop = Math.min(data.length, i + 5552);
    for (; i < stop; i += 1) {
      a += data[i] as number;
      b += a;
    }
    a %= 65521;
    b %= 65521;
  }
  return ((b << 16) | a) >>> 0;
}

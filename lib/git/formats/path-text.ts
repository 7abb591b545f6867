// How a path's bytes are written in documents and messages. git's paths are bytes, not text: a
// name that is not UTF-8 has no JSON string of its own, and decoding it would print U+FFFD, so a
// reader could not tell which file was meant. A path is printed as itself when it is UTF-8 and
// does not begin with a double quote; otherwise whole, in git's C-style quoting: between double
// quotes, `\"` and `\\`, `\a \b \t \n \v \f \r`, and every other byte that is a control
// character or not part of UTF-8 as three octal digits (`caf\xe9.log` is `"caf\351.log"`).
// Characters that are UTF-8 stay as they are inside the quotes. Every byte string has exactly
// one text and back.
import { isUtf8 } from 'node:buffer';

const ESCAPES: Readonly<Record<number, string>> = { 0x07: 'a', 0x08: 'b', 0x09: 't', 0x0a: 'n', 0x0b: 'v', 0x0c: 'f', 0x0d: 'r', 0x22: '"', 0x5c: '\\' };
const UNESCAPES: Readonly<Record<string, number>> = Object.fromEntries(Object.entries(ESCAPES).map(([byte, letter]) => [letter, Number(byte)]));

/**
 * A path's bytes as documents print them (see the module's comment).
 * @param bytes - the path as git stores it
 * @returns the path itself, or in git's C-style quoting
 * @internal
 */
export function pathText(bytes: Uint8Array): string {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buffer[0] !== 0x22 && isUtf8(buffer)) return buffer.toString('utf8');
  return quotePath(buffer);
}

/**
 * A path in git's C-style quoting, always quoted: what git's `--stdin-paths` readers unquote.
 * @param bytes - the path as git stores it
 * @returns the quoted path
 * @internal
 */
export function quotePath(bytes: Uint8Array): string {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let out = '"';
  for (let at = 0; at < buffer.length;) {
    const byte = buffer[at] as number;
    const escape = ESCAPES[byte];
    if (escape !== undefined) {
      out += `\\${escape}`;
      at += 1;
    } else if (byte < 0x20 || byte === 0x7f) {
      out += octal(byte);
      at += 1;
    } else if (byte < 0x80) {
      out += String.fromCharCode(byte);
      at += 1;
    } else {
      const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 0;
      if (length > 0 && at + length <= buffer.length && isUtf8(buffer.subarray(at, at + length))) {
        out += buffer.toString('utf8', at, at + length);
        at += length;
      } else {
        out += octal(byte);
        at += 1;
      }
    }
  }
  return `${out}"`;
}

/**
 * The bytes a path printed by {@link pathText} stands for.
 * @param text - a path as documents print it
 * @returns its bytes
 * @internal
 */
export function pathBytes(text: string): Buffer {
  if (!text.startsWith('"') || text.length < 2 || !text.endsWith('"')) return Buffer.from(text, 'utf8');
  const parts: Buffer[] = [];
  const inner = text.slice(1, -1);
  let plain = '';
  const flush = () => {
    if (plain.length > 0) parts.push(Buffer.from(plain, 'utf8'));
    plain = '';
  };
  for (let at = 0; at < inner.length; at += 1) {
    const char = inner[at] as string;
    if (char !== '\\') {
      plain += char;
      continue;
    }
    const next = inner[at + 1] ?? '';
    const digits = /^[0-3][0-7]{2}/.exec(inner.slice(at + 1, at + 4));
    flush();
    if (digits !== null) {
      parts.push(Buffer.from([parseInt(digits[0], 8)]));
      at += 3;
    } else {
      parts.push(Buffer.from([UNESCAPES[next] ?? next.charCodeAt(0)]));
      at += 1;
    }
  }
  flush();
  return Buffer.concat(parts);
}

/**
 * The text of a path held as a byte string (each character one byte, as `latin1` decodes).
 * @internal
 */
export function rawPathText(raw: string): string {
  return pathText(Buffer.from(raw, 'latin1'));
}

/**
 * A path of a working tree on disk, as bytes: `top`, then the path held as a byte string (each
 * character one byte), so a name that is not UTF-8 is the name on disk; `top` itself for ''.
 * @internal
 */
export function rawPathOnDisk(top: string, raw: string): Buffer {
  return raw === '' ? Buffer.from(top) : Buffer.concat([Buffer.from(`${top}/`), Buffer.from(raw, 'latin1')]);
}

function octal(byte: number): string {
  return `\\${byte.toString(8).padStart(3, '0')}`;
}

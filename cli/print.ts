/** An array of at most this many scalars is a record's field, printed on one line (`refs`, `on`). */
const SHORT_ARRAY = 8;
/** How deep objects may nest and still make one record: a snapshot with its `changes`. */
const RECORD_DEPTH = 2;
/** How many pieces {@link documentChunks} gathers before it encodes them (about 64 KiB of snapshots). */
const CHUNK_PIECES = 512;

/**
 * A document as the CLI prints it, in the form of the spec's example: the containers broken over
 * lines with two spaces of indentation, each record on one line as `JSON.stringify` writes it (a
 * snapshot, `checkout`, `policy`, an entry of `replication.refs`), and one newline at the end. A
 * read of 10,000 snapshots with `--changes` is 3.6 MB against 5.5 MB indented throughout, and
 * the host decodes that much less. The records are left to V8's own stringify, since a printer of
 * every field in JavaScript measured three times slower. The text parses back to exactly what
 * `JSON.stringify(document)` does: `toJSON` is honoured, and members that are undefined or
 * functions are left out.
 *
 * A value is a record when it is a scalar, an array of at most eight scalars, or an object whose
 * members are records, nesting at most two objects deep. The document itself is always broken,
 * so its `$schema` opens a line of its own even when it is small (a refusal).
 */
export function documentText(document: unknown): string {
  const output: Output = { parts: [], chunks: null };
  print(document, output);
  return output.parts.join('');
}

/**
 * {@link documentText}'s text as UTF-8, in chunks of about 64 KiB, each encoded as soon as its
 * pieces are printed. A read of 10,000 snapshots then never holds their 10,000 strings at once,
 * which the garbage collector copied while the text was built, nor the whole text as a string
 * beside its bytes: a fresh buffer's pages cost more than the encoding.
 */
export function documentChunks(document: unknown): Buffer[] {
  const output: Output = { parts: [], chunks: [] };
  print(document, output);
  flush(output);
  return output.chunks as Buffer[];
}

/** The pieces of the text not encoded yet, and with {@link documentChunks}, the chunks encoded. */
interface Output {
  parts: string[];
  chunks: Buffer[] | null;
}

function print(document: unknown, output: Output): void {
  const value = resolved(document, '');
  if (typeof value === 'object' && value !== null && !boxed(value)) broken(value, '', output);
  else output.parts.push(String(JSON.stringify(value)));
  output.parts.push('\n');
}

/** Encodes the pieces gathered into a chunk, when the output is bytes. */
function flush(output: Output): void {
  if (output.chunks === null || output.parts.length === 0) return;
  output.chunks.push(Buffer.from(output.parts.join(''), 'utf8'));
  output.parts.length = 0;
}

/** What `JSON.stringify` prints for a value under `key`: its `toJSON`'s result when it has one. */
function resolved(value: unknown, key: string): unknown {
  if ((typeof value === 'object' && value !== null) || typeof value === 'bigint') {
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') return toJSON.call(value, key) as unknown;
  }
  return value;
}

/** A `Number`, `String` or `Boolean` object, which `JSON.stringify` prints as its primitive. */
function boxed(value: object): boolean {
  return value instanceof Number || value instanceof String || value instanceof Boolean;
}

function scalar(value: unknown): boolean {
  return typeof value !== 'object' || value === null || boxed(value);
}

/**
 * Whether an object or array is one record, `objects` being how many more levels of objects it
 * may hold. One with a `toJSON` of its own is not: it is walked, so `toJSON` is called once, with
 * its key, as `JSON.stringify` calls it.
 */
function record(value: object, objects: number): boolean {
  if (boxed(value)) return true;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return false;
  if (Array.isArray(value)) return value.length <= SHORT_ARRAY && value.every(scalar);
  if (objects === 0) return false;
  const members = value as Record<string, unknown>;
  for (const key of Object.keys(members)) {
    const member = members[key];
    if (typeof member === 'object' && member !== null && !record(member, objects - 1)) return false;
  }
  return true;
}

/** Pushes a value (its `toJSON` already applied) at a line indented by `indent`. */
function item(value: unknown, indent: string, output: Output): void {
  if (typeof value === 'object' && value !== null && !record(value, RECORD_DEPTH)) broken(value, indent, output);
  // An array's undefined or function element is null, as JSON.stringify prints it.
  else output.parts.push(JSON.stringify(value) ?? 'null');
}

/** Pushes a container broken over lines, each element or member on a line of its own. */
function broken(value: object, indent: string, output: Output): void {
  const { parts } = output;
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) {
      parts.push('[]');
      return;
    }
    for (let index = 0; index < value.length; index += 1) {
      parts.push(index === 0 ? '[\n' : ',\n', inner);
      item(resolved(value[index], String(index)), inner, output);
      if (parts.length >= CHUNK_PIECES) flush(output);
    }
    parts.push('\n', indent, ']');
    return;
  }
  const members = value as Record<string, unknown>;
  let first = true;
  for (const key of Object.keys(members)) {
    const member = resolved(members[key], key);
    if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue;
    parts.push(first ? '{\n' : ',\n', inner, JSON.stringify(key), ': ');
    first = false;
    item(member, inner, output);
  }
  parts.push(first ? '{}' : `\n${indent}}`);
}

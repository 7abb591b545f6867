/**
 * Orders two names by their UTF-8 bytes, as git orders refs and paths: every list a document
 * holds is sorted this way.
 * @param a - one name
 * @param b - another
 * @returns negative, zero or positive
 * @internal
 */
export function compareBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/**
 * Sorts paths in place by their UTF-8 bytes (see {@link compareBytes}).
 * @param paths - repository-relative paths
 * @returns the same array, sorted
 * @internal
 */
export function sortPaths(paths: string[]): string[] {
  return paths.sort(compareBytes);
}

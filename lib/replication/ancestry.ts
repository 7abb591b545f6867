// Ancestry among the commits replication compares: one walk of git's commit graph, then
// reachability in memory.
import { commitGraph, octopusBase } from '../git/remote.js';
import type { GitRunner } from '../git/runner.js';

/**
 * Answers "is a an ancestor of b" for every pair at once: one walk from all the commits down to
 * their common base, then reachability in memory. A path from one tip to another never passes
 * through the base's history unless the target is the base itself.
 */
export async function ancestryOf(git: GitRunner, cwd: string, pairs: ReadonlyArray<{ local: string; remote: string }>): Promise<{ isAncestor(a: string, b: string): boolean }> {
  if (pairs.length === 0) return { isAncestor: () => false };
  const tips = [...new Set(pairs.flatMap((pair) => [pair.local, pair.remote]))];
  const base = await octopusBase(git, cwd, tips);
  const graph = await commitGraph(git, cwd, tips, base === null ? [] : [base]);
  return {
    isAncestor(a: string, b: string): boolean {
      if (a === b || a === base) return true;
      if (b === base) return false;
      return reaches(graph, b, a);
    },
  };
}

/** How many commits of `graph` are reachable from `tip` (0 when the walk left it out). */
export function countReachable(graph: ReadonlyMap<string, readonly string[]>, tip: string): number {
  if (!graph.has(tip)) return 0;
  const seen = new Set<string>([tip]);
  const stack = [tip];
  while (stack.length > 0) {
    for (const parent of graph.get(stack.pop() as string) ?? []) {
      if (graph.has(parent) && !seen.has(parent)) {
        seen.add(parent);
        stack.push(parent);
      }
    }
  }
  return seen.size;
}

/** Whether `target` is reachable from `from` within `graph`. */
export function reaches(graph: ReadonlyMap<string, readonly string[]>, from: string, target: string): boolean {
  const seen = new Set<string>([from]);
  const stack = [from];
  while (stack.length > 0) {
    const commit = stack.pop() as string;
    if (commit === target) return true;
    for (const parent of graph.get(commit) ?? []) {
      if (!seen.has(parent)) {
        seen.add(parent);
        stack.push(parent);
      }
    }
  }
  return false;
}

// Preloaded with --import: writes the process's peak resident set (KiB) to $CHANT_BENCH_RSS at exit.
// It is VmHWM, the high-water mark of this process's own memory since exec. Not
// resourceUsage().maxRSS: Linux carries that across fork and exec, so a process spawned by a
// large bench reported the bench's own size (204 MiB for every memory row of a full run).
import { readFileSync, writeFileSync } from 'node:fs';
process.on('exit', () => {
  if (!process.env.CHANT_BENCH_RSS) return;
  let kib = null;
  try {
    const line = readFileSync('/proc/self/status', 'utf8').split('\n').find((text) => text.startsWith('VmHWM:'));
    if (line !== undefined) kib = Number(line.replace(/\D+/g, ''));
  } catch {
    // No /proc: the rusage figure, which is the process's own where exec starts it afresh.
  }
  writeFileSync(process.env.CHANT_BENCH_RSS, String(kib ?? process.resourceUsage().maxRSS));
});

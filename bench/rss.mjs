// Preloaded with --import: writes the process's peak resident set (KiB) to $CHANT_BENCH_RSS at exit.
import { writeFileSync } from 'node:fs';
process.on('exit', () => {
  if (process.env.CHANT_BENCH_RSS) writeFileSync(process.env.CHANT_BENCH_RSS, String(process.resourceUsage().maxRSS));
});

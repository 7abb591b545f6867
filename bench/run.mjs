// npm run bench: chant-wip side by side with plain git, as ratios of medians, against the targets.
// Options: --quick (tiny repositories, one round, no targets: what the test runs),
// --out <file> (where the table goes; docs/performance.md by default, none with --quick),
// --only <text> (just the rows whose name holds the text, printed and written nowhere).
import { cpus } from 'node:os';
import { existsSync, readFileSync, rmSync, writeFileSync, openSync, ftruncateSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  BENCH, ENV, ROOT, addSnapshot, chant, chantPeakMiB, editRound, filePath, git, gitCounter, keptRefs, run, sideBySide, snapshotChain, syntheticRepo, tempDir, timed,
} from './harness.mjs';

const BEGIN = '<!-- bench:begin: written by npm run bench -->';
const END = '<!-- bench:end -->';

const FULL = { large: 100_000, middle: 10_000, small: 1_000, chain: 10_000, refs: 1_100, kept: 1_000, runs: 5, warmup: 1, bigFileMiB: 1024, targets: true };
const QUICK = { large: 300, middle: 200, small: 100, chain: 50, refs: 30, kept: 20, runs: 1, warmup: 0, bigFileMiB: 1, targets: false };

const nodeFloor = () => run(process.execPath, ['-e', '0']).ms;
const saveScript = (dir) => run('sh', [join(BENCH, 'save.sh')], { cwd: dir }).ms;
const restoreScript = (dir, target) => run('sh', [join(BENCH, 'restore.sh'), target], { cwd: dir }).ms;

/** Modifies `count` tracked files of round `round` (and nothing else). */
function modify(dir, files, round, count = 10) {
  for (let k = 0; k < count; k += 1) {
    const i = (round * 31 + k * 977) % files;
    writeFileSync(join(dir, filePath(i)), `file ${i} modified ${round}\n`);
  }
}

/**
 * Prepares a small repository with `kept` kept attempts, a replicate policy for kept and
 * wip refs, and a bare remote, then counts the git processes of `counted`, its last step.
 */
function withPolicyRepository(kept, prepare, counted) {
  const dir = syntheticRepo(10);
  const remote = tempDir('chant-wip-bench-remote-');
  const counter = gitCounter();
  try {
    git(remote, 'init', '-q', '--bare', '.');
    writeFileSync(join(dir, 'chant.workspace.json'), `${JSON.stringify({ members: [{ name: 'app', box: { replicate: { remote: 'origin', refs: ['kept', 'wip'], on: [] } } }] }, null, 2)}\n`);
    git(dir, 'remote', 'add', 'origin', remote);
    keptRefs(dir, kept);
    const prepared = prepare(dir);
    counter.reset();
    const doc = chant(dir, counted, counter.env).doc;
    return { prepared, doc, processes: counter.calls().length };
  } finally {
    counter.dispose();
    rmSync(dir, { recursive: true, force: true });
    rmSync(remote, { recursive: true, force: true });
  }
}

/** Every row: what it measures, its target, and how to measure it. */
function rows(size) {
  let edits = 0;
  const repos = new Map();
  const repo = (files) => {
    if (!repos.has(files)) repos.set(files, syntheticRepo(files));
    return repos.get(files);
  };
  const list = [];
  for (const files of [size.small, size.middle, size.large]) {
    list.push({
      name: `SDK save (in-process) vs the plain-git save script, ${files} files`, target: files === size.large ? 1.10 : null, kind: 'ratio',
      async measure() {
        const dir = repo(files);
        const { WipStore } = await import(pathToFileURL(join(ROOT, 'dist', 'lib', 'index.js')).href);
        const store = new WipStore({ cwd: dir });
        return sideBySide({
          runs: size.runs, warmup: size.warmup,
          prepare: async () => editRound(dir, files, (edits += 1)),
          a: () => timed(() => store.save({ label: `bench ${edits}` })),
          b: () => saveScript(dir),
        });
      },
    });
  }
  for (const files of [size.large, size.small]) {
    list.push({
      name: `CLI save process vs (node -e 0 + the plain-git save script), ${files} files`, target: files === size.large ? 1.10 : 1.30, kind: 'ratio',
      measure: () => {
        const dir = repo(files);
        return sideBySide({
          runs: size.runs, warmup: size.warmup,
          prepare: async () => editRound(dir, files, (edits += 1)),
          a: () => chant(dir, ['workspace', 'wip', 'save', '--label', `bench ${edits}`]).ms,
          b: () => nodeFloor() + saveScript(dir),
        });
      },
    });
  }
  list.push({
    name: `CLI save vs git status --porcelain, ${size.large} files`, target: 2.0, kind: 'ratio',
    measure: () => {
      const dir = repo(size.large);
      return sideBySide({
        runs: size.runs, warmup: size.warmup,
        prepare: async () => editRound(dir, size.large, (edits += 1)),
        a: () => chant(dir, ['workspace', 'wip', 'save', '--label', `bench ${edits}`]).ms,
        b: () => run('git', ['status', '--porcelain'], { cwd: dir }).ms,
      });
    },
  });
  list.push({
    name: `CLI restore vs the plain-git restore script, ${size.large} files, 10 paths changed`, target: 1.20, kind: 'ratio',
    measure: () => {
      const dir = repo(size.large);
      git(dir, 'reset', '-q', '--hard');
      git(dir, 'clean', '-qfd');
      const target = chant(dir, ['workspace', 'wip', 'save', '--label', 'restore target']).doc.snapshot.commit;
      return sideBySide({
        runs: size.runs, warmup: size.warmup,
        prepare: async (round) => modify(dir, size.large, round),
        a: () => chant(dir, ['workspace', 'wip', 'restore', target]).ms,
        b: () => restoreScript(dir, target),
      });
    },
  });
  list.push({
    name: `first git status after a restore of 10 changed paths vs after the same 10 files are written back by hand, ${size.large} files`, target: 1.15, kind: 'ratio',
    measure: () => {
      const dir = repo(size.large);
      git(dir, 'reset', '-q', '--hard');
      git(dir, 'clean', '-qfd');
      git(dir, 'status', '--porcelain');
      const target = chant(dir, ['workspace', 'wip', 'save', '--label', 'status target']).doc.snapshot.commit;
      return sideBySide({
        runs: size.runs, warmup: size.warmup,
        prepare: async (round, which) => {
          modify(dir, size.large, round + 1000);
          git(dir, 'status', '--porcelain');
          if (which === 'a') chant(dir, ['workspace', 'wip', 'restore', target]);
          else for (let k = 0; k < 10; k += 1) {
            const i = ((round + 1000) * 31 + k * 977) % size.large;
            writeFileSync(join(dir, filePath(i)), `file ${i}\n`);
          }
        },
        a: () => run('git', ['status', '--porcelain'], { cwd: dir }).ms,
        b: () => run('git', ['status', '--porcelain'], { cwd: dir }).ms,
      });
    },
  });
  // The read's rows share one chain. The memo of snapshot chains (lib/managers/snapshot-memo.ts) is what
  // a read leaves for the next, so the row with the target reads as Studio does after an agent's
  // turn: the memo knows the chain but for the one snapshot saved since. The first read, with
  // no memo, is shown beside it.
  const chainRepo = () => {
    if (!repos.has('chain')) {
      const dir = syntheticRepo(10);
      snapshotChain(dir, size.chain);
      repos.set('chain', dir);
    }
    return repos.get('chain');
  };
  const logBaseline = (dir) => nodeFloor() + run('git', ['log', '--first-parent', '-z', '--format=%H%x00%T%x00%P%x00%ct%x00%B%x00', 'refs/chant/wip/main'], { cwd: dir }).ms;
  let turns = 0;
  list.push({
    name: `chant workspace wip --json on a chain of ${size.chain} snapshots, one saved since the last read, vs (node -e 0 + the git log baseline)`, target: 1.50, kind: 'ratio',
    measure: () => {
      const dir = chainRepo();
      return sideBySide({
        runs: size.runs, warmup: size.warmup,
        a: () => {
          addSnapshot(dir, `turn:next-${(turns += 1)}`);
          return chant(dir, ['workspace', 'wip', '--json']).ms;
        },
        b: () => logBaseline(dir),
      });
    },
  });
  list.push({
    name: `chant workspace wip --json on a chain of ${size.chain} snapshots, the first read (no memo), vs (node -e 0 + the git log baseline)`, target: null, kind: 'ratio',
    measure: () => {
      const dir = chainRepo();
      return sideBySide({
        runs: size.runs, warmup: size.warmup,
        a: () => {
          rmSync(join(dir, '.git', 'chant-snapshot-memo'), { force: true });
          return chant(dir, ['workspace', 'wip', '--json']).ms;
        },
        b: () => logBaseline(dir),
      });
    },
  });
  // The storage report walks the chain as the read does (through the same memo), then asks git
  // for the chain's disk usage beyond what the branches reach: held to the read's first run,
  // each side with no memo.
  list.push({
    name: `chant workspace wip storage on a chain of ${size.chain} snapshots vs chant workspace wip --json, each without the memo`, target: size.targets ? 1.0 : null, kind: 'ratio',
    measure: () => {
      const dir = chainRepo();
      const cold = (args) => {
        rmSync(join(dir, '.git', 'chant-snapshot-memo'), { force: true });
        return chant(dir, args).ms;
      };
      return sideBySide({ runs: size.runs, warmup: size.warmup, a: () => cold(['workspace', 'wip', 'storage']), b: () => cold(['workspace', 'wip', '--json']) });
    },
  });
  list.push({
    name: 'chant workspace wip push of a snapshot with 10 changed files, the secret gate on vs off', target: size.targets ? 1.10 : null, kind: 'ratio',
    measure: () => {
      const dir = syntheticRepo(size.small);
      const remote = tempDir('chant-wip-bench-remote-');
      git(remote, 'init', '-q', '--bare', '.');
      writeFileSync(join(dir, 'chant.workspace.json'), `${JSON.stringify({ members: [{ name: 'app', box: { replicate: { remote: 'origin', refs: ['wip'], on: [] } } }] }, null, 2)}\n`);
      git(dir, 'remote', 'add', 'origin', remote);
      let round = 0;
      const off = { ...ENV, CHANT_WIP_SECRET_SCAN: 'off' };
      const pushed = (env) => {
        const { ms, doc } = chant(dir, ['workspace', 'wip', 'push'], env);
        if (doc.replication?.pushed?.length !== 1) throw new Error(`the push sent ${JSON.stringify(doc)}`);
        return ms;
      };
      return sideBySide({
        runs: size.runs, warmup: size.warmup,
        prepare: async () => {
          modify(dir, size.small, (round += 1));
          chant(dir, ['workspace', 'wip', 'save']);
        },
        a: () => pushed(ENV),
        b: () => pushed(off),
      });
    },
  });
  list.push({
    name: 'chant --version vs node -e 0', target: 1.50, kind: 'ratio',
    measure: () => sideBySide({ runs: size.runs, warmup: size.warmup, a: () => chant(ROOT, ['--version']).ms, b: () => nodeFloor() }),
  });
  list.push({
    name: 'git processes spawned by one save with no policy', target: 7, kind: 'count',
    measure: () => {
      // Both ways a save can stage, each forced: the row holds the larger.
      const dir = repo(size.small);
      const counter = gitCounter();
      const counts = {};
      for (const staging of ['status', 'index']) {
        editRound(dir, size.small, (edits += 1));
        counter.reset();
        chant(dir, ['workspace', 'wip', 'save', '--label', `counted ${staging}`], { ...counter.env, CHANT_WIP_STAGING: staging });
        counts[staging] = counter.calls().length;
      }
      counter.dispose();
      return { value: Math.max(counts.status, counts.index), note: `${counts.status} building the tree from git status, ${counts.index} through a temporary index` };
    },
  });
  for (const refs of [size.refs, 11]) {
    list.push({
      name: `git processes spawned by the read with a policy and ${refs} replicated refs`, target: 10, kind: 'count',
      measure: () => {
        const { prepared: pushed, doc: read, processes } = withPolicyRepository(refs - 1, (dir) => {
          chant(dir, ['workspace', 'wip', 'save', '--label', 'one wip ref']);
          return chant(dir, ['workspace', 'wip', 'push']).doc;
        }, ['workspace', 'wip', '--json']);
        if (pushed?.action !== 'push' || read.replication === null) return { value: null, note: 'replication not available' };
        return { value: processes, note: `${read.replication.refs.length} refs listed, replicated: ${read.replication.replicated}` };
      },
    });
  }
  list.push({
    name: `peak memory of a CLI save, ${size.large} files (MiB)`, target: 120, kind: 'memory',
    measure: () => {
      const dir = repo(size.large);
      editRound(dir, size.large, (edits += 1));
      return { value: chantPeakMiB(dir, ['workspace', 'wip', 'save', '--label', 'memory']) };
    },
  });
  list.push({
    name: `peak memory of a CLI save with a new ${size.bigFileMiB} MiB untracked file (MiB)`, target: 120, kind: 'memory',
    measure: () => {
      const dir = repo(size.small);
      const big = join(dir, 'big.bin');
      const fd = openSync(big, 'w');
      ftruncateSync(fd, size.bigFileMiB * 1024 * 1024);
      closeSync(fd);
      try {
        return { value: chantPeakMiB(dir, ['workspace', 'wip', 'save', '--label', 'big file']) };
      } finally {
        rmSync(big, { force: true });
      }
    },
  });
  list.push({
    name: `push of ${size.kept} kept refs to a bare remote: git processes`, target: 10, kind: 'count',
    measure: () => {
      const { doc: pushed, processes } = withPolicyRepository(size.kept, () => null, ['workspace', 'wip', 'push']);
      if (pushed?.action !== 'push') return { value: null, note: 'replication not available' };
      return { value: processes, note: `${pushed.replication.pushed.length} pushed` };
    },
  });
  const dispose = () => { for (const dir of repos.values()) rmSync(dir, { recursive: true, force: true }); };
  return { list, dispose };
}

function verdict(row, value) {
  if (value === null || row.target === null || !row.options.targets) return '';
  return value <= row.target ? 'pass' : 'miss';
}

/** Runs every row and resolves with the table's rows. */
export async function bench(options = {}) {
  const size = options.quick ? QUICK : FULL;
  const { list, dispose } = rows(size);
  const results = [];
  try {
    for (const row of list) {
      if (options.only !== undefined && !row.name.includes(options.only)) continue;
      row.options = size;
      const started = Date.now();
      let measured;
      try {
        measured = await row.measure();
      } catch (error) {
        measured = { value: null, note: `failed: ${(error instanceof Error ? error.message : String(error)).split('\n')[0]}` };
      }
      const value = row.kind === 'ratio' ? measured.ratio : measured.value;
      const detail = row.kind === 'ratio' ? `${measured.a.toFixed(1)} ms vs ${measured.b.toFixed(1)} ms, ${measured.runs} runs` : (measured.note ?? '');
      const result = { row: row.name, value, target: row.target, verdict: verdict(row, value), detail };
      results.push(result);
      if (!options.silent) process.stderr.write(`${format(result)}  (${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
    }
  } finally {
    dispose();
  }
  return results;
}

function format(result) {
  const value = result.value === null ? 'n/a' : Number.isInteger(result.value) ? String(result.value) : result.value.toFixed(2);
  return `| ${result.row} | ${value} | ${result.target === null ? '' : `≤ ${result.target}`} | ${result.verdict} | ${result.detail} |`;
}

export function table(results) {
  return ['| row | measured | target | | detail |', '| --- | --- | --- | --- | --- |', ...results.map(format)].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const quick = process.argv.includes('--quick');
  const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : undefined;
  const results = await bench({ quick, only });
  const gitVersion = git(ROOT, '--version').trim();
  const block = [
    BEGIN,
    '',
    `Measured on ${cpus().length} cores, ${gitVersion}, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}.`,
    'Ratios are of medians over at least 5 measured runs after a warm-up, the two sides alternating;',
    'CLI rows hold the chant process against `node -e 0` plus the plain-git script, run in the same loop.',
    'Counts are exact. Peak memory is the Node process\'s own maximum resident set.',
    '',
    table(results),
    '',
    END,
  ].join('\n');
  process.stdout.write(`${table(results)}\n`);
  if (!quick && only === undefined) {
    const out = process.argv.includes('--out') ? process.argv[process.argv.indexOf('--out') + 1] : join(ROOT, 'docs', 'performance.md');
    // Only the measured block is rewritten: the analysis around it is written by people.
    const page = existsSync(out) ? readFileSync(out, 'utf8') : `# Performance\n\n${BEGIN}\n${END}\n`;
    const start = page.indexOf(BEGIN);
    const end = page.indexOf(END);
    writeFileSync(out, start >= 0 && end > start ? `${page.slice(0, start)}${block}${page.slice(end + END.length)}` : `${page.trimEnd()}\n\n${block}\n`);
    process.stderr.write(`wrote ${out}\n`);
  }
}

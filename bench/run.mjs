// npm run bench: chant-wip side by side with plain git, as ratios of medians, against the targets.
// Options: --quick (tiny repositories, one round, no targets: what the test runs),
// --out <file> (where the table goes; docs/performance.md by default, none with --quick),
// --only '<text>[|<text>...]' or CHANT_BENCH_ONLY (just the rows whose name holds one of the
// texts, printed and written nowhere; `--quick --only es-git` measures one kind quickly).
import { cpus } from 'node:os';
import { existsSync, readFileSync, rmSync, writeFileSync, openSync, ftruncateSync, closeSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  BENCH, ENV, ROOT, addSnapshot, chant, chantPeakMiB, editRound, filePath, git, gitCounter, keptRefs, roundRobin, run, sideBySide, snapshotChain, syntheticRepo, tempDir, timed, widePath,
} from './harness.mjs';
import { ES_GIT_BINDING, addAllTree, esGit, isomorphicGit, loadEsGit, stashCreate } from './peers.mjs';

const BEGIN = '<!-- bench:begin: written by npm run bench -->';
const END = '<!-- bench:end -->';

const FULL = {
  large: 100_000, middle: 10_000, small: 1_000, huge: 300_000, folders: 8, width: 5_000, dirty: [1_000, 10_000],
  chain: 10_000, chains: [1_000, 10_000, 50_000], limitChain: 500, limit: 50,
  refs: 1_100, kept: 1_000, runs: 5, warmup: 1, bigFileMiB: 1024, targets: true,
};
const QUICK = {
  large: 300, middle: 200, small: 100, huge: 400, folders: 2, width: 60, dirty: [10, 20],
  chain: 50, chains: [20, 50], limitChain: 10, limit: 5,
  refs: 30, kept: 20, runs: 1, warmup: 0, bigFileMiB: 1, targets: false,
};
const NESTED = { name: 'nested', pathOf: filePath };

const nodeFloor = () => run(process.execPath, ['-e', '0']).ms;
const saveScript = (dir) => run('sh', [join(BENCH, 'save.sh')], { cwd: dir }).ms;
const restoreScript = (dir, target) => run('sh', [join(BENCH, 'restore.sh'), target], { cwd: dir }).ms;

/** Modifies `count` tracked files of round `round` (and nothing else). */
function modify(dir, files, round, pathOf = filePath, count = 10) {
  for (let k = 0; k < count; k += 1) {
    const i = (round * 31 + k * 977) % files;
    writeFileSync(join(dir, pathOf(i)), `file ${i} modified ${round}\n`);
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

/**
 * Every row: what it measures, its target, and how to measure it. `esGitBinding` names the
 * package es-git's binding is loaded from; where it cannot load, its rows are skipped, saying why.
 */
function rows(size, esGitBinding = ES_GIT_BINDING) {
  let edits = 0;
  const repos = new Map();
  const repo = (files, shape = NESTED) => {
    const key = `${shape.name}:${files}`;
    if (!repos.has(key)) repos.set(key, syntheticRepo(files, shape.pathOf));
    return repos.get(key);
  };
  const peers = new Map();
  const peer = async (kind, dir) => {
    const key = `${kind}:${dir}`;
    if (!peers.has(key)) peers.set(key, await (kind === 'es-git' ? esGit(dir, esGitBinding) : isomorphicGit(dir)));
    return peers.get(key);
  };
  // null when libgit2 loads here; else what an es-git row reports instead of a ratio.
  const esGitSkipped = () => {
    const { reason } = loadEsGit(esGitBinding);
    return reason === undefined ? null : { note: `skipped: ${reason}` };
  };
  // A measurement several rows share, run once, when the first of them is measured.
  const groups = new Map();
  const group = (key, measure) => () => {
    if (!groups.has(key)) groups.set(key, measure());
    return groups.get(key);
  };
  const ratio = (measured, a, b) => ({ a: measured.medians[a], b: measured.medians[b], ratio: measured.medians[a] / measured.medians[b], runs: measured.runs });
  const clean = (dir) => {
    git(dir, 'reset', '-q', '--hard');
    git(dir, 'clean', '-qfd');
  };
  const wide = { name: 'wide', pathOf: widePath(size.width), files: size.width * size.folders };
  const shapes = [
    { files: size.small, shape: NESTED, label: `${size.small} files`, esGit: 2.0, script: null, isomorphic: true },
    { files: size.middle, shape: NESTED, label: `${size.middle} files`, esGit: 1.3, script: null, isomorphic: true },
    { files: size.large, shape: NESTED, label: `${size.large} files`, esGit: 1.0, script: 1.0, isomorphic: false },
    { files: wide.files, shape: wide, label: `${wide.files} files in ${size.folders} folders of ${size.width}`, esGit: 1.0, script: 1.0, isomorphic: false, cli: 1.5 },
  ];
  const list = [];
  // The save's peers, each side in one loop with the SDK: the plain-git script, libgit2
  // in-process (es-git), git stash create, isomorphic-git (small trees: it hashes in JavaScript),
  // and on the wide tree the CLI and git status. Every builder gives the tree `git add --all`
  // gives (checked before the loop).
  for (const { files, shape, label, esGit: esGitTarget, script, isomorphic, cli } of shapes) {
    const measure = group(`save:${label}`, async () => {
      const dir = repo(files, shape);
      const { WipStore } = await import(pathToFileURL(join(ROOT, 'dist', 'lib', 'index.js')).href);
      const store = new WipStore({ cwd: dir });
      const libgit2 = esGitSkipped() === null ? await peer('es-git', dir) : null;
      const iso = isomorphic ? await peer('isomorphic-git', dir) : null;
      editRound(dir, files, (edits += 1), shape.pathOf);
      const want = addAllTree(dir);
      const trees = { sdk: (await store.save({ label: `check ${edits}` })).snapshot.tree, ...(libgit2 === null ? {} : { 'es-git': libgit2.writeTree() }), ...(iso === null ? {} : { 'isomorphic-git': await iso.writeTree() }) };
      for (const [who, tree] of Object.entries(trees)) if (tree !== want) throw new Error(`${who} built ${tree}, git add --all ${want}`);
      return roundRobin({
        runs: size.runs, warmup: size.warmup,
        prepare: async () => editRound(dir, files, (edits += 1), shape.pathOf),
        sides: {
          sdk: () => timed(() => store.save({ label: `bench ${edits}` })),
          script: () => saveScript(dir),
          ...(libgit2 === null ? {} : { 'es-git': () => timed(() => libgit2.save()) }),
          stash: () => stashCreate(dir),
          ...(iso === null ? {} : { 'isomorphic-git': () => timed(() => iso.save()) }),
          ...(cli === undefined ? {} : {
            cli: () => chant(dir, ['workspace', 'wip', 'save', '--label', `bench ${edits}`]).ms,
            status: () => run('git', ['status', '--porcelain'], { cwd: dir }).ms,
          }),
        },
      });
    });
    list.push({ name: `SDK save (in-process) vs the plain-git save script, ${label}`, target: script, kind: 'ratio', measure: async () => ratio(await measure(), 'sdk', 'script') });
    list.push({ name: `SDK save (in-process) vs es-git (libgit2 in-process: add all, write tree, commit), ${label}`, target: esGitTarget, kind: 'ratio', measure: async () => esGitSkipped() ?? ratio(await measure(), 'sdk', 'es-git') });
    list.push({ name: `SDK save (in-process) vs git stash create (tracked files only), ${label}`, target: null, kind: 'ratio', measure: async () => ratio(await measure(), 'sdk', 'stash') });
    if (isomorphic) list.push({ name: `SDK save (in-process) vs isomorphic-git (walk, write blobs and trees, commit), ${label}`, target: null, kind: 'ratio', measure: async () => ratio(await measure(), 'sdk', 'isomorphic-git') });
    if (cli !== undefined) list.push({ name: `CLI save vs git status --porcelain, ${label}`, target: cli, kind: 'ratio', measure: async () => ratio(await measure(), 'cli', 'status') });
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
  // Work already done: D tracked files modified since HEAD (written before the loop, their
  // mtimes a minute back, as work of earlier turns is), one more changed before each side.
  for (const dirty of size.dirty) {
    const measure = group(`dirty:${dirty}`, async () => {
      const dir = repo(size.large);
      clean(dir);
      const { WipStore } = await import(pathToFileURL(join(ROOT, 'dist', 'lib', 'index.js')).href);
      const store = new WipStore({ cwd: dir });
      const pick = (k) => Math.floor((k * size.large) / dirty);
      const past = new Date(Date.now() - 60_000);
      for (let k = 0; k < dirty; k += 1) {
        const path = join(dir, filePath(pick(k)));
        writeFileSync(path, `file ${pick(k)} dirty\n`);
        utimesSync(path, past, past);
      }
      // Their ctimes are now: past the hash cache's racy margin (3 s), a save can trust what it hashed.
      await new Promise((resolve) => setTimeout(resolve, 3_500));
      await store.save({ label: 'dirty' });
      let turn = 0;
      try {
        return await roundRobin({
          runs: size.runs, warmup: size.warmup,
          prepare: async () => {
            turn += 1;
            writeFileSync(join(dir, filePath(pick(turn % dirty))), `file ${pick(turn % dirty)} dirty, turn ${turn}\n`);
          },
          sides: {
            sdk: () => timed(() => store.save({ label: `dirty ${turn}` })),
            cli: () => chant(dir, ['workspace', 'wip', 'save', '--label', `dirty ${turn}`]).ms,
            status: () => run('git', ['status', '--porcelain'], { cwd: dir }).ms,
          },
        });
      } finally {
        clean(dir);
      }
    });
    const label = `${dirty} files modified since HEAD, one changed since the last save, ${size.large} files`;
    list.push({ name: `SDK save (in-process) vs git status --porcelain, ${label}`, target: dirty === size.dirty[size.dirty.length - 1] ? 1.3 : null, kind: 'ratio', measure: async () => ratio(await measure(), 'sdk', 'status') });
    list.push({ name: `CLI save vs git status --porcelain, ${label}`, target: null, kind: 'ratio', measure: async () => ratio(await measure(), 'cli', 'status') });
  }
  // Restores of a snapshot of the clean tree, 10 tracked files modified before each side: the
  // SDK against es-git's checkout after its own checkpoint (both in-process), the CLI against
  // the plain-git script.
  const restoreShapes = [
    { files: size.small, shape: NESTED, label: `${size.small} files`, esGit: 2.0 },
    { files: size.middle, shape: NESTED, label: `${size.middle} files`, esGit: null },
    { files: size.large, shape: NESTED, label: `${size.large} files`, esGit: null, script: 1.0 },
    { files: size.huge, shape: NESTED, label: `${size.huge} files`, script: 1.0 },
    { files: wide.files, shape: wide, label: `${wide.files} files in ${size.folders} folders of ${size.width}`, script: 1.0 },
  ];
  for (const { files, shape, label, esGit: esGitTarget, script } of restoreShapes) {
    const measure = group(`restore:${label}`, async () => {
      const dir = repo(files, shape);
      clean(dir);
      const { WipStore } = await import(pathToFileURL(join(ROOT, 'dist', 'lib', 'index.js')).href);
      const store = new WipStore({ cwd: dir });
      const target = (await store.save({ label: 'restore target' })).snapshot.commit;
      const libgit2 = esGitTarget === undefined || esGitSkipped() !== null ? null : await peer('es-git', dir);
      const sides = {
        ...(libgit2 === null ? {} : {
          sdk: () => timed(() => store.restore({ snapshot: target })),
          'es-git': () => timed(() => libgit2.restore(target)),
        }),
        ...(script === undefined ? {} : {
          cli: () => chant(dir, ['workspace', 'wip', 'restore', target]).ms,
          script: () => restoreScript(dir, target),
        }),
      };
      try {
        return await roundRobin({ runs: size.runs, warmup: size.warmup, prepare: async (round) => modify(dir, files, round, shape.pathOf), sides });
      } finally {
        // The wide and the largest trees serve no later row: their disk goes now.
        if (shape !== NESTED || files === size.huge) {
          rmSync(dir, { recursive: true, force: true });
          repos.delete(`${shape.name}:${files}`);
        }
      }
    });
    if (esGitTarget !== undefined) list.push({ name: `SDK restore (in-process) vs es-git checkout after its own checkpoint, ${label}, 10 paths changed`, target: esGitTarget, kind: 'ratio', measure: async () => esGitSkipped() ?? ratio(await measure(), 'sdk', 'es-git') });
    if (script !== undefined) list.push({ name: `CLI restore vs the plain-git restore script, ${label}, 10 paths changed`, target: script, kind: 'ratio', measure: async () => ratio(await measure(), 'cli', 'script') });
  }
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
  // What a timeline asks before a restore (issue 17): the diff of two snapshots 10 files apart,
  // held to git diff --raw of the same two commits (the SDK adds line counts), and a restore's
  // plan, held to a save of the same working tree, both in-process on the large tree.
  list.push({
    name: `SDK diff of two snapshots 10 files apart (in-process) vs git diff --raw of the two, ${size.large} files`, target: size.targets ? 1.2 : null, kind: 'ratio',
    measure: async () => {
      const dir = repo(size.large);
      clean(dir);
      const { WipStore } = await import(pathToFileURL(join(ROOT, 'dist', 'lib', 'index.js')).href);
      const store = new WipStore({ cwd: dir, policy: null });
      modify(dir, size.large, 2000);
      const from = (await store.save({ label: 'diff from' })).snapshot.commit;
      modify(dir, size.large, 2001);
      const to = (await store.save({ label: 'diff to' })).snapshot.commit;
      const diffed = await store.diff({ from, to });
      const raw = git(dir, 'diff', '--raw', '-z', from, to);
      if (diffed.files !== 10 || raw.split('\0').filter((part) => part.startsWith(':')).length !== 10) throw new Error(`the snapshots are not 10 files apart: ${diffed.files}`);
      return ratio(await roundRobin({
        runs: size.runs, warmup: size.warmup,
        sides: {
          sdk: () => timed(() => store.diff({ from, to })),
          git: () => run('git', ['diff', '--raw', from, to], { cwd: dir }).ms,
        },
      }), 'sdk', 'git');
    },
  });
  list.push({
    name: `SDK plan of a restore (in-process) vs SDK save of the same working tree, ${size.large} files, 10 files modified each round`, target: size.targets ? 1.1 : null, kind: 'ratio',
    measure: async () => {
      const dir = repo(size.large);
      clean(dir);
      const { WipStore } = await import(pathToFileURL(join(ROOT, 'dist', 'lib', 'index.js')).href);
      const store = new WipStore({ cwd: dir, policy: null });
      const target = (await store.save({ label: 'plan target' })).snapshot.commit;
      let round = 3000;
      return ratio(await roundRobin({
        runs: size.runs, warmup: size.warmup,
        // Each side meets 10 files modified since the last save.
        prepare: async () => modify(dir, size.large, (round += 1)),
        sides: {
          plan: () => timed(async () => {
            const plan = await store.plan({ snapshot: target });
            if (plan.write.length === 0) throw new Error('the plan would write nothing');
          }),
          save: () => timed(() => store.save({ label: `plan bench ${round}` })),
        },
      }), 'plan', 'save');
    },
  });
  // The read's rows: a chain of each length, made by one fast-import. The memo of snapshot
  // chains (lib/managers/snapshot-memo.ts) is what a read leaves for the next, so the rows with a
  // target read as Studio does after an agent's turn: the memo knows the chain but for the one
  // snapshot saved since. The first read, with no memo, is shown beside them.
  const chainRepo = (count = size.chain) => {
    const key = `chain:${count}`;
    if (!repos.has(key)) {
      const dir = syntheticRepo(10);
      snapshotChain(dir, count);
      repos.set(key, dir);
    }
    return repos.get(key);
  };
  const logBaseline = (dir) => nodeFloor() + run('git', ['log', '--first-parent', '-z', '--format=%H%x00%T%x00%P%x00%ct%x00%B%x00', 'refs/chant/wip/main'], { cwd: dir }).ms;
  let turns = 0;
  const readAfterSave = (dir, args = []) => {
    addSnapshot(dir, `turn:next-${(turns += 1)}`);
    return chant(dir, ['workspace', 'wip', '--json', ...args]).ms;
  };
  for (const count of size.chains) {
    list.push({
      name: `chant workspace wip --json on a chain of ${count} snapshots, one saved since the last read, vs (node -e 0 + the git log baseline)`, target: count >= size.chain ? 1.50 : null, kind: 'ratio',
      measure: () => {
        const dir = chainRepo(count);
        return sideBySide({ runs: size.runs, warmup: size.warmup, a: () => readAfterSave(dir), b: () => logBaseline(dir) });
      },
    });
  }
  // The read with each snapshot's change counts, as a timeline asks for it after a turn: the
  // snapshot memo (lib/managers/snapshot-memo.ts) holds the chain's counts, so only the new
  // snapshot is diffed.
  list.push({
    name: `chant workspace wip --json --changes on a chain of ${size.chain} snapshots, one saved since the last read, vs (node -e 0 + the git log baseline)`, target: size.targets ? 1.50 : null, kind: 'ratio',
    measure: () => {
      const dir = chainRepo();
      // The first read with --changes fills the memo; the rows read as Studio does after it.
      const primed = chant(dir, ['workspace', 'wip', '--json', '--changes']).doc;
      if (primed.branches?.[0]?.snapshots?.[0]?.changes === undefined) throw new Error('the read gave no change counts');
      return sideBySide({ runs: size.runs, warmup: size.warmup, a: () => readAfterSave(dir, ['--changes']), b: () => logBaseline(dir) });
    },
  });
  const [shortChain, longChain] = [size.limitChain, size.chains[size.chains.length - 1]];
  list.push({
    name: `chant workspace wip --json --limit ${size.limit} on a chain of ${longChain} snapshots vs the same on a chain of ${shortChain}, one saved since each read`, target: 1.20, kind: 'ratio',
    measure: () => {
      const [long, short] = [chainRepo(longChain), chainRepo(shortChain)];
      const limit = ['--limit', String(size.limit)];
      return sideBySide({ runs: size.runs, warmup: size.warmup, a: () => readAfterSave(long, limit), b: () => readAfterSave(short, limit) });
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
    name: 'git processes spawned by one save with no policy', target: 5, kind: 'count',
    measure: () => {
      // Both ways a save can stage, each forced: the row holds the larger. A save before them
      // (uncounted) lets git tell its identity once, as every save after the first finds it.
      const dir = repo(size.small);
      const counter = gitCounter();
      editRound(dir, size.small, (edits += 1));
      // It trusts a configuration file that has not changed for a moment.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 250);
      chant(dir, ['workspace', 'wip', 'save', '--label', 'identity'], counter.env);
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
  // Retried: a git process a row left behind (an auto gc) may still be writing in one.
  const dispose = () => { for (const dir of repos.values()) rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 }); };
  return { list, dispose };
}

/** Whether a row is asked for: every row, or one whose name holds any of `only`'s texts, separated by |. */
function selected(name, only) {
  if (only === undefined || only === '') return true;
  return only.split('|').some((text) => text.length > 0 && name.includes(text));
}

function verdict(row, value) {
  if (value === null || row.target === null || !row.options?.targets) return '';
  return value <= row.target ? 'pass' : 'miss';
}

/**
 * Runs every row and resolves with the table's rows. Options: `quick`, `only`, `silent`, and
 * `esGitBinding` (the package es-git's binding loads from; the default is the dev dependency).
 */
export async function bench(options = {}) {
  const size = options.quick ? QUICK : FULL;
  const { list, dispose } = rows(size, options.esGitBinding);
  const results = [];
  try {
    for (const row of list) {
      if (!selected(row.name, options.only)) continue;
      row.options = size;
      const started = Date.now();
      const result = await measureRow(row);
      results.push(result);
      if (!options.silent) process.stderr.write(`${format(result)}  (${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
    }
  } finally {
    dispose();
  }
  return results;
}

/** Measures one row into its line of the table; a row that fails says why, in its detail, and never stops the others. */
export async function measureRow(row) {
  let measured;
  try {
    measured = await row.measure();
  } catch (error) {
    measured = { value: null, note: `failed: ${(error instanceof Error ? error.message : String(error)).split('\n')[0]}` };
  }
  const value = (row.kind === 'ratio' ? measured.ratio : measured.value) ?? null;
  // A failed ratio row has no timings to print, only its reason.
  const detail = row.kind === 'ratio' && typeof measured.a === 'number' && typeof measured.b === 'number' ? `${measured.a.toFixed(1)} ms vs ${measured.b.toFixed(1)} ms, ${measured.runs} runs` : (measured.note ?? '');
  return { row: row.name, value, target: row.target, verdict: verdict(row, value), detail };
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
  const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : (process.env.CHANT_BENCH_ONLY || undefined);
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

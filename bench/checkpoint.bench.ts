/**
 * `npm run bench:checkpoint`: what a run's checkpoint costs (issue 22) on a git repository of
 * 10,000 files, against the same run without one. A "run" here is what the agent's file tools do
 * to the workspace — one file edited, one written — and, with checkpoints, the two steps the host
 * adds: the checkpoint before the first change (`beforeChange`) and the record when it settles
 * (`settled`). The agent loop itself costs the same either way and is left out.
 *
 * Figures per run, median and worst over BENCH_RUNS runs (default 20) of one thread, after its
 * first run (whose checkpoint copies the user's index); that first run is reported alone. Also a
 * plain directory of the same files (outside git only the touched files are hashed).
 * Not a test: nothing here asserts a time. Numbers go to docs/benchmarks.md by hand.
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Checkpoints } from '../src/host/checkpoints/checkpoints.js'

const FILES = Number(process.env.BENCH_FILES ?? 10_000)
const RUNS = Math.max(3, Number(process.env.BENCH_RUNS ?? 20))

function workspace(git: boolean): string {
  const dir = mkdtempSync(join(tmpdir(), 'threadhost-bench-cp-'))
  for (let d = 0; d < FILES / 100; d++) {
    mkdirSync(join(dir, `d${d}`))
    for (let f = 0; f < 100; f++) writeFileSync(join(dir, `d${d}`, `f${f}.ts`), `export const v${d}_${f} = ${d * f}\n// ${'x'.repeat(200)}\n`)
  }
  if (git) {
    const env = { ...process.env, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@b', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@b' }
    execFileSync('git', ['init', '-q'], { cwd: dir })
    execFileSync('git', ['add', '.'], { cwd: dir, env })
    execFileSync('git', ['commit', '-q', '-m', 'start'], { cwd: dir, env })
  }
  return dir
}

/** What the agent's tools do in one run: an edit and a new file. */
function agentWork(dir: string, run: number): void {
  const edited = join(dir, 'd1', 'f1.ts')
  writeFileSync(edited, readFileSync(edited, 'utf8') + `// run ${run}\n`)
  writeFileSync(join(dir, 'd2', `new${run}.ts`), `export const run = ${run}\n`)
}

const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

async function measure(git: boolean): Promise<void> {
  const dir = workspace(git)
  const dataDir = mkdtempSync(join(tmpdir(), 'threadhost-bench-cp-data-'))
  const checkpoints = new Checkpoints({ dataDir })
  const without: number[] = []
  const withCp: number[] = []
  let first = 0
  for (let run = 1; run <= RUNS + 1; run++) {
    // Without: the tools' work alone.
    let start = process.hrtime.bigint()
    agentWork(dir, 1000 + run)
    without.push(ms(start))
    // With: the checkpoint before the first change, the work, the record at the settle.
    start = process.hrtime.bigint()
    await checkpoints.beforeChange('t', dir, run, { tool: 'edit', path: join(dir, 'd1', 'f1.ts') })
    await checkpoints.beforeChange('t', dir, run, { tool: 'write', path: join(dir, 'd2', `new${run}.ts`) })
    agentWork(dir, run)
    const changes = await checkpoints.settled('t', dir, run)
    const took = ms(start)
    if (!changes || changes.type !== 'run-changes' || changes.files.length < 2) throw new Error(`run ${run}: no changes recorded (${JSON.stringify(changes)})`)
    if (run === 1) first = took
    else withCp.push(took)
  }
  const label = git ? `git repository, ${FILES} files` : `plain directory, ${FILES} files`
  console.log(
    `${label}: without a checkpoint ${median(without).toFixed(1)} ms a run; with one ${median(withCp).toFixed(1)} ms (worst ${Math.max(...withCp).toFixed(1)} ms) over ${RUNS} runs; the thread's first run ${first.toFixed(1)} ms`,
  )
  rmSync(dir, { recursive: true, force: true })
  rmSync(dataDir, { recursive: true, force: true })
}

await measure(true)
await measure(false)

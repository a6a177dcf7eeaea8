/**
 * `npm run walk -- --steps 10000 --seed N [--restart-every 500] [--fault mutate-frame]`
 * `npm run walk -- --replay '<json array of commands>'`
 * `npm run walk -- --shrink --fault mutate-frame --seed N` (fast-check finds and shrinks a failing sequence)
 *
 * A long walk: commands drawn from the same arbitrary the suite uses (fast-check, seeded), sent to
 * a real server in this process and to the thread machine beside it. Prints steps run, invariants
 * checked and divergences found. After a divergence the walk records it (with the replayable
 * sequence of the current thread's life), deletes the thread and goes on with a fresh one.
 */
import { parseArgs } from 'node:util'
import { fc } from '@fast-check/vitest'
import { commandArb, describeCommand, type Command } from './commands.js'
import { Divergence, replayScript, runSequence, Walk } from './walk.js'

const { values } = parseArgs({
  options: {
    steps: { type: 'string', default: '1000' },
    seed: { type: 'string' },
    'restart-every': { type: 'string', default: '0' },
    fault: { type: 'string' },
    replay: { type: 'string' },
    shrink: { type: 'boolean', default: false },
    runs: { type: 'string', default: '40' },
    'demo-delay-ms': { type: 'string', default: '5' },
    /** Fail on known server bugs too (by default --shrink and --replay count them and go on with a fresh thread). */
    strict: { type: 'boolean', default: false },
  },
})

const seed = Number(values.seed ?? Date.now() % 1_000_000)
const fault = values.fault as 'mutate-frame' | 'restored-order' | undefined
const demoDelayMs = Number(values['demo-delay-ms'])
const tolerateKnown = !values.strict

async function replay(json: string) {
  const commands = JSON.parse(json) as Command[]
  console.log(`replaying ${commands.length} commands: ${commands.map(describeCommand).join(' → ')}`)
  try {
    const w = await runSequence(commands, { fault, demoDelayMs, tolerateKnown })
    console.log(`ok: ${w.stats.steps} steps, ${w.stats.checks} invariants checked, 0 divergences; known server bugs hit: ${JSON.stringify(w.stats.known)}`)
  } catch (error) {
    console.log(`DIVERGENCE\n${(error as Error).message}`)
    process.exitCode = 1
  }
}

async function shrink() {
  const started = Date.now()
  let runs = 0
  const result = await fc.check(
    fc.asyncProperty(fc.array(commandArb(), { minLength: 1, maxLength: 25 }), async (commands) => {
      runs++
      await runSequence(commands, { fault, demoDelayMs, tolerateKnown })
    }),
    { seed, numRuns: Number(values.runs), endOnFailure: false },
  )
  console.log(`seed ${seed}, fault ${fault ?? 'none'}: ${runs} sequences run in ${((Date.now() - started) / 1000).toFixed(1)} s`)
  if (!result.failed) return console.log('no failure found')
  const commands = result.counterexample![0] as Command[]
  console.log(`failed after ${result.numRuns} run(s), shrunk ${result.numShrinks} time(s) to ${commands.length} command(s):`)
  console.log(`  ${commands.map(describeCommand).join(' → ')}`)
  console.log(`replay: ${replayScript(commands)}${fault ? ` --fault ${fault}` : ''}${values.strict ? ' --strict' : ''}`)
  console.log(String((result.errorInstance as Error)?.message ?? result.errorInstance).split('\n').slice(0, 8).join('\n'))
  process.exitCode = 1
}

async function long() {
  const steps = Number(values.steps)
  const restartEvery = Number(values['restart-every'])
  const commands = fc.sample(commandArb(), { seed, numRuns: steps })
  const walk = new Walk({ fault, demoDelayMs })
  await walk.start()
  const started = Date.now()
  const divergences: string[] = []
  let lifeStart = 0
  console.log(`walk: ${steps} steps, seed ${seed}${restartEvery ? `, a restart every ${restartEvery} steps` : ''}${fault ? `, fault ${fault}` : ''}`)
  try {
    for (let i = 0; i < steps; i++) {
      const c: Command = restartEvery && i > 0 && i % restartEvery === 0 ? { t: 'restart' } : commands[i]
      try {
        await walk.step(c)
        if (c.t === 'delete') lifeStart = walk.trace.length
      } catch (error) {
        if (!(error instanceof Divergence)) throw error
        const life = walk.trace.slice(lifeStart)
        if (error.known) walk.stats.known[error.known] = (walk.stats.known[error.known] ?? 0) + 1
        divergences.push(`step ${i + 1} (${describeCommand(c)}): ${error.message}\n  replay (this thread's life): ${replayScript(life)}`)
        console.log(`DIVERGENCE at step ${i + 1}: ${error.message.split('\n')[0]}`)
        await walk.recover()
        lifeStart = walk.trace.length
      }
      if ((i + 1) % 500 === 0)
        console.log(`  ${i + 1} steps, ${walk.stats.checks} checks, ${walk.stats.restarts} restarts, ${((Date.now() - started) / 1000).toFixed(0)} s`)
    }
    await walk.finish()
  } catch (error) {
    divergences.push(`finish: ${(error as Error).message}`)
  } finally {
    await walk.close()
  }
  const seconds = (Date.now() - started) / 1000
  console.log(`\nsteps run: ${walk.stats.steps}`)
  console.log(`invariants checked: ${walk.stats.checks}`)
  console.log(`divergences found: ${divergences.length}`)
  console.log(`restarts: ${walk.stats.restarts}, thread lives: ${walk.stats.lives}, time: ${seconds.toFixed(1)} s`)
  console.log(`replies: ${JSON.stringify(walk.stats.replies)}`)
  console.log(`time per command (ms): ${JSON.stringify(walk.stats.ms)}`)
  console.log(`of which known server bugs: ${JSON.stringify(walk.stats.known)}`)
  for (const d of divergences) console.log(`\n${d}`)
  if (divergences.length) process.exitCode = 1
}

await (values.replay ? replay(values.replay) : values.shrink ? shrink() : long())

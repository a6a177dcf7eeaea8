/**
 * Random walks against the real server: fast-check draws command sequences (prompts idle and busy,
 * steer / follow-up / reject, some naming the current run or a stale one; stops with and without
 * `run`, repeated, racing a prompt; right, wrong, Skip, Cancel, spent and two-tab answers; dialog
 * timeouts; deletes; tabs that drop and resume, tabs that join late; graceful restarts), each
 * sequence on a fresh thread of one shared server, with the thread machine as the oracle after every
 * step. A failure is shrunk to the shortest failing sequence and printed as a replayable script; the
 * seed is fixed (WALK_SEED overrides it).
 */
import { fc } from '@fast-check/vitest'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { commandArb, describeCommand, type Command } from './commands.js'
import { replayScript, runSequence, Walk } from './walk.js'

const SEED = Number(process.env.WALK_SEED ?? 20261203)
const RUNS = Number(process.env.WALK_RUNS ?? 12)
let walk: Walk

beforeAll(async () => {
  walk = new Walk()
  await walk.start()
}, 30_000)
afterAll(async () => {
  await walk?.close()
})

describe('random walks against the real server, the thread machine as the oracle', () => {
  it(`${RUNS} random sequences of up to 40 commands (seed ${SEED}): every reply and machine frame as the model predicts, every stream invariant holds`, async () => {
    const result = await fc.check(
      fc.asyncProperty(fc.array(commandArb({ restarts: true }), { minLength: 1, maxLength: 40, size: 'max' }), async (commands) => {
        await walk.recover()
        await runSequence(commands, { tolerateKnown: true }, walk)
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: false },
    )
    const s = walk.stats
    console.log(
      `random walk (seed ${SEED}): ${s.steps} steps, ${s.checks} invariants checked, ${s.restarts} restarts, ` +
        `known server bugs hit: ${JSON.stringify(s.known)}\nreplies: ${JSON.stringify(s.replies)}`,
    )
    if (result.failed) {
      const commands = result.counterexample![0] as Command[]
      throw new Error(
        `seed ${SEED}: a walk failed; shrunk (${result.numShrinks} shrinks) to ${commands.length} command(s): ` +
          `${commands.map(describeCommand).join(' → ')}\nreplay: ${replayScript(commands)}\n` +
          `${(result.errorInstance as Error)?.message ?? String(result.errorInstance)}`,
      )
    }
    expect(s.steps).toBeGreaterThan(RUNS)
  }, 85_000)
})

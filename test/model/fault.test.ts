/**
 * The walk's invariants bite: with a fault injected through the harness's test-only option — tab B's
 * copy of every `dialog-settled` frame altered by one byte — fast-check finds a failing sequence and
 * shrinks it to the shortest one, which the walk prints as a replayable script.
 */
import { fc } from '@fast-check/vitest'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { commandArb, describeCommand, type Command } from './commands.js'
import { replayScript, runSequence, Walk } from './walk.js'

let walk: Walk
beforeAll(async () => {
  walk = new Walk({ fault: 'mutate-frame' })
  await walk.start()
}, 30_000)
afterAll(async () => {
  await walk?.close()
})

describe('a deliberately broken rule makes the walk fail with a shrunk sequence', () => {
  it('a follower-side mutation of one frame is caught as a byte difference between tabs, and shrinks to a sequence of one or two commands', async () => {
    const result = await fc.check(
      fc.asyncProperty(fc.array(commandArb(), { minLength: 1, maxLength: 15, size: 'max' }), async (commands) => {
        await walk.recover()
        await runSequence(commands, { fault: 'mutate-frame', tolerateKnown: true }, walk)
      }),
      { seed: 42, numRuns: 20 },
    )
    expect(result.failed).toBe(true)
    const shrunk = result.counterexample![0] as Command[]
    const message = (result.errorInstance as Error).message
    console.log(`shrunk to: ${shrunk.map(describeCommand).join(' → ')}\nreplay: ${replayScript(shrunk)} --fault mutate-frame\n${message.split('\n').slice(0, 3).join('\n')}`)
    expect(message).toMatch(/differs from another tab's copy/)
    // a question settled in the first command or two (asked, then answered, timed out or stopped by the walk's end)
    expect(shrunk.length).toBeLessThanOrEqual(2)
    expect(message).toMatch(/^(step [12] |finish)/)
  }, 60_000)
})

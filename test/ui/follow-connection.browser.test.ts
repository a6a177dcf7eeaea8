/** The follow connection machine, pure: connect/disconnect are spies, time is the machine's own clock. */
import { describe, expect, test, vi } from 'vitest'
import { createActor, SimulatedClock } from 'xstate'
import { backoffDelay, followConnectionMachine } from '../../src/machines/follow-connection.js'

function start(lastSeq = 0) {
  const connect = vi.fn<(after: number) => void>()
  const disconnect = vi.fn()
  const clock = new SimulatedClock()
  const machine = followConnectionMachine.provide({
    actions: { connect: (_, p) => connect(p.after), disconnect: () => disconnect() },
  })
  const actor = createActor(machine, { input: { lastSeq }, clock }).start()
  return { actor, connect, disconnect, clock, value: () => actor.getSnapshot().value }
}

describe('follow connection machine', () => {
  test('connects from a snapshot first, then is open on OPENED', () => {
    const m = start()
    expect(m.value()).toBe('connecting')
    expect(m.connect).toHaveBeenCalledWith(0)
    m.actor.send({ type: 'OPENED' })
    expect(m.value()).toBe('open')
  })

  test('a failure backs off, then reconnects after the last seq it saw', () => {
    const m = start()
    m.actor.send({ type: 'OPENED' })
    m.actor.send({ type: 'FRAME', seq: 7 })
    m.actor.send({ type: 'FRAME', seq: 8 })
    m.actor.send({ type: 'FAILED' })
    expect(m.value()).toBe('backingOff')
    expect(m.disconnect).toHaveBeenCalledTimes(1)
    m.clock.increment(backoffDelay(1) - 1)
    expect(m.value()).toBe('backingOff')
    m.clock.increment(1)
    expect(m.value()).toBe('connecting')
    expect(m.connect).toHaveBeenLastCalledWith(8)
  })

  test('repeated failures back off longer, capped; a frame resets the backoff', () => {
    expect(backoffDelay(1)).toBe(250)
    expect(backoffDelay(2)).toBe(500)
    expect(backoffDelay(3)).toBe(1000)
    expect(backoffDelay(60)).toBe(15_000)
    const m = start()
    m.actor.send({ type: 'FAILED' })
    m.clock.increment(250)
    m.actor.send({ type: 'FAILED' })
    expect(m.actor.getSnapshot().context.attempt).toBe(2)
    m.clock.increment(499)
    expect(m.value()).toBe('backingOff')
    m.clock.increment(1)
    m.actor.send({ type: 'FRAME', seq: 3 })
    expect(m.value()).toBe('open')
    expect(m.actor.getSnapshot().context).toEqual({ lastSeq: 3, attempt: 0, silenceMs: 0 })
  })

  /** Drives the machine through an outage of `outageMs` (every attempt before it fails at once); the time from the server's return to the reconnect. */
  function reconnectLag(outageMs: number): { lag: number; attempts: number } {
    const m = start(4)
    m.actor.send({ type: 'OPENED' })
    let now = 0
    m.actor.send({ type: 'FAILED' })
    let attempts = 0
    for (;;) {
      const wait = backoffDelay(m.actor.getSnapshot().context.attempt)
      m.clock.increment(wait)
      now += wait
      expect(m.value()).toBe('connecting')
      attempts++
      if (now >= outageMs) return { lag: now - outageMs, attempts }
      m.actor.send({ type: 'FAILED' })
    }
  }

  test('after a server restart of up to half a minute a tab is back within about a second (was up to ~10 s)', () => {
    for (const outage of [1_000, 3_000, 5_000, 8_000, 10_000, 20_000, 30_000]) {
      expect(reconnectLag(outage).lag, `${outage} ms down`).toBeLessThanOrEqual(1_000)
    }
  })

  test('a long outage is asked about rarely: a tab tries at most every 15 s after the first minute, and the spread keeps tabs apart', () => {
    const hour = reconnectLag(3_600_000)
    // 40 quick attempts, a few doubling ones, then one each 15 s.
    expect(hour.attempts).toBeLessThan(40 + 5 + 3_600_000 / 15_000)
    expect(backoffDelay(100, 0)).toBe(12_000)
    expect(backoffDelay(100, 1)).toBe(18_000)
    expect(backoffDelay(10, 0)).toBe(800)
    expect(backoffDelay(10, 1)).toBe(1_200)
  })

  test('RETRY skips the wait; CLOSE closes from anywhere and disconnects', () => {
    const m = start(5)
    expect(m.connect).toHaveBeenCalledWith(5)
    m.actor.send({ type: 'FAILED' })
    m.actor.send({ type: 'RETRY' })
    expect(m.value()).toBe('connecting')
    m.actor.send({ type: 'CLOSE' })
    expect(m.value()).toBe('closed')
    expect(m.disconnect).toHaveBeenCalledTimes(2)
    m.clock.increment(60_000)
    expect(m.value()).toBe('closed')
    expect(m.connect).toHaveBeenCalledTimes(2)
  })

  test('a stream silent for 2.5 of the heartbeats it named is taken as dead (a slept laptop, a frozen node) and resumed after the last seq', () => {
    const m = start()
    m.actor.send({ type: 'OPENED' })
    m.actor.send({ type: 'ALIVE', everyMs: 2000 })
    m.actor.send({ type: 'FRAME', seq: 4 })
    // Heartbeats keep it open however long no frame comes.
    for (let i = 0; i < 5; i++) {
      m.clock.increment(1999)
      m.actor.send({ type: 'ALIVE', everyMs: 2000 })
    }
    expect(m.value()).toBe('open')
    m.clock.increment(4999)
    expect(m.value()).toBe('open')
    m.clock.increment(1)
    expect(m.value()).toBe('backingOff')
    expect(m.disconnect).toHaveBeenCalledTimes(1)
    m.clock.increment(backoffDelay(1))
    expect(m.connect).toHaveBeenLastCalledWith(4)
  })

  test('a stream that named no heartbeat is never judged by its silence', () => {
    const m = start()
    m.actor.send({ type: 'OPENED' })
    m.clock.increment(3_600_000)
    expect(m.value()).toBe('open')
  })
})

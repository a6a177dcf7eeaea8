/**
 * Fan-out and the drop rule, without a server: the frames of one turn go to every follow as one
 * shared buffer, a follow that joins mid-turn neither misses nor doubles a frame, and a client is
 * closed for sustained lag (or a runaway buffer), never for one burst it then drains.
 */
import { EventEmitter } from 'node:events'
import { fc, test } from '@fast-check/vitest'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Feed } from '../../src/host/feed.js'
import { encodeSnapshot } from '../../src/host/frame.js'
import { initialView, projectAll } from '../../src/shared/projection.js'
import { defaultStreamOptions, openEventStream, type EventStream } from '../../src/server/event-stream.js'
import { FanOut } from '../../src/server/follow.js'
import type { Observation, ObservationInput, Snapshot } from '../../src/schemas/index.js'

const note = (message: string): ObservationInput => ({ type: 'notify', message, level: 'info', persist: true })
const tick = () => new Promise((resolve) => setImmediate(resolve))

/** A follow that keeps every write it was handed. */
function recorder(): EventStream & { writes: Buffer[]; closed: boolean } {
  return {
    writes: [],
    closed: false,
    buffered: 0,
    send(frame) {
      this.writes.push(Buffer.isBuffer(frame) ? frame : Buffer.from(frame))
    },
    close() {
      this.closed = true
    },
  }
}

/** Splits written bytes back into frames: a snapshot (if any) and observations. */
function parse(writes: Buffer[]): { snapshot?: Snapshot; observations: Observation[] } {
  const out: { snapshot?: Snapshot; observations: Observation[] } = { observations: [] }
  for (const block of Buffer.concat(writes).toString('utf8').split('\n\n')) {
    const data = block.split('\n').find((l) => l.startsWith('data: '))
    if (!data) continue
    const value = JSON.parse(data.slice(6))
    if (value.type === 'snapshot') out.snapshot = value
    else out.observations.push(value)
  }
  return out
}

describe('fan-out: one buffer per follow per turn', () => {
  it('a frame that comes alone is written at once; the rest of its turn’s burst follows as one write of the same bytes to every follow', async () => {
    const feed = new Feed(initialView('t1'))
    const fanOut = FanOut.of(feed)
    const a = recorder()
    const b = recorder()
    fanOut.join(a, 0)
    fanOut.join(b, 0)
    feed.append(note('alone'))
    expect(a.writes).toHaveLength(1)
    for (let i = 0; i < 4; i++) feed.append(note(`m${i}`))
    expect(a.writes).toHaveLength(1)
    await tick()
    expect(a.writes).toHaveLength(2)
    expect(b.writes[1]).toBe(a.writes[1])
    expect(parse(a.writes).observations.map((o) => o.seq)).toEqual([1, 2, 3, 4, 5])
    // Turns that keep producing frames keep batching; after a quiet turn the next frame is alone again.
    feed.append(note('next turn'))
    expect(a.writes).toHaveLength(2)
    await tick()
    expect(a.writes).toHaveLength(3)
    await tick()
    feed.append(note('after a quiet turn'))
    expect(a.writes).toHaveLength(4)
    expect(parse(b.writes).observations.map((o) => o.seq)).toEqual([1, 2, 3, 4, 5, 6, 7])
    expect(feed.followerCount).toBe(1)
  })

  it('a streamed frame never goes alone: the deltas of many feeds in one turn are written at its end, each feed’s in one write', async () => {
    const delta = (text: string): ObservationInput => ({ type: 'assistant-delta', messageId: 'm1', text })
    const feeds = Array.from({ length: 3 }, (_, i) => new Feed(initialView(`t${i}`)))
    const follows = feeds.map((feed) => {
      const r = recorder()
      FanOut.of(feed).join(r, 0)
      return r
    })
    for (const feed of feeds) feed.append(delta('one '))
    feeds[0].append(delta('two '))
    expect(follows.map((f) => f.writes.length)).toEqual([0, 0, 0])
    await tick()
    expect(follows.map((f) => f.writes.length)).toEqual([1, 1, 1])
    expect(parse(follows[0].writes).observations.map((o) => o.seq)).toEqual([1, 2])
    // A frame that is not streamed still goes at once when its feed's window is closed.
    await tick()
    feeds[1].append(note('a status of sorts'))
    expect(follows[1].writes).toHaveLength(2)
    feeds[2].append(delta('three '))
    expect(follows[2].writes).toHaveLength(1)
    await tick()
    expect(follows[2].writes).toHaveLength(2)
  })

  it('one follow whose write throws at the end of a turn does not hold back the streamed frames of every other feed', async () => {
    const delta = (text: string): ObservationInput => ({ type: 'assistant-delta', messageId: 'm1', text })
    const [broken, fine] = [new Feed(initialView('t1')), new Feed(initialView('t2'))]
    const thrower = recorder()
    FanOut.of(broken).join(thrower, 0)
    const ok = recorder()
    FanOut.of(fine).join(ok, 0)
    thrower.send = () => {
      throw new Error('socket gone')
    }
    broken.append(delta('one '))
    fine.append(delta('one '))
    const uncaught = new Promise((resolve) => process.once('uncaughtException', resolve))
    await uncaught
    fine.append(delta('two '))
    await tick()
    await tick()
    expect(parse(ok.writes).observations.map((o) => o.seq)).toEqual([1, 2])
  })

  it('a follow joining mid-turn gets the snapshot at the current seq, then only the frames after it', async () => {
    const feed = new Feed(initialView('t1'))
    const fanOut = FanOut.of(feed)
    const early = recorder()
    fanOut.join(early, 0)
    feed.append(note('a'))
    feed.append(note('b'))
    const late = recorder()
    fanOut.join(late, undefined)
    feed.append(note('c'))
    await tick()
    expect(parse(early.writes).observations.map((o) => o.seq)).toEqual([1, 2, 3])
    const got = parse(late.writes)
    expect(got.snapshot?.seq).toBe(2)
    expect(got.observations.map((o) => o.seq)).toEqual([3])
  })

  it('closing the feed writes what is pending, then ends every follow; the last to leave unfollows the feed', async () => {
    let unfollowed = 0
    const feed = new Feed(initialView('t1'), { onUnfollowed: () => unfollowed++ })
    const fanOut = FanOut.of(feed)
    const a = recorder()
    const leaveA = fanOut.join(a, 0)
    const b = recorder()
    const leaveB = fanOut.join(b, 0)
    leaveA()
    expect(unfollowed).toBe(0)
    feed.append(note('first words'))
    feed.append(note('last words'))
    b.close = () => {
      b.closed = true
      leaveB()
    }
    feed.close()
    expect(parse(b.writes).observations.map((o) => o.seq)).toEqual([1, 2])
    expect(b.closed).toBe(true)
    expect(unfollowed).toBe(1)
    expect(FanOut.of(feed)).not.toBe(fanOut)
  })

  it('the snapshot frame is encoded once per seq and shared by the follows that join at it', () => {
    const feed = new Feed(initialView('t1'))
    feed.append(note('a'))
    const frame = feed.snapshotFrame()
    expect(frame.equals(encodeSnapshot(feed.snapshot()))).toBe(true)
    expect(feed.snapshotFrame()).toBe(frame)
    feed.append(note('b'))
    expect(feed.snapshotFrame()).not.toBe(frame)
  })

  type Step = { kind: 'append' } | { kind: 'join'; after: number | 'none' } | { kind: 'tick' } | { kind: 'leave'; which: number }
  const step: fc.Arbitrary<Step> = fc.oneof(
    { weight: 5, arbitrary: fc.constant({ kind: 'append' as const }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('join' as const), after: fc.oneof(fc.nat(12), fc.constant('none' as const)) }) },
    { weight: 2, arbitrary: fc.constant({ kind: 'tick' as const }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('leave' as const), which: fc.nat(5) }) },
  )
  test.prop([fc.array(step, { maxLength: 40 }), fc.integer({ min: 1, max: 6 })], { numRuns: 200 })(
    'whenever follows join, leave and turns end, every follow folds to the feed’s view: nothing missed, nothing doubled',
    (steps, ringSize) => {
      const feed = new Feed(initialView('t1'), { ringSize })
      const fanOut = FanOut.of(feed)
      const follows: { stream: ReturnType<typeof recorder>; after: number | undefined; leave: () => void; left: boolean }[] = []
      let n = 0
      for (const s of steps) {
        if (s.kind === 'append') feed.append(note(`m${n++}`))
        else if (s.kind === 'tick') fanOut.flush()
        else if (s.kind === 'join') {
          const stream = recorder()
          const after = s.after === 'none' ? undefined : s.after
          follows.push({ stream, after, leave: fanOut.join(stream, after), left: false })
        } else if (follows[s.which] && !follows[s.which].left) {
          fanOut.flush()
          follows[s.which].leave()
          follows[s.which].left = true
        }
      }
      fanOut.flush()
      for (const f of follows) {
        if (f.left) continue
        const got = parse(f.stream.writes)
        const seqs = got.observations.map((o) => o.seq)
        const start = got.snapshot ? got.snapshot.seq : (f.after ?? 0)
        expect(seqs).toEqual(Array.from({ length: feed.seq - start }, (_, i) => start + i + 1))
        if (got.snapshot) expect(projectAll(got.snapshot, got.observations)).toEqual(JSON.parse(JSON.stringify(feed.snapshot())))
      }
    },
  )
})

/**
 * A stand-in response whose buffered byte count the test sets, as a socket that does or does not
 * read. An event stream writes its frames to the response's socket itself, so the count is the
 * socket's (the response's `writableLength` reads it, as Node's does).
 */
function fakeResponse() {
  const socket = Object.assign(new EventEmitter(), {
    writableLength: 0,
    setNoDelay() {},
    write(chunk: Buffer | string) {
      socket.writableLength += Buffer.byteLength(chunk)
      return true
    },
  })
  const raw = Object.assign(new EventEmitter(), {
    destroyed: false,
    ended: false,
    writableCorked: 0,
    writeHead() {},
    write(chunk: Buffer | string) {
      return socket.write(chunk)
    },
    destroy() {
      raw.destroyed = true
    },
    end() {
      raw.ended = true
    },
    socket,
  })
  Object.defineProperty(raw, 'writableLength', {
    get: () => socket.writableLength,
    set: (n: number) => (socket.writableLength = n),
  })
  const response = raw as typeof raw & { writableLength: number }
  const request = { raw: new EventEmitter(), url: '/follow', log: { warn() {} } } as unknown as FastifyRequest
  const reply = { hijack() {}, raw } as unknown as FastifyReply
  /** The client read everything: the buffer empties and the socket says so. */
  const drain = () => {
    socket.writableLength = 0
    socket.emit('drain')
  }
  return { raw: response, request, reply, drain }
}

describe('event stream: a client is judged by sustained lag', () => {
  afterEach(() => {
    vi.useRealTimers()
  })
  const options = { ...defaultStreamOptions, highWaterMark: 1000, lagMs: 500, maxBufferedBytes: 100_000 }
  const burst = (stream: EventStream, bytes: number) => {
    for (let i = 0; i < bytes / 100; i++) stream.send(Buffer.alloc(100, 'x'))
  }

  it('a fast client left a burst far above the high-water mark, which it then reads, is never closed', async () => {
    vi.useFakeTimers()
    const { raw, request, reply, drain } = fakeResponse()
    let ended = 0
    const stream = openEventStream(request, reply, options, () => ended++)
    for (let round = 0; round < 20; round++) {
      burst(stream, 20_000)
      await vi.advanceTimersByTimeAsync(100)
      drain()
    }
    await vi.advanceTimersByTimeAsync(5_000)
    expect(raw.destroyed).toBe(false)
    expect(ended).toBe(0)
  })

  it('a client that keeps reading, but slowly, stays above the mark without ever draining: it is closed after lagMs', async () => {
    vi.useFakeTimers()
    const { raw, request, reply } = fakeResponse()
    let ended = 0
    const stream = openEventStream(request, reply, options, () => ended++)
    burst(stream, 5_000)
    await vi.advanceTimersByTimeAsync(300)
    raw.writableLength -= 1_000 // it read a little
    burst(stream, 1_000)
    expect(raw.destroyed).toBe(false)
    await vi.advanceTimersByTimeAsync(300)
    expect(raw.destroyed).toBe(true)
    expect(ended).toBe(1)
    const before = raw.writableLength
    stream.send('after the end')
    expect(raw.writableLength).toBe(before)
  })

  it('a client that never reads is closed once it has lagged for lagMs, and only once', async () => {
    vi.useFakeTimers()
    const { raw, request, reply } = fakeResponse()
    let ended = 0
    const stream = openEventStream(request, reply, options, () => ended++)
    burst(stream, 2_000)
    await vi.advanceTimersByTimeAsync(499)
    expect(raw.destroyed).toBe(false)
    await vi.advanceTimersByTimeAsync(10)
    expect(raw.destroyed).toBe(true)
    request.raw.emit('close')
    expect(ended).toBe(1)
  })

  it('a client whose buffer passes maxBufferedBytes is closed at once, without waiting for lagMs', async () => {
    vi.useFakeTimers()
    const { raw, request, reply } = fakeResponse()
    const stream = openEventStream(request, reply, options, () => {})
    burst(stream, 120_000)
    await vi.advanceTimersByTimeAsync(5)
    expect(raw.destroyed).toBe(true)
  })

  it('many clients found lagging at once are all closed, a few per turn of the event loop', async () => {
    vi.useFakeTimers()
    const clients = Array.from({ length: 40 }, () => fakeResponse())
    const streams = clients.map((c) => openEventStream(c.request, c.reply, options, () => {}))
    for (const s of streams) burst(s, 2_000)
    await vi.advanceTimersByTimeAsync(501)
    const closedAfterOneTurn = clients.filter((c) => c.raw.destroyed).length
    expect(closedAfterOneTurn).toBeGreaterThan(0)
    expect(closedAfterOneTurn).toBeLessThan(40)
    await vi.advanceTimersByTimeAsync(50)
    expect(clients.every((c) => c.raw.destroyed)).toBe(true)
  })
})

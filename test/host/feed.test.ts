/**
 * The feed: numbering, fan-out of one encoded frame to every follower, and resume — exactly the
 * missed frames, or a fresh snapshot when the follower is too far behind (or ahead, after a restart).
 */
import { fc, test } from '@fast-check/vitest'
import { describe, expect, it } from 'vitest'
import { Feed } from '../../src/host/feed.js'
import { initialView } from '../../src/shared/projection.js'
import type { Observation, ObservationInput } from '../../src/schemas/index.js'

const note = (message: string): ObservationInput => ({ type: 'notify', message, level: 'info' })
const seqOf = (frame: Buffer) => Number(/^id: (\d+)\n/.exec(frame.toString('utf8'))![1])

describe('feed: numbering and fan-out', () => {
  it('numbers observations 1, 2, 3 … from the view it starts at', () => {
    const feed = new Feed(initialView('t1', [], 7))
    expect([feed.append(note('a')).seq, feed.append(note('b')).seq]).toEqual([8, 9])
    expect(feed.seq).toBe(9)
  })
  it('hands every follower the same encoded bytes, after the in-process observers, and stops after unfollow', () => {
    const feed = new Feed(initialView('t1'))
    const order: string[] = []
    const got: Buffer[][] = [[], []]
    feed.observe((o) => order.push(`observer ${o.seq}`))
    const stop = feed.follow({
      send: (f, o) => {
        got[0].push(f)
        order.push(`follower ${o.seq}`)
      },
      close: () => {},
    })
    feed.follow({ send: (f) => void got[1].push(f), close: () => {} })
    feed.append(note('a'))
    stop()
    feed.append(note('b'))
    expect(order).toEqual(['observer 1', 'follower 1', 'observer 2'])
    expect(got[0][0]).toBe(got[1][0])
    expect(got[1].map(seqOf)).toEqual([1, 2])
    expect(feed.followerCount).toBe(1)
  })
  it('closing the feed ends every follow once and forgets the followers', () => {
    const feed = new Feed(initialView('t1'))
    const closed: string[] = []
    feed.follow({ send: () => {}, close: () => void closed.push('a') })
    feed.follow({ send: () => {}, close: () => void closed.push('b') })
    feed.close()
    feed.close()
    expect(closed).toEqual(['a', 'b'])
    expect(feed.followerCount).toBe(0)
  })
  it('tells its owner when the last follower leaves, so a cold thread can let go of it', () => {
    let idle = 0
    const feed = new Feed(initialView('t1'), { onUnfollowed: () => idle++ })
    const a = feed.follow({ send: () => {}, close: () => {} })
    const b = feed.follow({ send: () => {}, close: () => {} })
    a()
    expect(idle).toBe(0)
    b()
    b()
    expect(idle).toBe(1)
  })
})

describe('feed: the view', () => {
  it('a snapshot handed out never changes as the feed goes on, and is shared until the next append', () => {
    const feed = new Feed(initialView('t1'))
    feed.append({ type: 'assistant-start', messageId: 'm' })
    feed.append({ type: 'assistant-delta', messageId: 'm', text: 'Hel' })
    const early = feed.snapshot()
    const json = JSON.stringify(early)
    expect(feed.view).toBe(early)
    feed.append({ type: 'assistant-delta', messageId: 'm', text: 'lo' })
    feed.append({ type: 'assistant-end', messageId: 'm', text: 'Hello', stopReason: 'stop' })
    feed.append(note('after'))
    expect(JSON.stringify(early)).toBe(json)
    expect(feed.snapshot()).not.toBe(early)
    expect(feed.snapshot().transcript.map((e) => e.kind)).toEqual(['assistant'])
    expect(feed.snapshot().transcript[0]).toMatchObject({ text: 'Hello', streaming: false })
    expect(feed.snapshot().seq).toBe(5)
  })
})

describe('feed: resume', () => {
  test.prop([fc.nat(25), fc.integer({ min: 1, max: 8 }), fc.integer({ min: -2, max: 30 })], { numRuns: 300 })(
    'resume returns exactly the missed frames while the ring still holds them, else a snapshot (too old, or ahead of the feed)',
    (appended, ringSize, after) => {
      const feed = new Feed(initialView('t1'), { ringSize })
      const all: Observation[] = []
      for (let i = 0; i < appended; i++) all.push(feed.append(note(`m${i}`)))
      const oldest = Math.max(1, appended - ringSize + 1)
      const r = feed.resume(after)
      if (after > appended || after + 1 < oldest) {
        expect(r).toEqual({ kind: 'snapshot', snapshot: feed.snapshot() })
      } else {
        expect(r.kind).toBe('frames')
        if (r.kind === 'frames') expect(r.frames.map(seqOf)).toEqual(all.filter((o) => o.seq > after).map((o) => o.seq))
      }
    },
  )
  it('a follower that names no seq gets a snapshot', () => {
    const feed = new Feed(initialView('t1'))
    feed.append(note('a'))
    expect(feed.resume(undefined)).toEqual({ kind: 'snapshot', snapshot: feed.snapshot() })
  })
  it('a follower that has seen everything gets no frames', () => {
    const feed = new Feed(initialView('t1'))
    feed.append(note('a'))
    expect(feed.resume(1)).toEqual({ kind: 'frames', frames: [] })
  })
  it('a follower ahead of the feed (after a restart) gets a snapshot', () => {
    const feed = new Feed(initialView('t1'))
    expect(feed.resume(5).kind).toBe('snapshot')
  })
  it('a follower older than the ring gets a snapshot, one just inside it gets the frames', () => {
    const feed = new Feed(initialView('t1'), { ringSize: 3 })
    for (let i = 0; i < 6; i++) feed.append(note(`m${i}`))
    expect(feed.resume(2).kind).toBe('snapshot')
    const r = feed.resume(3)
    expect(r.kind === 'frames' && r.frames.map(seqOf)).toEqual([4, 5, 6])
  })
  const status = (busy: boolean): ObservationInput => ({ type: 'status', live: true, busy, run: 1 })
  it('an idle feed nobody follows keeps only its newest frames: a resume within them gets the same bytes, from further back a snapshot', () => {
    const feed = new Feed(initialView('t1'), { ringSize: 100, idleRingSize: 3 })
    const stop = feed.follow({ send: () => {}, close: () => {} })
    feed.append(status(true))
    for (let i = 0; i < 8; i++) feed.append(note(`m${i}`))
    feed.append(status(false))
    const before = feed.resume(7)
    stop()
    expect(feed.resume(6).kind).toBe('snapshot')
    const r = feed.resume(7)
    expect(r.kind === 'frames' && r.frames.map((f) => f.toString())).toEqual(before.kind === 'frames' && before.frames.map((f) => f.toString()))
    expect(r.kind === 'frames' && r.frames.map(seqOf)).toEqual([8, 9, 10])
    // It grows again with the next run, and resumes across the trim stay exact.
    feed.append(status(true))
    feed.append(note('next'))
    const again = feed.resume(7)
    expect(again.kind === 'frames' && again.frames.map(seqOf)).toEqual([8, 9, 10, 11, 12])
  })
  it('an idle feed nobody follows with no idle ring keeps no frames: a resume at the head gets none, from further back a snapshot', () => {
    const feed = new Feed(initialView('t1'), { ringSize: 100, idleRingSize: 0 })
    const stop = feed.follow({ send: () => {}, close: () => {} })
    feed.append(status(true))
    for (let i = 0; i < 3; i++) feed.append(note(`m${i}`))
    feed.append(status(false))
    expect(feed.resume(4).kind).toBe('frames')
    stop()
    expect(feed.resume(5)).toEqual({ kind: 'frames', frames: [] })
    expect(feed.resume(4).kind).toBe('snapshot')
    // The next run's frames are kept again, from its first.
    feed.append(status(true))
    const r = feed.resume(5)
    expect(r.kind === 'frames' && r.frames.map(seqOf)).toEqual([6])
  })
  it('while a run is in flight, or while someone follows, the whole ring is kept for resume', () => {
    const feed = new Feed(initialView('t1'), { ringSize: 100, idleRingSize: 2 })
    feed.append(status(true))
    for (let i = 0; i < 5; i++) feed.append(note(`m${i}`))
    const stop = feed.follow({ send: () => {}, close: () => {} })
    stop()
    expect(feed.resume(0).kind).toBe('frames')
    feed.follow({ send: () => {}, close: () => {} })
    feed.append(status(false))
    const r = feed.resume(0)
    expect(r.kind === 'frames' && r.frames.map(seqOf)).toEqual([1, 2, 3, 4, 5, 6, 7])
  })
})

/**
 * The mirrors one node keeps (src/host/cluster/node-mirrors.ts): a follow or a take waiting on a mirror
 * that is stopped before it read the log is never left hanging, nor told the thread does not exist.
 */
import { describe, expect, it, vi } from 'vitest'
import { MemoryCluster } from '../../src/host/cluster/memory.js'
import { NodeMirrors } from '../../src/host/cluster/node-mirrors.js'
import type { ThreadLogs } from '../../src/host/cluster/port.js'
import { lastFrame } from '../../src/host/cluster/thread-mirror.js'
import { Feed } from '../../src/host/feed.js'
import { initialView } from '../../src/shared/projection.js'

const ID = 'a thread'

/** A log with one run's first frames in it, as its owner wrote them. */
async function logWithFrames(cluster: MemoryCluster): Promise<number> {
  const feed = new Feed(initialView(ID), {})
  const frame = (input: Parameters<Feed['append']>[0]) => lastFrame(feed, feed.append(input))!.toString('utf8')
  return cluster.engine('owner').logs.append(ID, { kind: 'frames', frames: [frame({ type: 'status', live: true, busy: true, run: 1 }), frame({ type: 'user-message', messageId: 'p1', text: 'hello', run: 1, versions: [], at: 1 })] }, 0)
}

/** The logs, whose first `stalled` reads never catch up (an engine slow to answer). */
function stalling(logs: ThreadLogs, stalled = 1): ThreadLogs {
  let reads = 0
  return { ...logs, read: (...args) => (++reads <= stalled ? { stop() {} } : logs.read(...args)) }
}

/** What the promise came to within `ms`, or `pending`. */
const within = <T>(promise: Promise<T>, ms = 1000) => Promise.race([promise, new Promise<'pending'>((resolve) => setTimeout(() => resolve('pending'), ms))])

const mirrorsOn = (logs: ThreadLogs, holds = false) => new NodeMirrors(logs, { fileView: async () => initialView(ID), owns: () => holds, holds: () => holds })

describe("a node's mirrors", () => {
  it('a follow waiting on a mirror still in its first read, as the node stops its mirrors, is told to retry (not that the thread is unknown)', async () => {
    const cluster = new MemoryCluster()
    await logWithFrames(cluster)
    const mirrors = mirrorsOn(stalling(cluster.engine('a').logs))
    const following = mirrors.follow(ID)
    expect(await within(following, 50)).toBe('pending')
    await mirrors.stop()
    expect(await within(following)).toBe('behind')
    // And any follow after the stop, without a reader started for it.
    expect(await within(mirrors.follow(ID, 1))).toBe('behind')
    expect(mirrors.get(ID)).toBeUndefined()
  })

  it("the base of a feed this node loads, asked as its mirror is dropped in its first read, is the next mirror's fold of the log while the node holds the thread (lost and taken again); none once it does not", async () => {
    const cluster = new MemoryCluster()
    const end = await logWithFrames(cluster)
    let holds = true
    const mirrors = new NodeMirrors(stalling(cluster.engine('a').logs, 3), { fileView: async () => initialView(ID), owns: () => holds, holds: () => holds })
    const base = mirrors.base(ID)
    expect(await within(base, 50)).toBe('pending')
    // Lost and taken again: the base asks the mirror of the new ownership.
    mirrors.drop(ID)
    expect(await within(base, 50)).toBe('pending')
    const second = mirrors.get(ID)!
    // Lost for good: no mirror is started for a feed the loss closes.
    holds = false
    mirrors.drop(ID)
    expect(await within(base)).toBeUndefined()
    expect(second.stopped).toBe(true)
    expect(mirrors.get(ID)).toBeUndefined()

    holds = true
    const again = mirrors.base(ID)
    const stalled = mirrors.get(ID)!
    expect(await within(again, 50)).toBe('pending')
    mirrors.drop(ID)
    expect(await within(again)).toMatchObject({ seq: 2, status: { live: true, busy: true, run: 1 } })
    expect(stalled.stopped).toBe(true)
    expect(mirrors.get(ID)?.position).toBe(end)
    await mirrors.stop()
    expect(await within(mirrors.base(ID))).toBeUndefined()
  })

  it('a mirror nobody follows goes 30 s after it started (a feed\'s base, a take that failed) — or, while the node holds the thread, 30 s after the node lets it go', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    try {
      const cluster = new MemoryCluster()
      await logWithFrames(cluster)
      let holds = false
      const mirrors = new NodeMirrors(cluster.engine('a').logs, { fileView: async () => initialView(ID), owns: () => holds, holds: () => holds })
      // The base of a feed for a thread this node never took: nobody follows its mirror, ever.
      expect((await mirrors.base(ID))?.seq).toBe(2)
      const first = mirrors.get(ID)!
      await vi.advanceTimersByTimeAsync(29_000)
      expect(mirrors.get(ID)).toBe(first)
      await vi.advanceTimersByTimeAsync(1_000)
      expect(mirrors.get(ID)).toBeUndefined()
      expect(first.stopped).toBe(true)

      // Held (the node runs the thread): kept however long nobody follows it; let go, it goes 30 s later at most.
      holds = true
      const held = mirrors.of(ID)
      await held.ready()
      await vi.advanceTimersByTimeAsync(120_000)
      expect(mirrors.get(ID)).toBe(held)
      holds = false
      await vi.advanceTimersByTimeAsync(30_000)
      expect(mirrors.get(ID)).toBeUndefined()

      // Followed: kept while followed, and 30 s after its last follower left.
      const feed = (await mirrors.follow(ID)) as Feed
      const followed = mirrors.get(ID)!
      const unfollow = feed.follow({ send: () => {}, close: () => {} })
      await vi.advanceTimersByTimeAsync(120_000)
      expect(mirrors.get(ID)).toBe(followed)
      unfollow()
      await vi.advanceTimersByTimeAsync(30_000)
      expect(mirrors.get(ID)).toBeUndefined()
    } finally {
      vi.useRealTimers()
    }
  })
})

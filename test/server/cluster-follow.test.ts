/**
 * A tab that moves to another node resumes where it was, even when that node has not read the thread's
 * log as far as the tab has seen: the owner's tabs get each record from its append's acknowledgement,
 * before any other node reads it back, so a tab leaving the owner (its node stopped, fenced, or dead)
 * can be ahead of the node it reaches. A snapshot from that node would take the tab's seq back and
 * then show it the same frames again; it waits for the node to read on, and is refused 503 with
 * Retry-After when the node cannot (docs/flows/cluster.md).
 */
import { describe, expect, it } from 'vitest'
import { MemoryCluster } from '../../src/host/cluster/memory.js'
import type { ClusterEngine } from '../../src/host/cluster/port.js'
import { api, is, SseClient, sleep } from './harness.js'
import { inProcessNodes, threadRanOnce } from './in-process-cluster.js'

/** An engine seam: while `hold()`ed, the records this node reads from the logs wait; `release()` lets them through in order. */
function heldReads() {
  let held: (() => void)[] | undefined
  return {
    hold: () => void (held ??= []),
    release: () => {
      const waiting = held ?? []
      held = undefined
      for (const deliver of waiting) deliver()
    },
    engine: (engine: ClusterEngine): ClusterEngine => ({
      ...engine,
      logs: {
        ...engine.logs,
        read: (threadId, onRecord, caughtUp, after) =>
          engine.logs.read(threadId, (record, position) => (held ? held.push(() => onRecord(record, position)) : onRecord(record, position)), caughtUp, after),
      },
    }),
  }
}

/** The seq of each frame a tab got, in order (a snapshot's too). */
const seqs = (tab: SseClient) => tab.frames.map((f) => Number(f.id))

describe('a tab resuming on a node behind it', () => {
  const { node, tabs } = inProcessNodes('follow')

  async function ownerAheadOfB() {
    const cluster = new MemoryCluster()
    const reads = heldReads()
    const a = await node(cluster, 'na')
    const b = await node(cluster, 'nb', { engine: reads.engine })
    const { tab: onA } = await threadRanOnce(a, 't1', 'hello', tabs)
    // b mirrors the thread (a tab follows it there), up to date with the first run.
    const onB = await SseClient.open(`${b.url}/api/threads/t1/follow`)
    tabs.push(onB)
    await onB.waitFor(is('snapshot'))
    reads.hold()
    expect((await api(a.url, 'POST', '/api/threads/t1/prompt', { message: 'again' })).status).toBe(202)
    await onA.waitFor(is('settled', { run: 2 }))
    const last = Math.max(...seqs(onA))
    // What b's tab has is what b has read: short of what a's tab has.
    expect(Math.max(...seqs(onB))).toBeLessThan(last)
    return { a, b, reads, onA, last }
  }

  it('waits for the node to read the log as far as the tab has seen, then sends the frames after it: no snapshot, no frame twice', async () => {
    const { b, reads, last } = await ownerAheadOfB()
    const resuming = SseClient.open(`${b.url}/api/threads/t1/follow`, { 'last-event-id': String(last) })
    await sleep(100)
    reads.release()
    const moved = await resuming
    tabs.push(moved)
    expect(moved.status).toBe(200)
    // The next frame the thread makes is the first this tab gets.
    expect((await api(b.url, 'POST', '/api/threads/t1/prompt', { message: 'a third time' })).status).toBe(202)
    await moved.waitFor(is('settled', { run: 3 }))
    expect(moved.events()).not.toContain('snapshot')
    expect(seqs(moved)[0]).toBe(last + 1)
    expect(seqs(moved)).toEqual(seqs(moved).map((_, i) => last + 1 + i))
  })

  it('is refused 503 with Retry-After when the node cannot read that far in time, and resumes exactly once it can', async () => {
    const { b, reads, onA, last } = await ownerAheadOfB()
    const refused = await fetch(`${b.url}/api/threads/t1/follow`, { headers: { accept: 'text/event-stream', 'last-event-id': String(last) } })
    expect(refused.status).toBe(503)
    expect(refused.headers.get('retry-after')).toBe('1')
    expect(((await refused.json()) as { code: string }).code).toBe('FOLLOW_BEHIND')
    reads.release()
    const moved = await SseClient.open(`${b.url}/api/threads/t1/follow`, { 'last-event-id': String(last) })
    tabs.push(moved)
    expect(moved.status).toBe(200)
    expect((await api(b.url, 'POST', '/api/threads/t1/prompt', { message: 'a third time' })).status).toBe(202)
    await moved.waitFor(is('settled', { run: 3 }))
    expect(moved.events()).not.toContain('snapshot')
    // Every seq once, in order, and the bytes the owner's tab got for the same seqs.
    expect(seqs(moved)).toEqual(seqs(moved).map((_, i) => last + 1 + i))
    await onA.waitFor(is('settled', { run: 3 }))
    const fromA = new Map(onA.frames.map((f) => [f.id, f.raw]))
    for (const f of moved.frames) expect(f.raw).toBe(fromA.get(f.id))
  })

  it('still gets a snapshot when it resumes past anything the log holds (an id from before the thread was made again)', async () => {
    const { b, reads, last } = await ownerAheadOfB()
    reads.release()
    const moved = await SseClient.open(`${b.url}/api/threads/t1/follow`, { 'last-event-id': String(last + 1000) })
    tabs.push(moved)
    expect(moved.status).toBe(200)
    const snapshot = await moved.waitFor(is('snapshot'))
    expect(Number(snapshot.id)).toBe(last)
  })
})


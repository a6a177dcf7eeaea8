/**
 * A node's reads of the index for threads it does not list yet (src/host/cluster/index-lookups.ts): the
 * watch's word stands over a read's, so a deleted thread is never listed again from a read answered
 * before its delete; requests share one read, and none waits on the engine for long.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { IndexLookups } from '../../src/host/cluster/index-lookups.js'
import type { IndexRow, ThreadIndex } from '../../src/host/cluster/port.js'

const row = (threadId: string): IndexRow => ({ threadId, title: threadId, model: 'demo', createdAt: 1, updatedAt: 1, run: 0, seq: 0 })

/** An index whose reads are answered when the test says, counted. */
function slowIndex() {
  const reads: Array<{ threadId: string; answer: (found: { row: IndexRow; revision: number } | undefined) => void }> = []
  const index = {
    get: (threadId: string) => new Promise<{ row: IndexRow; revision: number } | undefined>((answer) => reads.push({ threadId, answer })),
  } as unknown as ThreadIndex
  return { index, reads }
}

function node() {
  const listed = new Map<string, number>()
  return { listed, lists: (threadId: string) => listed.has(threadId), heard: (r: IndexRow, revision: number) => void listed.set(r.threadId, revision) }
}

describe('reads of the index for a thread a node does not list', () => {
  afterEach(() => vi.useRealTimers())

  it('list the row found; requests naming the thread meanwhile share the one read', async () => {
    const { index, reads } = slowIndex()
    const here = node()
    const lookups = new IndexLookups(index, here)
    const first = lookups.lookUp('made elsewhere')
    const second = lookups.lookUp('made elsewhere')
    expect(reads).toHaveLength(1)
    reads[0].answer({ row: row('made elsewhere'), revision: 4 })
    await Promise.all([first, second])
    expect(here.listed.get('made elsewhere')).toBe(4)
    // Listed: no read at all.
    await lookups.lookUp('made elsewhere')
    expect(reads).toHaveLength(1)
  })

  it('a row read while the watch heard the thread deleted, or at or below a delete it heard, is not listed again', async () => {
    const { index, reads } = slowIndex()
    const here = node()
    const lookups = new IndexLookups(index, here)
    // Read before the delete, answered after the watch brought it.
    const racing = lookups.lookUp('deleted')
    lookups.noticed('deleted', 7)
    reads[0].answer({ row: row('deleted'), revision: 6 })
    await racing
    expect(here.lists('deleted')).toBe(false)
    // Read after it, answered by a replica behind the delete.
    const behind = lookups.lookUp('deleted')
    reads[1].answer({ row: row('deleted'), revision: 6 })
    await behind
    expect(here.lists('deleted')).toBe(false)
    // Made again under the id since: listed.
    const again = lookups.lookUp('deleted')
    reads[2].answer({ row: row('deleted'), revision: 9 })
    await again
    expect(here.listed.get('deleted')).toBe(9)
  })

  it("this node's own delete holds until the watch's echo says at which revision", async () => {
    const { index, reads } = slowIndex()
    const here = node()
    const lookups = new IndexLookups(index, here)
    lookups.noticed('mine', Number.MAX_SAFE_INTEGER)
    const before = lookups.lookUp('mine')
    reads[0].answer({ row: row('mine'), revision: 50 })
    await before
    expect(here.lists('mine')).toBe(false)
    lookups.noticed('mine', 51)
    const after = lookups.lookUp('mine')
    reads[1].answer({ row: row('mine'), revision: 52 })
    await after
    expect(here.listed.get('mine')).toBe(52)
  })

  it('an engine that does not answer leaves the request as the node stands after a second', async () => {
    vi.useFakeTimers()
    const { index } = slowIndex()
    const here = node()
    let over = false
    void new IndexLookups(index, here).lookUp('anything').then(() => (over = true))
    await vi.advanceTimersByTimeAsync(999)
    expect(over).toBe(false)
    await vi.advanceTimersByTimeAsync(1)
    expect(over).toBe(true)
    expect(here.lists('anything')).toBe(false)
  })
})

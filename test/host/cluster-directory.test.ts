/**
 * A node's list of threads as the cluster's index gives it (src/host/cluster-directory.ts): a notice of
 * an id this node made again, older than the row it wrote, is an older thread's heard late and reaches
 * nothing — however late it comes; one past that row is the index's word.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { ClusterDirectory, type DirectorySlots } from '../../src/host/cluster-directory.js'
import type { ThreadRow } from '../../src/host/store/port.js'
import type { ThreadSlot } from '../../src/host/thread-slot.js'

const ID = 'd1'

/** Slots at rest (no runtime), as the registry keeps them: what the directory added and what it discarded. */
function slots() {
  const held = new Map<string, ThreadSlot>()
  const discarded: ThreadRow[] = []
  const at: DirectorySlots = {
    get: (threadId) => held.get(threadId),
    add: (row) => {
      const slot = { threadId: row.threadId, record: row, thread: undefined, building: false, idle: async () => {} } as unknown as ThreadSlot
      held.set(row.threadId, slot)
      return slot
    },
    discard: (slot) => {
      held.delete(slot.threadId)
      discarded.push(slot.record)
    },
  }
  return { at, held, discarded }
}

const row = (createdAt: number, title: string): ThreadRow => ({ threadId: ID, title, model: 'demo', createdAt, updatedAt: createdAt, run: 0, seq: 0 })

describe("a node's cluster directory", () => {
  afterEach(() => void vi.useRealTimers())

  it('a thread made here whose row the index took at revision 10: an older thread\'s row (7) and delete (8) heard after it, a minute later, reach nothing; a delete at 12 forgets it', () => {
    vi.useFakeTimers({ toFake: ['performance', 'Date'] })
    const { at, held, discarded } = slots()
    const directory = new ClusterDirectory(at)
    at.add(row(2000, 'made again here'))
    directory.made(ID, 2000)
    directory.indexed(ID, 2000, 10)
    // The index's notices late (a watch behind, an engine away): no time ends the wait, the revisions do.
    vi.advanceTimersByTime(60_000)
    directory.adopt(row(1000, 'the old thread, renamed'), 7)
    directory.forget(ID, 8)
    expect(held.get(ID)?.record.title).toBe('made again here')
    expect(discarded).toEqual([])
    // Its own row back (10): the index has it; then another node deletes it.
    directory.adopt(row(2000, 'made again here'), 10)
    directory.forget(ID, 12)
    expect(held.has(ID)).toBe(false)
    expect(discarded.map((r) => r.title)).toEqual(['made again here'])
  })

  it('before the index says at which revision it took the row: a delete, or a row made at another time, is an older thread\'s; the row itself back ends the wait', () => {
    const { at, held } = slots()
    const directory = new ClusterDirectory(at)
    at.add(row(2000, 'made again here'))
    directory.made(ID, 2000)
    directory.forget(ID, 8)
    directory.adopt(row(1000, 'the old thread'), 7)
    expect(held.get(ID)?.record.title).toBe('made again here')
    directory.adopt({ ...row(2000, 'renamed here'), run: 1 }, 11)
    // The index is past it: its next notices are the index's word, whatever revision this node's write reports after.
    directory.indexed(ID, 2000, 10)
    directory.adopt(row(3000, 'made again elsewhere'), 14)
    expect(held.get(ID)?.record.title).toBe('made again elsewhere')
  })

  it('a row the index never took (dropped: the node lost the thread first) shuts out nothing after', () => {
    const { at, held } = slots()
    const directory = new ClusterDirectory(at)
    at.add(row(2000, 'made here'))
    directory.made(ID, 2000)
    directory.indexed(ID, 2000, undefined)
    directory.forget(ID, 9)
    expect(held.has(ID)).toBe(false)
  })

  it("the answer to an older thread's put under the id, come late, says nothing of the thread made here since", () => {
    const { at, held } = slots()
    const directory = new ClusterDirectory(at)
    at.add(row(2000, 'made again here'))
    directory.made(ID, 2000)
    // The deleted thread's row (made at 1000) went in at 5, its delete at 6; that put's answer comes only now.
    directory.indexed(ID, 1000, 5)
    directory.forget(ID, 6)
    directory.indexed(ID, 1000, undefined)
    directory.forget(ID, 6)
    expect(held.get(ID)?.record.title).toBe('made again here')
  })
})

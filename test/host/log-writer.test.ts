/**
 * The one writer of a thread's log (src/host/cluster/log-writer.ts): records in order, one append in
 * flight, frames piling up behind it joined — and `flushed()`, what a command's answer waits for,
 * waits for the records pushed before it only, never for a run streaming on after it.
 */
import { describe, expect, it } from 'vitest'
import { LogWriter } from '../../src/host/cluster/log-writer.js'
import { Fenced, type ThreadLogs, type ThreadRecord } from '../../src/host/cluster/port.js'

/** A log whose appends land only when the test lets them (`land()`), in order. */
function heldLog() {
  const records: ThreadRecord[] = []
  const pending: (() => void)[] = []
  const logs: ThreadLogs = {
    last: async () => records.length,
    append: (threadId, record, expected) =>
      new Promise((resolve, reject) =>
        pending.push(() => {
          if (expected !== records.length) return reject(new Fenced(threadId, `wrong last sequence: ${records.length}`))
          records.push(structuredClone(record))
          resolve(records.length)
        }),
      ),
    read: () => ({ stop() {} }),
    checkpoint: async () => undefined,
    forget: async () => {},
    keepCheckpoint: async () => {},
  }
  const land = async () => {
    pending.shift()?.()
    await new Promise((resolve) => setTimeout(resolve, 0))
  }
  return { logs, records, land, pending }
}

describe('the log writer', () => {
  it('a flush waits for the records pushed before it, not for the frames a run keeps pushing after it', async () => {
    const log = heldLog()
    const writer = new LogWriter('t', log.logs, 0, () => {})
    writer.push({ kind: 'prompt', op: 'accepted', messageId: 'm1', text: 'hi' })
    const accepted = writer.flushed()
    let answered = false
    void accepted.then(() => (answered = true))
    // The run starts streaming while the accepted record is on its way.
    writer.push({ kind: 'frames', frames: ['a'] })
    writer.push({ kind: 'frames', frames: ['b'] })
    await log.land()
    expect(answered).toBe(true)
    expect(await accepted).toBe(true)
    // The frames went together in the next append; a flush now waits for them.
    const frames = writer.flushed()
    writer.push({ kind: 'frames', frames: ['c'] })
    await log.land()
    expect(await frames).toBe(true)
    expect(log.records).toEqual([
      { kind: 'prompt', op: 'accepted', messageId: 'm1', text: 'hi' },
      { kind: 'frames', frames: ['a', 'b'] },
    ])
    await log.land()
    expect(log.records.at(-1)).toEqual({ kind: 'frames', frames: ['c'] })
    expect(await writer.flushed()).toBe(true)
  })

  it('what piles up behind an append in flight goes in the next one, whatever it is; a flush up to a record waits for that record, not for what follows it', async () => {
    const log = heldLog()
    const appended: [ThreadRecord, number][] = []
    const writer = new LogWriter('t', log.logs, 0, () => {}, undefined, (record, position) => appended.push([record, position]))
    writer.push({ kind: 'frames', frames: ['a'] })
    // While the run's frame is on its way, a prompt is accepted and the next run starts streaming.
    writer.push({ kind: 'prompt', op: 'accepted', messageId: 'm2', text: 'next' })
    const accepted = writer.made
    writer.push({ kind: 'frames', frames: ['b'] })
    writer.push({ kind: 'frames', frames: ['c'] })
    writer.push({ kind: 'prompt', op: 'settled', messageId: 'm1' })
    expect(log.pending).toHaveLength(1)
    await log.land()
    // The four went in one append: two round trips, not five.
    expect(log.pending).toHaveLength(1)
    writer.push({ kind: 'frames', frames: ['d'] })
    let all = false
    void writer.flushed().then(() => (all = true))
    // The accepted prompt's flush, asked after the whole log's, does not wait behind it.
    let prompt = false
    void writer.flushed(accepted).then(() => (prompt = true))
    await log.land()
    expect(prompt).toBe(true)
    expect(all).toBe(false)
    await log.land()
    expect(all).toBe(true)
    expect(log.records.slice(0, 2)).toEqual([
      { kind: 'frames', frames: ['a'] },
      {
        kind: 'batch',
        records: [{ kind: 'prompt', op: 'accepted', messageId: 'm2', text: 'next' }, { kind: 'frames', frames: ['b', 'c'] }, { kind: 'prompt', op: 'settled', messageId: 'm1' }],
      },
    ])
    // Each told once it is in the log, at its position, in order (the owner's followers read them from here).
    expect(appended.map(([, position]) => position)).toEqual([1, 2, 3])
  })

  it('a deleted record goes in an append of its own: what piled up before it in the one before, what follows in the one after', async () => {
    const log = heldLog()
    const writer = new LogWriter('t', log.logs, 0, () => {})
    writer.push({ kind: 'frames', frames: ['a'] })
    // Behind the append in flight: the dispose's last frames, the delete, a new thread's first frame.
    writer.push({ kind: 'frames', frames: ['settled'] })
    writer.push({ kind: 'prompt', op: 'settled', messageId: 'm1', withdrawn: true })
    writer.push({ kind: 'deleted', seq: 2 })
    writer.push({ kind: 'frames', frames: ['new'] })
    const all = writer.flushed()
    for (let k = 0; k < 4; k++) await log.land()
    expect(await all).toBe(true)
    expect(log.records).toEqual([
      { kind: 'frames', frames: ['a'] },
      { kind: 'batch', records: [{ kind: 'frames', frames: ['settled'] }, { kind: 'prompt', op: 'settled', messageId: 'm1', withdrawn: true }] },
      { kind: 'deleted', seq: 2 },
      { kind: 'frames', frames: ['new'] },
    ])
  })

  it('every flush waiting when the writer is fenced resolves false, and nothing more is written', async () => {
    const log = heldLog()
    let fenced = 0
    const writer = new LogWriter('t', log.logs, 1, () => void fenced++) // believes a record is there that is not
    writer.push({ kind: 'frames', frames: ['late'] })
    const flushed = writer.flushed()
    await log.land()
    expect(await flushed).toBe(false)
    expect(fenced).toBe(1)
    writer.push({ kind: 'frames', frames: ['more'] })
    expect(log.pending).toHaveLength(0)
    expect(await writer.flushed()).toBe(false)
  })

  it('a writer lost while an append is on its way answers that append by its outcome: landed, true; what was pushed after it, false', async () => {
    const log = heldLog()
    const writer = new LogWriter('t', log.logs, 0, () => {})
    writer.push({ kind: 'deleted', seq: 7 })
    const deleted = writer.flushed()
    // The lease is lost before the engine answers; the engine still takes the append (it checks positions, not leases).
    writer.lose()
    writer.push({ kind: 'frames', frames: ['after'] })
    expect(await writer.flushed()).toBe(false)
    let settled = false
    void deleted.then(() => (settled = true))
    await new Promise((resolve) => setTimeout(resolve, 0))
    expect(settled).toBe(false)
    await log.land()
    expect(await deleted).toBe(true)
    expect(log.records).toEqual([{ kind: 'deleted', seq: 7 }])
  })

  it('a writer lost while an append is on its way that the engine refuses answers it false', async () => {
    const log = heldLog()
    const writer = new LogWriter('t', log.logs, 1, () => {}) // believes a record is there that is not: the append is refused
    writer.push({ kind: 'deleted', seq: 7 })
    const deleted = writer.flushed()
    writer.lose()
    await log.land()
    expect(await deleted).toBe(false)
  })

  /**
   * A log whose first append gets no answer (the connection dropped): it `landed`, or it did not and
   * `another` node appended since (or nobody did). Each id is known to its duplicate window, which answers
   * before the position is checked.
   */
  function droppedAnswer(first: { landed: boolean; another?: boolean }) {
    const records: ThreadRecord[] = []
    const ids = new Map<string, number>()
    let attempts = 0
    const logs: ThreadLogs = {
      last: async () => records.length,
      append: async (threadId, record, expected, id) => {
        if (id !== undefined && ids.has(id)) return ids.get(id)!
        if (attempts++ === 0) {
          if (first.landed) ids.set(id!, records.push(structuredClone(record)))
          else if (first.another) records.push({ kind: 'frames', frames: ["another node's"] })
          throw new Error('connection closed')
        }
        if (expected !== records.length) throw new Fenced(threadId, `wrong last sequence: ${records.length}`)
        ids.set(id!, records.push(structuredClone(record)))
        return records.length
      },
      read: () => ({ stop() {} }),
      checkpoint: async () => undefined,
      forget: async () => {},
      keepCheckpoint: async () => {},
    }
    return { logs, records }
  }

  it('a writer lost while an append is on its way whose answer the connection dropped asks the engine under its id: it landed — true, and it is in the log once', async () => {
    const log = droppedAnswer({ landed: true })
    const writer = new LogWriter('t', log.logs, 0, () => {})
    writer.push({ kind: 'deleted', seq: 7 })
    const deleted = writer.flushed()
    writer.lose()
    expect(await deleted).toBe(true)
    expect(log.records).toEqual([{ kind: 'deleted', seq: 7 }])
  })

  it('… and when it never landed, false — whether another node appended since or nobody did, the stopped writer writes nothing', async () => {
    for (const another of [true, false]) {
      const log = droppedAnswer({ landed: false, another })
      const writer = new LogWriter('t', log.logs, 0, () => {})
      writer.push({ kind: 'deleted', seq: 7 })
      const deleted = writer.flushed()
      writer.lose()
      expect(await deleted).toBe(false)
      expect(log.records).toEqual(another ? [{ kind: 'frames', frames: ["another node's"] }] : [])
    }
  })

  it('an append that failed without an answer before the writer was lost, lost while waiting to send it again, is answered by whether it landed', async () => {
    const log = droppedAnswer({ landed: true })
    const writer = new LogWriter('t', log.logs, 0, () => {})
    writer.push({ kind: 'deleted', seq: 7 })
    const deleted = writer.flushed()
    // The connection drops first; the lease is lost while the writer waits to send the record again.
    await new Promise((resolve) => setTimeout(resolve, 10))
    writer.lose()
    expect(await deleted).toBe(true)
    expect(log.records).toEqual([{ kind: 'deleted', seq: 7 }])
  })
})

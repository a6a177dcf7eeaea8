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
  }
  /** Resolves once an append has been sent (the writer sends what a turn pushed at the end of that turn). */
  const sent = async () => {
    while (pending.length === 0) await new Promise((resolve) => setImmediate(resolve))
  }
  const land = async () => {
    await sent()
    pending.shift()!()
    await new Promise((resolve) => setTimeout(resolve, 0))
  }
  return { logs, records, land, sent, pending }
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
    await log.sent()
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

  it('what one turn pushes to an idle writer goes in one append, and what piles up behind it in the next: a flush waits for one append each', async () => {
    const log = heldLog()
    const appended: [ThreadRecord, number][] = []
    const writer = new LogWriter('t', log.logs, 0, () => {}, undefined, (record, position) => appended.push([record, position]))
    // A prompt admitted and the run it starts, in one turn: one append, not two in a row.
    writer.push({ kind: 'prompt', op: 'accepted', messageId: 'm1', text: 'hi' })
    writer.push({ kind: 'frames', frames: ['a'] })
    writer.push({ kind: 'frames', frames: ['b'] })
    const first = writer.flushed()
    await log.sent()
    // While it is on its way, a prompt settles and more frames come: together in the next one.
    writer.push({ kind: 'frames', frames: ['c'] })
    writer.push({ kind: 'prompt', op: 'settled', messageId: 'm1' })
    writer.push({ kind: 'frames', frames: ['d'] })
    const second = writer.flushed()
    expect(log.pending).toHaveLength(1)
    await log.land()
    expect(await first).toBe(true)
    await log.land()
    expect(await second).toBe(true)
    expect(log.records).toEqual([
      { kind: 'batch', records: [{ kind: 'prompt', op: 'accepted', messageId: 'm1', text: 'hi' }, { kind: 'frames', frames: ['a', 'b'] }] },
      { kind: 'batch', records: [{ kind: 'frames', frames: ['c'] }, { kind: 'prompt', op: 'settled', messageId: 'm1' }, { kind: 'frames', frames: ['d'] }] },
    ])
    // Each told once it is in the log, at its position, in order.
    expect(appended.map(([, position]) => position)).toEqual([1, 2])
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
    await new Promise((resolve) => setImmediate(resolve))
    expect(log.pending).toHaveLength(0)
    expect(await writer.flushed()).toBe(false)
  })
})

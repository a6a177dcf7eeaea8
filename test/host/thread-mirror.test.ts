/**
 * A thread's log as any node folds it (src/host/cluster/thread-mirror.ts), started from the log's
 * newest checkpoint: it reads only the records after it and ends as a mirror that read the whole log —
 * the same view, prompts and keys, and the owner's bytes for every frame after. The owner keeps one
 * every so many records while the thread is at rest (docs/flows/cluster.md).
 */
import { describe, expect, it } from 'vitest'
import { MemoryCluster } from '../../src/host/cluster/memory.js'
import { EngineAway, type ThreadLogs, type ThreadRecord } from '../../src/host/cluster/port.js'
import { CHECKPOINT_FORMAT } from '../../src/host/cluster/mirror-state.js'
import { lastFrame, observationOf, ThreadMirror } from '../../src/host/cluster/thread-mirror.js'
import { Feed } from '../../src/host/feed.js'
import type { ObservationInput } from '../../src/schemas/index.js'
import { initialView } from '../../src/shared/projection.js'

const ID = 'a thread'

/** The owner's side: its feed encodes each observation once, and each frame goes into the log as it would. */
function owner(cluster: MemoryCluster) {
  const feed = new Feed(initialView(ID), {})
  const logs = cluster.engine('owner').logs
  let last = 0
  const append = async (record: ThreadRecord) => (last = await logs.append(ID, record, last))
  /** Every frame the owner encoded, in order. */
  const produced: string[] = []
  const frame = (input: ObservationInput) => {
    const bytes = lastFrame(feed, feed.append(input))!.toString('utf8')
    produced.push(bytes)
    return bytes
  }
  return {
    append,
    produced,
    frames: (...inputs: ObservationInput[]) => append({ kind: 'frames', frames: inputs.map(frame) }),
    /** One run: its user message, `deltas` records of streamed text, its end. */
    async run(run: number, deltas: number) {
      const messageId = `m${run}`
      await append({ kind: 'prompt', op: 'accepted', messageId: `p${run}`, text: `prompt ${run}`, key: { key: `k${run}`, fingerprint: `f${run}`, run, queued: false } })
      await this.frames({ type: 'status', live: true, busy: true, run }, { type: 'user-message', messageId: `p${run}`, text: `prompt ${run}`, run, versions: [], at: run })
      await this.frames({ type: 'assistant-start', messageId, at: run })
      for (let k = 0; k < deltas; k++) await this.frames({ type: 'assistant-delta', messageId, text: `word ${k} ` })
      await this.frames({ type: 'assistant-end', messageId, text: 'done', stopReason: 'stop' }, { type: 'settled', run, aborted: false }, { type: 'status', live: true, busy: false, run })
      await append({ kind: 'prompt', op: 'settled', messageId: `p${run}` })
    },
    get last() {
      return last
    },
  }
}

/** The logs as a mirror reads them, noting from where it read and how many records it was given. */
function watched(logs: ThreadLogs) {
  const seen = { after: -1, records: 0 }
  const wrapped: ThreadLogs = {
    ...logs,
    read: (threadId, onRecord, caughtUp, after) => {
      seen.after = after ?? 0
      return logs.read(threadId, (record, position, previous) => (seen.records++, onRecord(record, position, previous)), caughtUp, after)
    },
  }
  return { logs: wrapped, seen }
}

function collectedLog() {
  const lines: string[] = []
  return { lines, log: (level: string, message: string) => void lines.push(`${level}: ${message}`) }
}

/** What a mirror holds, to compare two. */
const held = (mirror: ThreadMirror) => ({ view: mirror.feed!.snapshot(), open: [...mirror.openPrompts], keyed: [...mirror.keyed], position: mirror.position })

/** Folded up to `position`, and any checkpoint that fold made kept (its JSON is made on the next turn). */
async function folded(mirror: ThreadMirror, position: number): Promise<void> {
  await mirror.reached(position)
  await new Promise((resolve) => setImmediate(resolve))
}

/** A follower of `mirror` gets exactly the bytes the owner encodes for its next run, each once. */
async function expectOwnersBytes(writer: ReturnType<typeof owner>, mirror: ThreadMirror): Promise<void> {
  const sent: string[] = []
  mirror.feed!.follow({ send: (frame) => void sent.push(frame.toString('utf8')), close: () => {} })
  const before = writer.produced.length
  await writer.run(5, 2)
  await mirror.reached(writer.last)
  expect(sent).toEqual(writer.produced.slice(before))
}

/** The logs, whose readers can be stalled (they deliver nothing) and then started again from the last record each delivered. */
function stalling(logs: ThreadLogs) {
  let stalled = false
  const restarts: Array<() => void> = []
  const wrapped: ThreadLogs = {
    ...logs,
    read: (threadId, onRecord, caughtUp, after = 0) => {
      let next = after
      const deliver = (record: ThreadRecord, position: number, previous?: number) => {
        if (stalled) return
        next = position
        onRecord(record, position, previous)
      }
      let inner = logs.read(threadId, deliver, caughtUp, after)
      restarts.push(() => {
        inner.stop()
        inner = logs.read(threadId, deliver, () => {}, next)
      })
      return { stop: () => inner.stop() }
    },
  }
  return {
    logs: wrapped,
    stall: () => void (stalled = true),
    restart: () => {
      stalled = false
      for (const restart of restarts.splice(0)) restart()
    },
  }
}

async function started(mirror: ThreadMirror): Promise<ThreadMirror> {
  mirror.start()
  await mirror.ready()
  return mirror
}

describe('a thread mirror and its log\'s checkpoints', () => {
  it('started on a log with a checkpoint, reads only the records after it and holds what a mirror of the whole log holds; the frames after fold to the owner\'s bytes', async () => {
    const cluster = new MemoryCluster()
    const writer = owner(cluster)
    // Reads every record as it lands: the log is trimmed below the checkpoint before the newest.
    const whole = watched(cluster.engine('c').logs)
    const c = await started(new ThreadMirror(ID, whole.logs, async () => initialView(ID)))
    const keeping = await started(new ThreadMirror(ID, cluster.engine('a').logs, async () => initialView(ID), { checkpoints: { every: 20, writes: () => true } }))
    for (let run = 1; run <= 3; run++) await writer.run(run, 12)
    // An extension's question left open, its title longer than the API would take from a client.
    await writer.frames({ type: 'extension-ui-request', id: 'd1', blocking: true, dialog: { method: 'confirm', title: 'Deploy? '.repeat(400), message: 'to prod' }, origin: { kind: 'extension', name: 'deploy' } })
    for (let k = 0; k < 20; k++) await writer.frames({ type: 'notify', message: `waiting ${k}`, level: 'info' })
    // One prompt left open (accepted, no fate yet), after the last checkpoint.
    await writer.append({ kind: 'prompt', op: 'accepted', messageId: 'p4', text: 'prompt 4', key: { key: 'k4', fingerprint: 'f4', run: 4, queued: false } })
    await folded(keeping, writer.last)
    const checkpoint = cluster.checkpoints.get(ID)
    expect(checkpoint?.position).toBeGreaterThan(0)
    expect(checkpoint!.position).toBeLessThan(writer.last)

    const log = collectedLog()
    const fromCheckpoint = watched(cluster.engine('b').logs)
    const b = await started(new ThreadMirror(ID, fromCheckpoint.logs, async () => initialView(ID), { log: log.log }))
    await c.reached(writer.last)
    expect(fromCheckpoint.seen).toEqual({ after: checkpoint!.position, records: writer.last - checkpoint!.position })
    expect(whole.seen).toEqual({ after: 0, records: writer.last })
    expect(held(b)).toEqual(held(c))
    expect(held(b)).toEqual(held(keeping))
    expect(b.openPrompts.get('p4')).toBe('prompt 4')
    expect(b.feed!.snapshot().openDialogs.map((d) => d.id)).toEqual(['d1'])
    expect(b.keyed.get('k2')).toEqual({ messageId: 'p2', fingerprint: 'f2', run: 2, queued: false })

    // A follower of b gets the owner's bytes for the next frames, each once.
    await expectOwnersBytes(writer, b)
    await c.reached(writer.last)
    expect(b.feed!.snapshot()).toEqual(c.feed!.snapshot())
    expect(log.lines).toEqual([])
    for (const m of [keeping, b, c]) m.stop()
  })

  it('a checkpoint it cannot read (not JSON, another format, or a view of another shape) is passed over, said in the log: it reads the log from its first record', async () => {
    const cluster = new MemoryCluster()
    const writer = owner(cluster)
    await writer.run(1, 3)
    const whole = await started(new ThreadMirror(ID, cluster.engine('c').logs, async () => initialView(ID)))
    const lists = { openPrompts: [], keyed: [], keyOf: [] }
    for (const state of [
      '{"view":',
      JSON.stringify({ format: CHECKPOINT_FORMAT + 1, view: initialView(ID, [], 4), ...lists }),
      JSON.stringify({ format: CHECKPOINT_FORMAT, view: { seq: 4 }, ...lists }),
      JSON.stringify({ format: CHECKPOINT_FORMAT, view: initialView(ID, [], 4), openPrompts: [1], keyed: [], keyOf: [] }),
      // Restore, but the first reply after either would throw in the fold: a view without its transcript, or with a hole in it.
      JSON.stringify({ format: CHECKPOINT_FORMAT, view: { ...initialView(ID, [], 4), transcript: undefined }, ...lists }),
      JSON.stringify({ format: CHECKPOINT_FORMAT, view: { ...initialView(ID, [], 4), transcript: [null] }, ...lists }),
    ]) {
      cluster.checkpoints.set(ID, { position: 4, state })
      const log = collectedLog()
      const from = watched(cluster.engine('b').logs)
      const b = await started(new ThreadMirror(ID, from.logs, async () => initialView(ID), { log: log.log }))
      expect(from.seen.after).toBe(0)
      expect(held(b)).toEqual(held(whole))
      expect(log.lines).toEqual([expect.stringMatching(/the log's checkpoint at 4 is not one this node reads \(.+\); reading the log from its first record/)])
      b.stop()
    }
    whole.stop()
  })

  it('on a log trimmed past where it starts (the engine away when it asked for the checkpoint) reads again from the newest checkpoint — asking again when a read fails — said in the log, and holds what a mirror of the whole log holds', async () => {
    const cluster = new MemoryCluster()
    const writer = owner(cluster)
    const whole = await started(new ThreadMirror(ID, cluster.engine('c').logs, async () => initialView(ID)))
    const keeping = await started(new ThreadMirror(ID, cluster.engine('a').logs, async () => initialView(ID), { checkpoints: { every: 5, writes: () => true } }))
    // One checkpoint at each run's end (the thread at rest), each kept before the next run.
    for (let run = 1; run <= 4; run++) {
      await writer.run(run, 12)
      await folded(keeping, writer.last)
    }
    await whole.reached(writer.last)
    // Trimmed: the log holds the last run or so, from the checkpoint before the newest (one at each run's end).
    expect(cluster.logs.get(ID)!.length).toBeLessThan(writer.last / 2)

    const logs = cluster.engine('b').logs
    // Its first ask finds the engine away, its second is not read in time (the object being replaced): the third is read.
    const failures: Error[] = [new EngineAway(), new Error('the checkpoint x was not read within 5000 ms')]
    const log = collectedLog()
    const from = watched({
      ...logs,
      checkpoint: async (threadId) => {
        const failure = failures.shift()
        if (failure) throw failure
        return logs.checkpoint(threadId)
      },
    })
    const b = await started(new ThreadMirror(ID, from.logs, async () => initialView(ID), { log: log.log }))
    expect(b.stopped).toBe(false)
    expect(held(b)).toEqual(held(whole))
    expect(from.seen.after).toBe(cluster.checkpoints.get(ID)!.position)
    expect(log.lines).toEqual([expect.stringMatching(/the log no longer holds the records after 0 \(trimmed below a checkpoint\); reading it again from its newest checkpoint/)])

    // It follows on: a follower gets the owner's bytes for the next run.
    await expectOwnersBytes(writer, b)
    for (const m of [keeping, whole, b]) m.stop()
  })

  it('on a log trimmed past its start with no checkpoint it can read, shows the thread from its session file at the seq the log goes on from, said in the log; the frames after are the owner\'s', async () => {
    const cluster = new MemoryCluster()
    const writer = owner(cluster)
    const keeping = await started(new ThreadMirror(ID, cluster.engine('a').logs, async () => initialView(ID), { checkpoints: { every: 5, writes: () => true } }))
    // One checkpoint at each run's end (the thread at rest), each kept before the next run.
    for (let run = 1; run <= 4; run++) {
      await writer.run(run, 12)
      await folded(keeping, writer.last)
    }
    const first = cluster.logs.get(ID)!.find((record) => record.kind === 'frames') as Extract<ThreadRecord, { kind: 'frames' }>
    const fromFile = initialView(ID, [{ kind: 'user', messageId: 'p1', text: 'prompt 1', run: 1, versions: [], at: 1 }])
    const log = collectedLog()
    const logs = cluster.engine('b').logs
    // Another version's checkpoint: not one this node reads.
    const other = { position: cluster.checkpoints.get(ID)!.position, state: JSON.stringify({ format: CHECKPOINT_FORMAT + 1 }) }
    const b = await started(new ThreadMirror(ID, { ...logs, checkpoint: async () => other }, async () => fromFile, { log: log.log }))
    expect(b.position).toBe(writer.last)
    // The seqs are the owner's: the feed went on from the first frame the log still holds.
    expect(b.feed!.seq).toBe(keeping.feed!.seq)
    expect(b.feed!.snapshot().transcript[0]).toEqual(fromFile.transcript[0])
    expect(observationOf(first.frames[0]).seq).toBeGreaterThan(1)
    expect(log.lines).toEqual([
      expect.stringMatching(/checkpoint at \d+ is not one this node reads/),
      expect.stringMatching(/no longer holds the records after 0/),
      expect.stringMatching(/checkpoint at \d+ is not one this node reads/),
      expect.stringMatching(/error: .*no checkpoint this node reads covers the records the log no longer holds after 0; the thread is shown from its session file/),
    ])
    // A follower gets the owner's bytes for the next run.
    await expectOwnersBytes(writer, b)
    for (const m of [keeping, b]) m.stop()
  })

  it('fallen behind the trim while live (its reader stalled), reads again from the newest checkpoint: its followers resume on the new feed, and a wait for the log\'s end is answered when that checkpoint is at the end', async () => {
    const cluster = new MemoryCluster()
    const writer = owner(cluster)
    const keeping = await started(new ThreadMirror(ID, cluster.engine('a').logs, async () => initialView(ID), { checkpoints: { every: 5, writes: () => true } }))
    await writer.run(1, 3)
    await folded(keeping, writer.last)
    const stalled = stalling(cluster.engine('b').logs)
    const b = await started(new ThreadMirror(ID, stalled.logs, async () => initialView(ID)))
    let closed = 0
    b.feed!.follow({ send: () => {}, close: () => void closed++ })
    stalled.stall()
    for (let run = 2; run <= 4; run++) {
      await writer.run(run, 3)
      await folded(keeping, writer.last)
    }
    // At rest, more records until the newest checkpoint is at the log's last one.
    for (let k = 0; cluster.checkpoints.get(ID)?.position !== writer.last && k < 10; k++) {
      await writer.frames({ type: 'notify', message: `after ${k}`, level: 'info' })
      await folded(keeping, writer.last)
    }
    expect(cluster.checkpoints.get(ID)?.position).toBe(writer.last)
    // A take waits for the log's end; the reader starts again from where it was (a consumer after a reconnection).
    const reaching = b.reached(writer.last)
    stalled.restart()
    expect(await Promise.race([reaching, new Promise((resolve) => setTimeout(() => resolve('pending'), 500))])).toBe(true)
    expect(closed).toBe(1)
    expect(held(b)).toEqual(held(keeping))
    for (const m of [keeping, b]) m.stop()
  })

  it('a gap taken waits for its next frame; a deleted record before it starts the thread made again empty, not from the session file', async () => {
    const cluster = new MemoryCluster()
    const writer = owner(cluster)
    await writer.frames({ type: 'status', live: true, busy: false, run: 0 }, { type: 'notify', message: 'one', level: 'info' })
    await writer.frames({ type: 'notify', message: 'two', level: 'info' })
    await writer.append({ kind: 'prompt', op: 'accepted', messageId: 'p1', text: 'hi' })
    const deleted = await writer.append({ kind: 'deleted', seq: 3 })
    // The thread made again under the id: its frames after the deleted one's seq.
    const again = new Feed(initialView(ID, [], 3), {})
    const frame = lastFrame(again, again.append({ type: 'notify', message: 'new thread', level: 'info', persist: true }))!.toString('utf8')
    const last = await cluster.engine('owner').logs.append(ID, { kind: 'frames', frames: [frame] }, deleted)
    // Two checkpoints of another version: the records up to the first are trimmed.
    const logs = cluster.engine('a').logs
    for (const position of [2, 3]) await logs.keepCheckpoint(ID, { position, state: JSON.stringify({ format: CHECKPOINT_FORMAT + 1 }) })
    const fromFile = initialView(ID, [{ kind: 'user', messageId: 'old', text: 'from the session file', run: 1, versions: [], at: 1 }])
    const b = await started(new ThreadMirror(ID, cluster.engine('b').logs, async () => fromFile))
    await b.reached(last)
    expect(b.feed!.seq).toBe(4)
    expect(b.feed!.snapshot().transcript).toEqual([expect.objectContaining({ kind: 'notify', message: 'new thread' })])
    b.stop()
  })

  it('is kept by the node that writes the thread only, once the thread is at rest after as many records, or mid-run after ten times as many', async () => {
    const cluster = new MemoryCluster()
    const writer = owner(cluster)
    let writes = false
    const mirror = await started(new ThreadMirror(ID, cluster.engine('a').logs, async () => initialView(ID), { checkpoints: { every: 5, writes: () => writes } }))
    await writer.run(1, 10)
    await folded(mirror, writer.last)
    expect(cluster.checkpoints.get(ID)).toBeUndefined()

    writes = true
    await writer.frames({ type: 'status', live: true, busy: true, run: 2 })
    // Mid-run: none until fifty records (ten times five) since the mirror started (run 1 made 15).
    for (let k = 0; k < 33; k++) {
      await writer.frames({ type: 'notify', message: `step ${k}`, level: 'info' })
      await folded(mirror, writer.last)
      expect(cluster.checkpoints.get(ID)).toBeUndefined()
    }
    await writer.frames({ type: 'notify', message: 'the fiftieth record', level: 'info' })
    await folded(mirror, writer.last)
    expect(writer.last).toBe(50)
    expect(cluster.checkpoints.get(ID)?.position).toBe(50)
    await writer.frames({ type: 'settled', run: 2, aborted: false }, { type: 'status', live: true, busy: false, run: 2 })
    for (let k = 0; k < 3; k++) await writer.frames({ type: 'notify', message: `after ${k}`, level: 'info' })
    await folded(mirror, writer.last)
    // At rest, but fewer than five records since the last one.
    expect(cluster.checkpoints.get(ID)?.position).toBe(50)
    await writer.frames({ type: 'notify', message: 'the fifth since', level: 'info' })
    await folded(mirror, writer.last)
    expect(cluster.checkpoints.get(ID)?.position).toBe(55)
    mirror.stop()
  })

  it('at a deleted record starts an empty thread at the deleted one\'s seq, and the node that keeps checkpoints forgets what came before — after a checkpoint still on its way', async () => {
    const cluster = new MemoryCluster()
    const writer = owner(cluster)
    const logs = cluster.engine('a').logs
    // The engine takes the checkpoint only when the test lets it.
    let land!: () => void
    const landed = new Promise<void>((resolve) => (land = resolve))
    let asked = 0
    const slowKeeps: ThreadLogs = {
      ...logs,
      keepCheckpoint: async (threadId, checkpoint) => {
        asked++
        await landed
        return logs.keepCheckpoint(threadId, checkpoint)
      },
    }
    const mirror = await started(new ThreadMirror(ID, slowKeeps, async () => initialView(ID), { checkpoints: { every: 5, writes: () => true } }))
    await writer.run(1, 10)
    await folded(mirror, writer.last)
    expect(asked).toBe(1)
    const seq = mirror.feed!.seq
    const sent: string[] = []
    let closed = false
    mirror.feed!.follow({ send: (frame) => void sent.push(frame.toString('utf8')), close: () => void (closed = true) })

    await writer.append({ kind: 'deleted', seq })
    await folded(mirror, writer.last)
    expect(closed).toBe(true)
    expect(held(mirror)).toEqual({ view: { ...initialView(ID), seq }, open: [], keyed: [], position: writer.last })
    // The checkpoint of the deleted thread lands first, then goes with its records.
    land()
    await expect.poll(() => cluster.logs.get(ID)).toEqual([{ kind: 'deleted', seq }])
    expect(cluster.checkpoints.get(ID)).toBeUndefined()

    // A thread made again under the id: its frames after the deleted one's seqs, as every node folds them.
    const again = new Feed({ ...initialView(ID), seq }, {})
    const bytes = lastFrame(again, again.append({ type: 'notify', message: 'new thread', level: 'info' }))!.toString('utf8')
    await writer.append({ kind: 'frames', frames: [bytes] })
    const fresh = await started(new ThreadMirror(ID, cluster.engine('b').logs, async () => initialView(ID)))
    await folded(mirror, writer.last)
    expect(held(fresh)).toEqual(held(mirror))
    expect(fresh.feed!.seq).toBe(seq + 1)
    mirror.stop()
    fresh.stop()
  })

  it('a deleted record folded while another node wrote the thread is forgotten once this node writes it', async () => {
    const cluster = new MemoryCluster()
    const writer = owner(cluster)
    let writes = false
    const mirror = await started(new ThreadMirror(ID, cluster.engine('a').logs, async () => initialView(ID), { checkpoints: { every: 1000, writes: () => writes } }))
    await writer.run(1, 3)
    await writer.append({ kind: 'deleted', seq: 7 })
    await folded(mirror, writer.last)
    // Its owner died before the engine forgot anything.
    expect(cluster.logs.get(ID)!.length).toBe(writer.last)
    writes = true
    mirror.forgetDeleted()
    await mirror.chores()
    expect(cluster.logs.get(ID)).toEqual([{ kind: 'deleted', seq: 7 }])
    mirror.stop()
  })

  it('a log that starts at its deleted record is taken as forgotten only when the engine says there is no checkpoint, not when one could not be read', async () => {
    const cluster = new MemoryCluster()
    const writer = owner(cluster)
    const logs = cluster.engine('a').logs
    await writer.run(1, 3)
    const before = writer.last
    await writer.append({ kind: 'deleted', seq: 7 })
    await logs.forget(ID, writer.last)
    // A checkpoint of the deleted thread the forget did not get to (its node stopped between the two).
    await logs.keepCheckpoint(ID, { position: before, state: '{"prompt 1":"of the deleted thread"}' })
    const unreadable: ThreadLogs = { ...logs, checkpoint: async () => Promise.reject(new Error('damaged')) }
    const mirror = await started(new ThreadMirror(ID, unreadable, async () => initialView(ID), { checkpoints: { every: 1000, writes: () => true } }))
    mirror.forgetDeleted()
    await mirror.chores()
    expect(cluster.checkpoints.get(ID)).toBeUndefined()
    mirror.stop()
  })

  it('stopped before its first read of the log ended, lets whoever waits for it go on: ready resolves, and a wait for a position answers false', async () => {
    const cluster = new MemoryCluster()
    const writer = owner(cluster)
    await writer.run(1, 2)
    // A reader that never catches up (the engine slow to answer): the mirror is stopped in its first read.
    const stalled: ThreadLogs = { ...cluster.engine('a').logs, read: () => ({ stop() {} }) }
    const mirror = new ThreadMirror(ID, stalled, async () => initialView(ID))
    mirror.start()
    const waiting = mirror.reached(writer.last)
    let ready = false
    void mirror.ready().then(() => (ready = true))
    await new Promise((resolve) => setImmediate(resolve))
    expect(ready).toBe(false)
    mirror.stop()
    const within = <T>(promise: Promise<T>) => Promise.race([promise, new Promise<'pending'>((resolve) => setTimeout(() => resolve('pending'), 1000))])
    expect(await within(mirror.ready().then(() => 'ready'))).toBe('ready')
    expect(await within(waiting)).toBe(false)
    // Asked after the stop, too.
    expect(await within(mirror.reached(writer.last))).toBe(false)
    expect(mirror.stopped).toBe(true)
    expect(mirror.feed).toBeUndefined()
  })
})

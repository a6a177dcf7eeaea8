/**
 * Durability in the host: the store port (its in-memory fake and the SQLite store, temp dirs only),
 * the seq ceiling, the journal, and recovery after a simulated crash (`MemoryThreadStore.crash()`:
 * the next process opens exactly what was committed; the old registry is simply abandoned).
 */
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Observation, TranscriptEntry } from '../../src/schemas/index.js'
import { ThreadRegistry } from '../../src/host/thread-registry.js'
import { MemoryThreadStore } from './memory-store.js'
import { SqliteThreadStore } from '../../src/host/store/sqlite.js'
import { SEQ_BATCH } from '../../src/host/store/journal.js'
import type { ThreadStore } from '../../src/host/store/port.js'
import type { PersistedThread } from '../../src/runtime/port.js'
import { FakeRuntimeFactory, hostOptions } from './fake-runtime.js'
import { diskFaults } from './disk-faults.js'

let dir: string
const open: ThreadRegistry[] = []

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'threadhost-durable-host-'))
})

afterEach(async () => {
  for (const registry of open.splice(0)) await registry.shutdown().catch(() => {})
  await rm(dir, { recursive: true, force: true })
})

async function host(store: ThreadStore | undefined, runtimes = new FakeRuntimeFactory(), log?: (level: string, message: string) => void) {
  const registry = await ThreadRegistry.open(hostOptions(dir, runtimes, { ...(store ? { store } : {}), ...(log ? { log } : {}) }))
  open.push(registry)
  return { registry, runtimes }
}

const prompt = (registry: ThreadRegistry, id: string, message: string, deliverAs: 'steer' | 'followUp' = 'steer') =>
  registry.prompt(id, { message, admission: 'enqueue', deliverAs })

async function follow(registry: ThreadRegistry, id: string): Promise<Observation[]> {
  const seen: Observation[] = []
  ;(await registry.feed(id))!.observe((o) => seen.push(o))
  return seen
}

async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((r) => setTimeout(r, 2))
}

/** A factory that also lists persisted threads, as the pi runtime does from its session directories. */
class PersistingFactory extends FakeRuntimeFactory {
  persisted: PersistedThread[] = []
  async listPersisted(): Promise<PersistedThread[]> {
    return this.persisted
  }
}

describe('the store', () => {
  const keeps = (kind: 'memory' | 'sqlite') => () => {
      const make = () => (kind === 'memory' ? new MemoryThreadStore() : SqliteThreadStore.open(dir).store)
      const store = make()
      // Recent times: the SQLite store prunes settled rows older than its retention when it reopens.
      const t = Date.now()
      const row = { threadId: 't', title: 'T', model: 'demo', cwd: dir, createdAt: t + 1, updatedAt: t + 2, run: 0, seq: 0 }
      store.putThread(row)
      store.admitPrompt(
        { threadId: 't', messageId: 'm1', text: 'hi', admission: 'enqueue', deliverAs: 'steer', queued: false, run: 1, acceptedAt: t + 3 },
        { ...row, run: 1 },
      )
      store.startRun('t', 1, t + 4)
      expect(store.settlePrompt('t', 'm1', { kind: 'ran', run: 1 })).toBe(true)
      expect(store.settlePrompt('t', 'nobody', { kind: 'handled' })).toBe(false)
      expect(store.openPrompts('t').map((p) => p.messageId)).toEqual(['m1'])
      store.openDialog({ threadId: 't', dialogId: 'd1', run: 1, openedAt: t + 5 })
      store.settleDialog('t', 'd1', 'answered')
      store.endRun('t', 1, false, t + 6, 'settled')
      expect(store.openPrompts()).toEqual([])
      expect(store.openRuns()).toEqual([])
      store.reserveSeq('t', 2048)
      store.reserveSeq('t', 10)
      store.putThread({ ...row, seq: 5, run: 0 })
      store.addReport('t', 1, { type: 'settled', run: 1, aborted: true })
      const reread = kind === 'memory' ? (store as MemoryThreadStore).crash() : (store.close(), SqliteThreadStore.open(dir).store)
      expect(reread.threads()).toMatchObject([{ threadId: 't', seq: 2048, run: 1 }])
      expect(reread.journal('t')).toMatchObject({
        prompts: [{ messageId: 'm1', fate: { kind: 'ran', run: 1 } }],
        runs: [{ run: 1, aborted: false, endedBy: 'settled' }],
        dialogs: [{ dialogId: 'd1', outcome: 'answered' }],
      })
      expect(reread.reports('t')).toMatchObject([{ afterRun: 1, delivered: false, body: { type: 'settled', run: 1 } }])
      reread.deleteThread('t')
      expect(reread.threads()).toEqual([])
      expect(reread.journal('t')).toEqual({ prompts: [], runs: [], dialogs: [] })
      reread.close()
  }
  it('memory: a thread, its prompts, runs, dialogs and reports are kept; a prompt is open until its run ends; the seq ceiling and run never go back', keeps('memory'))
  it('sqlite: a thread, its prompts, runs, dialogs and reports are kept; a prompt is open until its run ends; the seq ceiling and run never go back', keeps('sqlite'))

  it('the SQLite store is a WAL database in the data dir, and a threads.json from before is imported once', () => {
    writeFileSync(
      join(dir, 'threads.json'),
      JSON.stringify({ threads: [{ threadId: 'old', title: 'Old', model: 'demo', createdAt: 1, updatedAt: 1, run: 3, seq: 7 }] }),
    )
    const opened = SqliteThreadStore.open(dir, { floorSeq: () => 1_000_000 })
    expect(opened.origin).toBe('migrated')
    expect(opened.store.threads()).toMatchObject([{ threadId: 'old', run: 3, seq: 1_000_000 }])
    expect(existsSync(join(dir, 'threads.json'))).toBe(false)
    expect(existsSync(join(dir, 'threadhost.db-wal'))).toBe(true)
    opened.store.close()
    expect(SqliteThreadStore.open(dir).origin).toBe('kept')
  })
})

describe('seq ceiling', () => {
  it('the seq ceiling is reserved ahead in batches: one store write per batch of frames, none per streamed delta', async () => {
    const store = new MemoryThreadStore()
    const { registry, runtimes } = await host(store)
    await prompt(registry, 't1', 'hello')
    const fake = runtimes.get('t1')
    const feed = (await registry.feed('t1'))!
    const before = store.writes.get('reserveSeq') ?? 0
    const writesBefore = [...store.writes.values()].reduce((a, b) => a + b, 0)
    fake.emit({ type: 'assistant-start', messageId: 'a1' })
    for (let i = 0; i < 3 * SEQ_BATCH; i++) fake.emit({ type: 'assistant-delta', messageId: 'a1', text: 'x' })
    const reserves = (store.writes.get('reserveSeq') ?? 0) - before
    expect(reserves).toBeGreaterThanOrEqual(2)
    expect(reserves).toBeLessThanOrEqual(4)
    expect([...store.writes.values()].reduce((a, b) => a + b, 0) - writesBefore).toBe(reserves)
    expect(store.threads()[0].seq).toBeGreaterThanOrEqual(feed.seq)
  })

  it('a fast stream gets ever larger reservations: a handful of writes for many thousand frames', async () => {
    const store = new MemoryThreadStore()
    const { registry, runtimes } = await host(store)
    await prompt(registry, 't1', 'hello')
    const fake = runtimes.get('t1')
    const before = store.writes.get('reserveSeq') ?? 0
    fake.emit({ type: 'assistant-start', messageId: 'a1' })
    for (let i = 0; i < 16 * SEQ_BATCH; i++) fake.emit({ type: 'assistant-delta', messageId: 'a1', text: 'x' })
    // batches of 1024, 2048, 4096 … cover 16 batches' worth in about log2(16) + 1 writes (16 at a fixed size)
    expect((store.writes.get('reserveSeq') ?? 0) - before).toBeLessThanOrEqual(8)
    expect(store.threads()[0].seq).toBeGreaterThanOrEqual((await registry.feed('t1'))!.seq)
  })

  it('after a crash the feed continues strictly above every seq a tab could have seen', async () => {
    const store = new MemoryThreadStore()
    const first = await host(store)
    await prompt(first.registry, 't1', 'hello')
    const fake = first.runtimes.get('t1')
    fake.emit({ type: 'assistant-start', messageId: 'a1' })
    for (let i = 0; i < SEQ_BATCH + 10; i++) fake.emit({ type: 'assistant-delta', messageId: 'a1', text: 'x' })
    const seen = (await first.registry.feed('t1'))!.seq

    const second = await host(store.crash())
    const feed = (await second.registry.feed('t1'))!
    expect(feed.seq).toBeGreaterThanOrEqual(seen)
    const next = await follow(second.registry, 't1')
    await prompt(second.registry, 't1', 'again')
    expect(next[0].seq).toBeGreaterThan(seen)
    expect(feed.resume(seen)).toMatchObject({ kind: 'snapshot' })
  })
})

describe('recovery', () => {
  it('recovery reports an accepted prompt that never reached the transcript as prompt-rejected restart, once, on the next feed, and keeps it in later snapshots', async () => {
    const store = new MemoryThreadStore()
    const first = await host(store)
    await prompt(first.registry, 't1', 'runs')
    const queued = await prompt(first.registry, 't1', 'waits')
    expect(queued).toMatchObject({ kind: 'admitted', queued: true })
    const messageId = (queued as { messageId: string }).messageId
    expect(store.journal('t1').prompts.map((p) => p.text)).toEqual(['runs', 'waits'])

    // The crash: the session file has the first prompt only.
    const runtimes = new FakeRuntimeFactory()
    const ranId = store.journal('t1').prompts[0].messageId
    runtimes.transcripts.set('t1', [{ kind: 'user', messageId: ranId, text: 'runs', run: 1 }])
    const logs: string[] = []
    const second = await host(store.crash(), runtimes, (_level, message) => logs.push(message))
    expect(logs.filter((l) => l.includes('recovered from an unclean stop'))).toHaveLength(1)
    const feed = (await second.registry.feed('t1'))!
    const frames = feed.resume(feed.seq - 2)
    expect(frames.kind).toBe('frames')
    const snapshot = feed.snapshot()
    expect(snapshot.transcript).toEqual([
      { kind: 'user', messageId: ranId, text: 'runs', run: 1 },
      // With its text, so a tab that did not send it (or was reloaded) can offer it again.
      { kind: 'rejected', messageId, reason: 'restart', text: 'waits' },
      { kind: 'stopped', run: 1 },
    ])
    expect(second.registry.store.journal('t1').prompts.map((p) => p.fate)).toEqual([
      { kind: 'ran', run: 1 },
      { kind: 'rejected', reason: 'restart' },
    ])
    // Delivered once: a third life folds the reports into the snapshot and appends nothing.
    const third = await host(second.registry.store instanceof MemoryThreadStore ? second.registry.store.crash() : second.registry.store, runtimes)
    const later = (await third.registry.feed('t1'))!
    expect(later.snapshot().transcript).toEqual(snapshot.transcript)
    expect(later.seq).toBeGreaterThanOrEqual(feed.seq)
    expect(later.resume(later.seq - 1)).toMatchObject({ kind: 'snapshot' })
  })

  it('a run in flight at a crash ends settled aborted on the feed; its first prompt, absent from the transcript, is reported rejected; open dialogs settle aborted in the journal', async () => {
    const store = new MemoryThreadStore()
    const first = await host(store)
    const started = await prompt(first.registry, 'new', 'first words')
    void first.runtimes.get('new').ui.ask({ spec: { method: 'confirm', title: 'Sure?', message: '?' }, origin: { kind: 'extension' } })
    await new Promise((r) => setTimeout(r, 5))
    expect(store.openDialogs('new')).toHaveLength(1)

    const second = await host(store.crash())
    const feed = (await second.registry.feed('new'))!
    const tail = feed.resume(feed.seq - 2)
    expect(tail.kind).toBe('frames')
    expect(feed.snapshot().transcript).toEqual([
      { kind: 'rejected', messageId: (started as { messageId: string }).messageId, reason: 'restart', text: 'first words' },
      { kind: 'stopped', run: 1 },
    ])
    expect(second.registry.store.journal('new')).toMatchObject({
      runs: [{ run: 1, aborted: true, endedBy: 'restart' }],
      dialogs: [{ outcome: 'aborted' }],
    })
    expect(second.registry.get('new')).toMatchObject({ run: 1, busy: false })
    // The count goes on.
    expect(await prompt(second.registry, 'new', 'next')).toMatchObject({ kind: 'admitted', run: 2 })
  })

  it('a run the transcript shows stopped but the journal never saw end (its end was lost) is ended by recovery without reporting the stop again', async () => {
    const store = new MemoryThreadStore()
    const first = await host(store)
    const started = await prompt(first.registry, 't1', 'long')
    expect(store.openRuns('t1')).toHaveLength(1)

    const runtimes = new FakeRuntimeFactory()
    const user = { kind: 'user', messageId: (started as { messageId: string }).messageId, text: 'long', run: 1 } as const
    runtimes.transcripts.set('t1', [user, { kind: 'stopped', run: 1 }])
    const second = await host(store.crash(), runtimes)
    expect(second.registry.store.journal('t1').runs).toMatchObject([{ run: 1, aborted: true, endedBy: 'restart' }])
    expect((await second.registry.feed('t1'))!.snapshot().transcript).toEqual([user, { kind: 'stopped', run: 1 }])
  })

  it('a clean shutdown leaves nothing to recover: queued prompts are journaled rejected shutdown and the run ended', async () => {
    const store = new MemoryThreadStore()
    const first = await host(store)
    await prompt(first.registry, 't1', 'runs')
    await prompt(first.registry, 't1', 'waits', 'followUp')
    await first.registry.shutdown()
    expect(store.journal('t1').prompts.map((p) => p.fate)).toEqual([{ kind: 'ran', run: 1 }, { kind: 'rejected', reason: 'shutdown' }])
    expect(store.openRuns()).toEqual([])
    const second = await host(store.crash())
    // nothing is owed to the next feed; the shutdown's rejection is kept as a delivered report (BUG-2)
    expect(second.registry.store.reports('t1').filter((r) => !r.delivered)).toEqual([])
  })

  it('a stop hands queued prompts back and the journal records them restored', async () => {
    const store = new MemoryThreadStore()
    const { registry } = await host(store)
    await prompt(registry, 't1', 'runs')
    await prompt(registry, 't1', 's1')
    await prompt(registry, 't1', 'f1', 'followUp')
    expect(await registry.abort('t1')).toMatchObject({ kind: 'stopped', restored: ['s1', 'f1'] })
    expect(store.journal('t1').prompts.map((p) => [p.text, p.fate?.kind])).toEqual([
      ['runs', 'ran'],
      ['s1', 'restored'],
      ['f1', 'restored'],
    ])
  })

  it('a corrupt database file is set aside and the threads are rebuilt from the persisted sessions with one warning line', async () => {
    writeFileSync(join(dir, 'threadhost.db'), 'garbage, not a database\n'.repeat(100))
    const runtimes = new PersistingFactory()
    runtimes.persisted = [{ threadId: 'kept', cwd: dir, model: 'lab/fast', createdAt: 10, updatedAt: 20, lastRun: 4 }]
    const warnings: string[] = []
    const { registry } = await host(undefined, runtimes, (level, message) => level === 'warn' && warnings.push(message))
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatch(/thread index rebuilt: the database was unusable/)
    expect(registry.list()).toMatchObject([{ threadId: 'kept', model: 'lab/fast', run: 4, cwd: dir }])
    expect(readdirSync(dir).some((f) => f.startsWith('threadhost.db.corrupt-'))).toBe(true)
    // The seq ceiling is unknown: the thread continues above any seq it can have used.
    expect((await registry.feed('kept'))!.seq).toBeGreaterThan(Date.now())
  })
  it('an empty database file (0 bytes) is set aside like a damaged one: the threads are rebuilt from the persisted sessions and continue above any seq a tab saw', async () => {
    const runtimes = new PersistingFactory()
    const first = await host(undefined, runtimes)
    await prompt(first.registry, 'kept', 'hello')
    const fake = runtimes.get('kept')
    fake.emit({ type: 'assistant-start', messageId: 'a1' })
    for (let i = 0; i < SEQ_BATCH + 10; i++) fake.emit({ type: 'assistant-delta', messageId: 'a1', text: 'x' })
    const seen = (await first.registry.feed('kept'))!.seq
    await first.registry.shutdown()
    // A crash or a truncation left the file empty: SQLite would open it as a valid empty database.
    for (const suffix of ['-wal', '-shm']) rmSync(join(dir, `threadhost.db${suffix}`), { force: true })
    writeFileSync(join(dir, 'threadhost.db'), '')

    runtimes.persisted = [{ threadId: 'kept', cwd: dir, model: 'lab/fast', createdAt: 10, updatedAt: 20, lastRun: 1 }]
    const warnings: string[] = []
    const second = await host(undefined, runtimes, (level, message) => level === 'warn' && warnings.push(message))
    expect(warnings).toEqual([expect.stringMatching(/thread index rebuilt: the database was unusable/)])
    expect(second.registry.list()).toMatchObject([{ threadId: 'kept', run: 1 }])
    expect(readdirSync(dir).some((f) => f.startsWith('threadhost.db.corrupt-'))).toBe(true)
    const feed = (await second.registry.feed('kept'))!
    expect(feed.seq).toBeGreaterThan(seen)
    expect(feed.resume(seen)).toMatchObject({ kind: 'snapshot' })
  })
})

describe('journal writes the disk refuses', () => {
  it('a run stopped while the disk is full ends once: its end waits for the disk and is written before the thread writes anything else, so the next life shows it stopped once', async () => {
    const disk = diskFaults(dir)
    try {
      const runtimes = new FakeRuntimeFactory()
      const first = await host(undefined, runtimes)
      const started = await prompt(first.registry, 't1', 'long')
      const seen = await follow(first.registry, 't1')
      disk.fail('full')
      expect(await first.registry.abort('t1')).toMatchObject({ kind: 'stopped' })
      await until(() => seen.some((o) => o.type === 'settled'))
      disk.fail(undefined)
      await prompt(first.registry, 't1', 'next')

      // A crash: pi's session file shows run 1 stopped, and run 2 under way.
      runtimes.transcripts.set('t1', [
        { kind: 'user', messageId: (started as { messageId: string }).messageId, text: 'long', run: 1 },
        { kind: 'stopped', run: 1 },
      ])
      const second = await host(undefined, runtimes)
      expect(second.registry.store.journal('t1').runs).toMatchObject([
        { run: 1, aborted: true, endedBy: 'settled' },
        { run: 2, aborted: true, endedBy: 'restart' },
      ])
      const transcript = (await second.registry.feed('t1'))!.snapshot().transcript
      expect(transcript.filter((e) => e.kind === 'stopped')).toEqual([
        { kind: 'stopped', run: 1 },
        { kind: 'stopped', run: 2 },
      ])
    } finally {
      disk.restore()
    }
  })

  it('a clean shutdown writes the journal writes still waiting for the disk before the store closes', async () => {
    const disk = diskFaults(dir)
    try {
      const runtimes = new FakeRuntimeFactory()
      const first = await host(undefined, runtimes)
      await prompt(first.registry, 't1', 'long')
      const seen = await follow(first.registry, 't1')
      disk.fail('full')
      await first.registry.abort('t1')
      await until(() => seen.some((o) => o.type === 'settled'))
      disk.fail(undefined)
      await first.registry.shutdown()

      const second = await host(undefined, runtimes)
      expect(second.registry.store.journal('t1').runs).toMatchObject([{ run: 1, aborted: true, endedBy: 'settled' }])
    } finally {
      disk.restore()
    }
  })

  it('a question answered while the disk fails writes keeps its answer in the journal once the disk takes writes again, never settled aborted by recovery', async () => {
    const disk = diskFaults(dir)
    try {
      const runtimes = new FakeRuntimeFactory()
      const first = await host(undefined, runtimes)
      await prompt(first.registry, 't1', 'ask me')
      const seen = await follow(first.registry, 't1')
      void runtimes.get('t1').ui.ask({ spec: { method: 'confirm', title: 'Sure?', message: '?' }, origin: { kind: 'extension' } })
      await until(() => seen.some((o) => o.type === 'extension-ui-request'))
      const asked = seen.find((o) => o.type === 'extension-ui-request') as Extract<Observation, { type: 'extension-ui-request' }>
      disk.fail('io')
      expect(await first.registry.answer('t1', { id: asked.id, confirmed: true })).toEqual({ kind: 'answered' })
      await until(() => seen.some((o) => o.type === 'dialog-settled'))
      disk.fail(undefined)
      runtimes.get('t1').settle()
      await until(() => seen.some((o) => o.type === 'settled'))

      const second = await host(undefined, runtimes)
      expect(second.registry.store.journal('t1').dialogs).toMatchObject([{ dialogId: asked.id, outcome: 'answered' }])
      expect(second.registry.store.journal('t1').runs).toMatchObject([{ run: 1, aborted: false, endedBy: 'settled' }])
    } finally {
      disk.restore()
    }
  })
})

describe('transcript entries', () => {
  it('reports land after the run they belong to, before later runs', async () => {
    const { withReports } = await import('../../src/host/store/journal.js')
    const transcript: TranscriptEntry[] = [
      { kind: 'user', messageId: 'u1', text: 'one', run: 1 },
      { kind: 'user', messageId: 'u2', text: 'two', run: 2 },
    ]
    expect(
      withReports(transcript, [{ id: 1, threadId: 't', afterRun: 1, delivered: true, body: { type: 'settled', run: 1, aborted: true } }]),
    ).toEqual([transcript[0], { kind: 'stopped', run: 1 }, transcript[1]])
  })
})

/**
 * Which journal commits wait for the disk, on the real SQLite store and the real pi runtime (demo
 * model), counted by whether they waited. Before a prompt's model request only its admission (the
 * prompt row with its key claim) may: the rest of a run's start is committed without an fsync, and
 * still committed. A dialog's opening and its answer wait on one node; on a cluster node's own store,
 * whose thread's log has them first, neither does.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, expect, it } from 'vitest'
import type { Observation } from '../../src/schemas/index.js'
import { ThreadRegistry } from '../../src/host/thread-registry.js'
import { SqliteThreadStore } from '../../src/host/store/sqlite.js'
import { piHost } from '../server/harness.js'

let dir: string
let registry: ThreadRegistry | undefined

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'threadhost-journal-commits-'))
})

afterEach(async () => {
  await registry?.shutdown().catch(() => {})
  registry = undefined
  await rm(dir, { recursive: true, force: true })
})

it('a prompt on a live thread waits for one fsynced commit before its model request (its admission); run start, admission outcome and fate follow unsynced, and the run end waits', async () => {
  const { store } = SqliteThreadStore.open(dir)
  /** The store's commits at each model request. */
  const atRequest: { synced: number; unsynced: number }[] = []
  // pi's `context` event: the last thing pi does before it calls the provider (the demo's faux one builds no payload to hook).
  const options = await piHost(dir, {
    demoDelayMs: 0,
    extraExtensions: [
      (pi) => {
        pi.on('context', () => void atRequest.push(store.commits))
      },
    ],
  })
  registry = await ThreadRegistry.open({ ...options, store })
  const seen: Observation[] = []
  const settled = (run: number) => new Promise<void>((resolve) => {
    const check = () => (seen.some((o) => o.type === 'settled' && o.run === run) ? resolve() : setTimeout(check, 5))
    check()
  })
  const body = { message: 'hello', admission: 'enqueue', deliverAs: 'steer' } as const

  // The first prompt builds the runtime: not a live thread's prompt.
  expect(await registry.prompt('t1', body)).toMatchObject({ kind: 'admitted', run: 1 })
  ;(await registry.feed('t1'))!.observe((o) => seen.push(o))
  await settled(1)

  const before = store.commits
  expect(await registry.prompt('t1', { ...body, message: 'again' })).toMatchObject({ kind: 'admitted', run: 2 })
  await settled(2)
  const at = atRequest.at(-1)!
  expect(atRequest).toHaveLength(2)
  // The admission alone waited for the disk before the model was asked.
  expect(at.synced - before.synced).toBe(1)
  // The admission's outcome and the thread's row, the run started, the prompt's fate `ran`: committed, unsynced.
  expect(at.unsynced - before.unsynced).toBeGreaterThanOrEqual(3)
  // The run's end waits for the disk (and with it everything before it).
  expect(store.commits.synced).toBeGreaterThan(at.synced)
  const journal = store.journal('t1')
  expect(journal.runs.find((r) => r.run === 2)).toMatchObject({ run: 2, aborted: false })
  expect(journal.runs.find((r) => r.run === 2)?.endedAt).toBeTypeOf('number')
  expect(journal.prompts.find((p) => p.text === 'again')).toMatchObject({ run: 2, queued: false, fate: { kind: 'ran', run: 2 } })
  expect(store.openPrompts('t1')).toEqual([])
})

it("where a prompt is in its thread's log before its answer (a cluster node's own store, `logged`), its admission waits for no disk either: nothing before the model request does, and the run's end still waits", async () => {
  const { store } = SqliteThreadStore.open(dir, { logged: true })
  const atRequest: { synced: number; unsynced: number }[] = []
  const options = await piHost(dir, { demoDelayMs: 0, extraExtensions: [(pi) => void pi.on('context', () => void atRequest.push(store.commits))] })
  registry = await ThreadRegistry.open({ ...options, store })
  const ended = (run: number) =>
    new Promise<void>((resolve) => {
      const check = () => (store.journal('t1').runs.find((r) => r.run === run)?.endedAt !== undefined ? resolve() : setTimeout(check, 5))
      check()
    })
  const body = { message: 'hello', admission: 'enqueue', deliverAs: 'steer' } as const
  expect(await registry.prompt('t1', body)).toMatchObject({ kind: 'admitted', run: 1 })
  await ended(1)

  const before = store.commits
  expect(await registry.prompt('t1', { ...body, message: 'again' })).toMatchObject({ kind: 'admitted', run: 2 })
  await ended(2)
  const at = atRequest.at(-1)!
  expect(at.synced - before.synced).toBe(0)
  expect(at.unsynced - before.unsynced).toBeGreaterThanOrEqual(4)
  expect(store.commits.synced).toBeGreaterThan(at.synced)
  expect(store.journal('t1').prompts.find((p) => p.text === 'again')).toMatchObject({ run: 2, queued: false, fate: { kind: 'ran', run: 2 } })
})

/** A dialog asked and answered on a live thread: the commits its opening and its answer made, by whether they waited. */
async function dialogCommits(logged: boolean) {
  const { store } = SqliteThreadStore.open(dir, { logged })
  const options = await piHost(dir, { demoDelayMs: 0 })
  registry = await ThreadRegistry.open({ ...options, store })
  const body = { message: 'hello', admission: 'enqueue', deliverAs: 'steer' } as const
  expect(await registry.prompt('t1', body)).toMatchObject({ kind: 'admitted', run: 1 })
  // The store's commits as each observation reaches a follower: the journal, the feed's first observer, has written for it.
  const seen: Array<{ o: Observation; commits: { synced: number; unsynced: number } }> = []
  ;(await registry.feed('t1'))!.observe((o) => void seen.push({ o, commits: store.commits }))
  const until = (test: (o: Observation) => boolean) =>
    new Promise<{ o: Observation; commits: { synced: number; unsynced: number } }>((resolve) => {
      const check = () => {
        const found = seen.find((s) => test(s.o))
        return found ? resolve(found) : setTimeout(check, 5)
      }
      check()
    })
  await until((o) => o.type === 'settled' && o.run === 1)

  await registry.prompt('t1', { ...body, message: 'call ui_dialog {"method":"confirm","title":"Deploy?","message":"to prod"}' })
  const asked = await until((o) => o.type === 'extension-ui-request')
  expect(await registry.answer('t1', { id: (asked.o as Extract<Observation, { type: 'extension-ui-request' }>).id, confirmed: true })).toEqual({ kind: 'answered' })
  const answered = await until((o) => o.type === 'dialog-settled')
  expect(store.journal('t1').dialogs).toMatchObject([{ outcome: 'answered' }])
  // What the journal committed for the observation itself: since the one before it reached a follower.
  const madeFor = (at: (typeof seen)[number]) => {
    const before = seen[seen.indexOf(at) - 1]
    return { synced: at.commits.synced - before.commits.synced, unsynced: at.commits.unsynced - before.commits.unsynced }
  }
  return { opening: madeFor(asked), answer: madeFor(answered) }
}

it("on one node, a dialog's opening and its answer each wait for the disk", async () => {
  expect(await dialogCommits(false)).toEqual({ opening: { synced: 1, unsynced: 0 }, answer: { synced: 1, unsynced: 0 } })
})

it("where a dialog is in its thread's log first (a cluster node's own store, `logged`), neither its opening nor its answer waits for the disk, and both are committed", async () => {
  expect(await dialogCommits(true)).toEqual({ opening: { synced: 0, unsynced: 1 }, answer: { synced: 0, unsynced: 1 } })
})

/**
 * A keyed prompt over HTTP (the web client always sends an Idempotency-Key): what it waits for before
 * its model request, on the real SQLite store and pi. The key is claimed in the admission commit, and
 * the recorded answer, which a lost record would get back from that claim and the journal, does not
 * wait for the disk — so a keyed prompt waits for one fsync like an unkeyed one, and its retry still
 * gets the same answer.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, expect, it } from 'vitest'
import { SqliteThreadStore } from '../../src/host/store/sqlite.js'
import { ThreadRegistry } from '../../src/host/thread-registry.js'
import { buildApp } from '../../src/server/app.js'
import { api, piHost } from './harness.js'

const cleanups: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

it('a keyed prompt on a live thread waits for one fsynced commit before its model request, and its retry gets the same answer', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'threadhost-keyed-commits-'))
  const { store } = SqliteThreadStore.open(dir)
  const atRequest: { synced: number; unsynced: number }[] = []
  const options = await piHost(dir, { demoDelayMs: 0, extraExtensions: [(pi) => void pi.on('context', () => void atRequest.push(store.commits))] })
  const registry = await ThreadRegistry.open({ ...options, store })
  const app = await buildApp({ registry })
  const url = await app.listen({ port: 0, host: '127.0.0.1' })
  cleanups.push(() => rm(dir, { recursive: true, force: true }), () => registry.shutdown(), () => app.close())
  const idle = async (run: number) => {
    for (let i = 0; i < 500; i++) {
      const t = (await api(url, 'GET', '/api/threads/t1')).body as { busy: boolean; run: number }
      if (!t.busy && t.run === run) return
      await new Promise((r) => setTimeout(r, 10))
    }
    throw new Error(`run ${run} did not settle`)
  }

  expect((await api(url, 'POST', '/api/threads/t1/prompt', { message: 'hello' }, { 'idempotency-key': 'k1' })).status).toBe(202)
  await idle(1)
  const before = store.commits
  const first = await api(url, 'POST', '/api/threads/t1/prompt', { message: 'again' }, { 'idempotency-key': 'k2' })
  expect(first.status).toBe(202)
  await idle(2)
  expect(atRequest).toHaveLength(2)
  expect(atRequest[1].synced - before.synced).toBe(1)
  const retry = await api(url, 'POST', '/api/threads/t1/prompt', { message: 'again' }, { 'idempotency-key': 'k2' })
  expect(retry.status).toBe(202)
  expect(retry.body).toEqual(first.body)
  expect(retry.headers.get('idempotent-replayed')).toBe('true')
})

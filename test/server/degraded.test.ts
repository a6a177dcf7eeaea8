/**
 * A full disk or a read-only data dir: a request that could not be made durable is refused before
 * anything runs (507 full, 503 read-only), nothing is created, reads and follows go on, and
 * `GET /api/health` says `degraded` and why. The store is a fake over the real SQLite store whose
 * writes throw ENOSPC or EROFS, as node's fs and SQLite report them. (A real full tmpfs is not
 * mounted here: tests may not mount; test/host/store-faults.test.ts drives the SQLite store's own
 * free-space and write-access checks instead.)
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { ThreadStore } from '../../src/host/store/port.js'
import { SqliteThreadStore } from '../../src/host/store/sqlite.js'
import { ThreadRegistry } from '../../src/host/thread-registry.js'
import { buildApp } from '../../src/server/app.js'
import { contract } from './contract.js'
import { api, is, piHost, SseClient, NO_EXTENSIONS } from './harness.js'

const WRITES = new Set(['putThread', 'deleteThread', 'reserveSeq', 'admitPrompt', 'promptAdmitted', 'withdrawPrompt', 'settlePrompt', 'startRun', 'endRun', 'openDialog', 'settleDialog', 'addReport', 'markDelivered', 'recordIdempotent', 'checkWritable'])

/**
 * The SQLite store, with a switch that makes every write throw what a full or read-only disk throws
 * — or only the next call of one method (`failNext`), as when the disk fills between the write check
 * and the request's own write.
 */
function faultyStore(inner: ThreadStore): { store: ThreadStore; fail(code: 'ENOSPC' | 'EROFS' | undefined): void; failNext(method: string): void } {
  let code: string | undefined
  let once: string | undefined
  const store = new Proxy(inner, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver)
      if (typeof value !== 'function') return value
      return (...args: unknown[]) => {
        if (once === name) {
          once = undefined
          throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })
        }
        if (code && WRITES.has(String(name))) {
          const message = code === 'ENOSPC' ? 'ENOSPC: no space left on device, write' : 'EROFS: read-only file system, write'
          throw Object.assign(new Error(message), { code })
        }
        return (value as (...a: unknown[]) => unknown).apply(target, args)
      }
    },
  })
  return { store, fail: (c) => void (code = c), failNext: (method) => void (once = method) }
}

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

async function start() {
  const dataDir = await mkdtemp(join(tmpdir(), 'threadhost-degraded-'))
  const fake = faultyStore(SqliteThreadStore.open(dataDir).store)
  const registry = await ThreadRegistry.open({ ...(await piHost(dataDir)), store: fake.store })
  const app = await buildApp({ registry })
  const url = await app.listen({ port: 0, host: '127.0.0.1' })
  cleanups.push(async () => {
    fake.fail(undefined)
    await registry.shutdown()
    await app.close()
    await rm(dataDir, { recursive: true, force: true })
  })
  return { url, registry, fail: fake.fail, failNext: fake.failNext }
}

const T = '/api/threads/{id}'

describe('degraded mode', () => {
  const refusesWrites = (code: 'ENOSPC' | 'EROFS', status: number, fault: string) => async () => {
      const { url, registry, fail } = await start()
      const check = await contract(url)
      expect((await api(url, 'GET', '/api/health')).body).toEqual({ status: 'ok', extensions: NO_EXTENSIONS })
      await api(url, 'POST', '/api/threads', { id: 'kept', title: 'Kept' })
      const tab = await SseClient.open(`${url}/api/threads/kept/follow`)
      cleanups.push(() => tab.close())
      await api(url, 'POST', '/api/threads/kept/prompt', { message: 'call ui_dialog {"method":"confirm","title":"Go?"}' })
      const asked = await tab.waitFor(is('extension-ui-request'))
      const before = (await api(url, 'GET', '/api/threads')).body

      fail(code)
      const health = await api(url, 'GET', '/api/health')
      expect(health.body).toMatchObject({ status: 'degraded', fault, reason: expect.stringContaining(code) })
      check('GET', '/api/health', health)

      const refused: [string, string, string, unknown][] = [
        ['POST', '/api/threads', '/api/threads', { id: 'new' }],
        ['POST', `${T}/prompt`, '/api/threads/kept/prompt', { message: 'more' }],
        ['POST', `${T}/prompt`, '/api/threads/brand-new/prompt', { message: 'hello' }],
        ['POST', `${T}/dialog`, '/api/threads/kept/dialog', { id: asked.data.id, confirmed: true }],
        ['PATCH', T, '/api/threads/kept', { title: 'Renamed' }],
        ['DELETE', T, '/api/threads/kept', undefined],
      ]
      for (const [method, route, path, body] of refused) {
        const res = await api(url, method, path, body, { 'idempotency-key': `${code}-${method}-${path}` })
        expect(res.status, `${method} ${path}`).toBe(status)
        expect(res.body).toMatchObject({ error: expect.any(String), reason: fault })
        check(method, route, res)
      }
      // Nothing was created, renamed, answered or deleted.
      expect((await api(url, 'GET', '/api/threads')).body).toEqual(before)
      expect((await api(url, 'GET', '/api/threads/kept')).body).toMatchObject({ title: 'Kept', openDialogs: 1, busy: true })
      // Reads and follows go on.
      const late = await SseClient.open(`${url}/api/threads/kept/follow`)
      cleanups.push(() => late.close())
      expect((await late.waitFor(is('snapshot'))).data.openDialogs).toHaveLength(1)
      expect((await api(url, 'GET', '/api/threads/kept/commands')).status).toBe(200)

      // The disk has room again: the refused requests' keys were not spent, and writes work.
      fail(undefined)
      expect((await api(url, 'GET', '/api/health')).body).toEqual({ status: 'ok', extensions: NO_EXTENSIONS })
      expect((await api(url, 'POST', '/api/threads', { id: 'new' }, { 'idempotency-key': `${code}-POST-/api/threads` })).status).toBe(201)
      expect(registry.get('new')).toBeDefined()
  }

  it(
    'a full disk (ENOSPC): every request that writes is refused with 507 before it runs, nothing is created, reads and follows go on, and health says disk-full',
    refusesWrites('ENOSPC', 507, 'disk-full'),
  )
  it(
    'a read-only data dir (EROFS): every request that writes is refused with 503 before it runs, nothing is created, reads and follows go on, and health says read-only',
    refusesWrites('EROFS', 503, 'read-only'),
  )

  it('a prompt whose own journal write fails (the disk filled after the check) is refused 507 before it runs; its retry runs it once', async () => {
    const { url, failNext } = await start()
    await api(url, 'POST', '/api/threads', { id: 'p1' })
    const follow = await SseClient.open(`${url}/api/threads/p1/follow`)
    cleanups.push(() => follow.close())
    failNext('admitPrompt')
    const refused = await api(url, 'POST', '/api/threads/p1/prompt', { message: 'only once' }, { 'idempotency-key': 'once-1' })
    expect(refused).toMatchObject({ status: 507, body: { reason: 'disk-full' } })
    const retried = await api(url, 'POST', '/api/threads/p1/prompt', { message: 'only once' }, { 'idempotency-key': 'once-1' })
    expect(retried).toMatchObject({ status: 202, body: { run: 1, queued: false } })
    await follow.waitFor(is('settled', { run: 1 }))
    const said = follow.frames.filter((f) => f.data.type === 'user-message').map((f) => (f.data as { text: string }).text)
    expect(said).toEqual(['only once'])
  })

  it('a create whose own row write fails (the disk filled after the check) is refused 507 and creates nothing', async () => {
    const { url, failNext } = await start()
    failNext('putThread')
    expect(await api(url, 'POST', '/api/threads', { id: 'late' })).toMatchObject({ status: 507, body: { reason: 'disk-full' } })
    expect((await api(url, 'GET', '/api/threads/late')).status).toBe(404)
    expect((await api(url, 'POST', '/api/threads', { id: 'late' })).status).toBe(201)
  })

  it('a stop is never refused for a full disk: the run stops and the answer says so', async () => {
    const { url, fail } = await start()
    await api(url, 'POST', '/api/threads', { id: 's1' })
    const follow = await SseClient.open(`${url}/api/threads/s1/follow`)
    cleanups.push(() => follow.close())
    await api(url, 'POST', '/api/threads/s1/prompt', { message: 'call ui_dialog {"method":"confirm","title":"Go?"}' })
    await follow.waitFor(is('extension-ui-request'))
    fail('ENOSPC')
    const stopped = await api(url, 'POST', '/api/threads/s1/abort', {}, { 'idempotency-key': 'stop-1' })
    expect(stopped).toMatchObject({ status: 200, body: { threadId: 's1', restored: [] } })
    await follow.waitFor(is('settled', { aborted: true }))
    // The answer could not be recorded, but this process still replays it.
    expect(await api(url, 'POST', '/api/threads/s1/abort', {}, { 'idempotency-key': 'stop-1' })).toMatchObject({ status: 200, body: stopped.body })
  })
})

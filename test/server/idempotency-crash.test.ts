/**
 * The idempotency crash window: a prompt's admission claims its `Idempotency-Key` in the same commit,
 * so when the process dies after admitting the prompt but before recording the answer, the retry is
 * answered from the journal — the same receipt — and the prompt does not run twice.
 */
import { randomUUID } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { ThreadStore } from '../../src/host/store/port.js'
import { SqliteThreadStore } from '../../src/host/store/sqlite.js'
import { ThreadRegistry } from '../../src/host/thread-registry.js'
import { buildApp } from '../../src/server/app.js'
import { api, is, piHost, SseClient, startHarness } from './harness.js'

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

/** The SQLite store, except that no answer is ever recorded: the process "dies" before each one is. */
function losesAnswers(inner: ThreadStore): ThreadStore {
  return new Proxy(inner, {
    get(target, name, receiver) {
      if (name === 'recordIdempotent') return () => {
        throw new Error('the process died before the answer was recorded')
      }
      const value = Reflect.get(target, name, receiver)
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value
    },
  })
}

describe('idempotency across a crash', () => {
  it('a prompt admitted before a crash that lost its answer is answered from the journal on retry, and runs once', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'threadhost-idem-crash-'))
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }))
    const registry = await ThreadRegistry.open({ ...(await piHost(dataDir, { demoDelayMs: 2 })), store: losesAnswers(SqliteThreadStore.open(dataDir).store) })
    const app = await buildApp({ registry })
    const url = await app.listen({ port: 0, host: '127.0.0.1' })
    await api(url, 'POST', '/api/threads', { id: 't' })
    const tab = await SseClient.open(`${url}/api/threads/t/follow`)
    const key = { 'idempotency-key': randomUUID() }
    const first = await api(url, 'POST', '/api/threads/t/prompt', { message: 'only once' }, key)
    expect(first.status).toBe(202)
    await tab.waitFor(is('status', { busy: false, run: 1 }))
    tab.close()
    await registry.shutdown()
    await app.close()

    const h = await startHarness({ demoDelayMs: 2, dataDir })
    cleanups.push(() => h.close({ keepData: true }))
    const retry = await api(h.url, 'POST', '/api/threads/t/prompt', { message: 'only once' }, key)
    expect(retry).toMatchObject({ status: 202, body: first.body })
    expect(retry.headers.get('idempotent-replayed')).toBe('true')
    expect(h.registry.store.journal('t').prompts.map((p) => p.messageId)).toEqual([first.body.messageId])
    const follower = await SseClient.open(`${h.url}/api/threads/t/follow`)
    cleanups.push(() => follower.close())
    const snapshot = await follower.waitFor(is('snapshot'))
    expect(snapshot.data.transcript.filter((e: { kind: string }) => e.kind === 'user')).toEqual([
      { kind: 'user', messageId: first.body.messageId, text: 'only once', run: 1, at: expect.any(Number) },
    ])
    // Answered from the journal once, then recorded: the same key with another request is still refused.
    expect((await api(h.url, 'POST', '/api/threads/t/prompt', { message: 'another' }, key)).status).toBe(422)
    expect((await api(h.url, 'POST', '/api/threads/t/prompt', { message: 'only once' }, key)).body).toEqual(first.body)
  })
})

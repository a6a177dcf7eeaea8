/** The inspector's routes on a real socket: the pi runtime on the demo model, fetch and SSE. */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { Inspection } from '../../src/host/inspection.js'
import { ThreadRegistry } from '../../src/host/thread-registry.js'
import { buildApp } from '../../src/server/app.js'
import { debugRoutes, MACHINES, type ActorNode } from '../../src/server/debug-routes.js'
import { machineDefinition } from '../../src/shared/xstate-internals.js'
import { api, is, piHost, sleep, SseClient } from '../server/harness.js'

interface Harness {
  url: string
  close(): Promise<void>
}


/** A real server on port 0, the demo model, and the inspector plugin when `inspector` is on. */
async function startHarness(options: { inspector?: boolean; token?: string; inspection?: (r: ThreadRegistry) => Inspection } = {}): Promise<Harness> {
  const dataDir = await mkdtemp(join(tmpdir(), 'threadhost-debug-'))
  const registry = await ThreadRegistry.open(await piHost(dataDir))
  const inspection = options.inspection?.(registry)
  const plugins = options.inspector === false ? [] : [debugRoutes({ registry, inspection, stream: { heartbeatMs: 50 } })]
  const app = await buildApp({ registry, token: options.token, plugins })
  const url = await app.listen({ port: 0, host: '127.0.0.1' })
  return {
    url,
    async close() {
      await registry.shutdown()
      await app.close()
      await rm(dataDir, { recursive: true, force: true })
    },
  }
}

const CONFIRM = 'call ui_dialog {"method":"confirm","title":"Deploy?","message":"to prod"}'
const ASK = `call ask_user_question ${JSON.stringify({ question: 'Deploy?', mode: 'single', options: [{ label: 'yes' }, { label: 'no' }] })}`

let h: Harness | undefined
let clients: SseClient[] = []
afterEach(async () => {
  for (const c of clients) c.close()
  clients = []
  await h?.close()
  h = undefined
})

async function open(path: string, headers: Record<string, string> = {}) {
  const client = await SseClient.open(h!.url + path, headers)
  clients.push(client)
  return client
}

async function until<T>(read: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs
  for (;;) {
    const value = await read()
    if (value !== undefined) return value
    if (Date.now() > end) throw new Error('timed out')
    await sleep(20)
  }
}

/** A new thread whose run shows a question: an extension's confirm, or an ask_user_question call (through the thread's ask-queue). */
async function openConfirm(threadId: string, message = CONFIRM): Promise<ActorNode> {
  expect((await api(h!.url, 'POST', '/api/threads', { id: threadId })).status).toBe(201)
  expect((await api(h!.url, 'POST', `/api/threads/${threadId}/prompt`, { message })).status).toBe(202)
  return until(async () => {
    const { body } = await api(h!.url, 'GET', '/api/debug/actors')
    const thread = (body.threads as ActorNode[]).find((t) => t.threadId === threadId)
    return thread?.children.some((c) => c.machineId === 'dialog' && c.value === 'open') ? thread : undefined
  })
}

describe('GET /api/debug/actors', () => {
  it('lists each live thread with its ask-queue and open dialogs, machine ids and state values', async () => {
    h = await startHarness()
    expect((await api(h.url, 'GET', '/api/debug/actors')).body).toEqual({ threads: [] })
    // The ask-queue is spawned at the thread's first turn: an ask_user_question call.
    const thread = await openConfirm('t1', ASK)
    const dialog = thread.children.find((c) => c.machineId === 'dialog')!
    expect(thread).toMatchObject({ actorId: 'thread:t1', machineId: 'thread', systemId: 'thread:t1', value: 'running', status: 'active' })
    expect(thread.children.find((c) => c.id === 'askQueue')).toMatchObject({
      actorId: 'thread:t1/askQueue',
      machineId: 'askQueue',
      systemId: 'askQueue:t1',
      value: 'showing',
    })
    expect(dialog).toMatchObject({ actorId: `thread:t1/${dialog.id}`, value: 'open', status: 'active' })
  })
})

describe('GET /api/debug/machines/:machineId', () => {
  it('returns the definition of thread, dialog and askQueue with every transition keyed; others are 404', async () => {
    h = await startHarness()
    for (const id of ['thread', 'dialog', 'askQueue']) {
      const { status, body } = await api(h.url, 'GET', `/api/debug/machines/${id}`)
      expect(status).toBe(200)
      expect(body.definition).toMatchObject({ id, type: 'compound' })
      // The page's reading of it (xstate-internals.ts) is of exactly what the route sends.
      expect(body.definition).toEqual(machineDefinition(MACHINES[id]))
      expect(body.transitions.length).toBeGreaterThan(0)
    }
    const dialog = (await api(h.url, 'GET', '/api/debug/machines/dialog')).body
    expect(Object.keys(dialog.definition.states)).toEqual(['asked', 'open', 'settled', 'withdrawn'])
    expect(dialog.transitions.map((t: { key: string }) => t.key)).toContain('dialog.asked|always|1')
    expect((await api(h.url, 'GET', '/api/debug/machines/nope')).status).toBe(404)
    expect((await api(h.url, 'GET', '/api/debug/machines/toString')).status).toBe(404)
  })
})

describe('GET /api/debug/events', () => {
  it('streams numbered records; a reconnect with Last-Event-ID or ?after= gets only what came after', async () => {
    h = await startHarness()
    const first = await open('/api/debug/events')
    expect(first.status).toBe(200)
    await first.waitFor(is('ready'))
    await openConfirm('t1')
    const opened = await first.waitFor((f) => f.event === 'record' && f.data.kind === 'snapshot' && f.data.value === 'open')
    expect(opened.data).toMatchObject({ threadId: 't1', status: 'active', transitions: ['dialog.asked|always|1'] })
    const records = first.frames.filter((f) => f.event === 'record')
    expect(records.map((f) => Number(f.id))).toEqual(records.map((f) => f.data.id))
    expect(records.map((f) => f.data.id)).toEqual([...records.map((f) => f.data.id)].sort((a, b) => a - b))
    first.close()

    // Whether the answer lands before or after the server sees the close, the next stream shows it.
    const dialogId = opened.data.actorId.split('/')[1]
    expect((await api(h.url, 'POST', '/api/threads/t1/dialog', { id: dialogId, confirmed: true })).status).toBe(204)
    const last = opened.data.id
    const resumed = await open('/api/debug/events', { 'last-event-id': String(last) })
    await resumed.waitFor(is('ready'))
    const again = resumed.frames.filter((f) => f.event === 'record').map((f) => f.data)
    expect(again.every((r) => r.id > last)).toBe(true)
    expect(again.find((r) => r.actorId === `thread:t1/${dialogId}` && r.kind === 'actor.stopped')).toBeDefined()

    const byQuery = await open(`/api/debug/events?after=${last}`)
    await byQuery.waitFor(is('ready'))
    expect(byQuery.frames.filter((f) => f.event === 'record')[0].data.id).toBe(last + 1)
  })

  it('?thread= filters to one thread, replay and live', async () => {
    h = await startHarness()
    const all = await open('/api/debug/events')
    await openConfirm('t1')
    const one = await open('/api/debug/events?thread=t2')
    await openConfirm('t2')
    await one.waitFor((f) => f.event === 'record' && f.data.value === 'open')
    await all.waitFor((f) => f.event === 'record' && f.data.threadId === 't2' && f.data.value === 'open')
    const threads = new Set(one.frames.filter((f) => f.event === 'record').map((f) => f.data.threadId))
    expect([...threads]).toEqual(['t2'])
    expect(new Set(all.frames.filter((f) => f.event === 'record').map((f) => f.data.threadId))).toEqual(new Set(['t1', 't2']))
  })

  it('the last client leaving detaches the observers', async () => {
    const inspection = { current: undefined as Inspection | undefined }
    h = await startHarness({ inspection: (registry) => (inspection.current = new Inspection(registry)) })
    await openConfirm('t1')
    expect(inspection.current!.attachedThreads).toEqual([])
    const a = await open('/api/debug/events')
    const b = await open('/api/debug/events')
    await a.waitFor(is('ready'))
    await b.waitFor(is('ready'))
    expect(inspection.current!.attachedThreads).toEqual(['t1'])
    a.close()
    await sleep(50)
    expect(inspection.current!.attachedThreads).toEqual(['t1'])
    b.close()
    await until(async () => (inspection.current!.attachedThreads.length === 0 ? true : undefined))
  })
})

describe('switches', () => {
  it('--inspector off: no plugin, every debug route is 404', async () => {
    h = await startHarness({ inspector: false })
    for (const path of ['/api/debug/actors', '/api/debug/machines/thread', '/api/debug/events']) {
      expect((await api(h.url, 'GET', path)).status).toBe(404)
    }
  })

  it('with a token: 401 without it, 200 with the bearer header, and ?token= only on the event stream (for EventSource)', async () => {
    h = await startHarness({ token: 's3cret' })
    expect((await api(h.url, 'GET', '/api/debug/actors')).status).toBe(401)
    expect((await api(h.url, 'GET', '/api/debug/machines/thread')).status).toBe(401)
    expect((await open('/api/debug/events')).status).toBe(401)
    expect((await api(h.url, 'GET', '/api/debug/actors', undefined, { authorization: 'Bearer s3cret' })).status).toBe(200)
    expect((await api(h.url, 'GET', '/api/debug/machines/thread?token=s3cret')).status).toBe(401)
    expect((await api(h.url, 'GET', '/api/debug/machines/thread', undefined, { authorization: 'bearer s3cret' })).status).toBe(200)
    const stream = await open('/api/debug/events?token=s3cret')
    expect(stream.status).toBe(200)
    await stream.waitFor(is('ready'))
  })
})

/**
 * `Idempotency-Key` on create, prompt, abort and dialog: a repeat gets the first answer and nothing
 * runs again; the same key with another request is a 422; concurrent repeats run once; the answers
 * are in the database, so a restart keeps them.
 */
import { randomUUID } from 'node:crypto'
import { rm } from 'node:fs/promises'
import { afterEach, describe, expect, it } from 'vitest'
import { api as client, apiConfig, ApiError, RETRY_DELAYS_MS } from '../../src/ui/api.js'
import { contract } from './contract.js'
import { api, is, SseClient, startHarness, type Harness } from './harness.js'

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

async function harness(options: { dataDir?: string } = {}): Promise<Harness> {
  const h = await startHarness({ demoDelayMs: 2, ...options })
  cleanups.push(() => h.close())
  return h
}

const keyed = (key: string) => ({ 'idempotency-key': key })
const T = '/api/threads/{id}'

describe('idempotency', () => {
  it('a repeat with the same Idempotency-Key returns the first answer and does nothing again: create, prompt, abort, dialog', async () => {
    const h = await harness()
    const check = await contract(h.url)

    // Create, no id: the repeat names the same new thread, and only one exists.
    const k1 = randomUUID()
    const first = await api(h.url, 'POST', '/api/threads', { title: 'Once' }, keyed(k1))
    const again = await api(h.url, 'POST', '/api/threads', { title: 'Once' }, keyed(k1))
    expect(first.status).toBe(201)
    expect(again).toMatchObject({ status: 201, body: first.body })
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    check('POST', '/api/threads', again)
    expect((await api(h.url, 'GET', '/api/threads')).body.threads).toHaveLength(1)
    const id = first.body.threadId as string

    // Prompt: the same messageId, one prompt journaled, one user message on the feed.
    const tab = await SseClient.open(`${h.url}/api/threads/${id}/follow`)
    cleanups.push(() => tab.close())
    const ask = { message: 'call ui_dialog {"method":"confirm","title":"Go?"}' }
    const k2 = randomUUID()
    const prompted = await api(h.url, 'POST', `/api/threads/${id}/prompt`, ask, keyed(k2))
    expect(prompted.status).toBe(202)
    const asked = await tab.waitFor(is('extension-ui-request'))
    const repeated = await api(h.url, 'POST', `/api/threads/${id}/prompt`, ask, keyed(k2))
    expect(repeated).toMatchObject({ status: 202, body: prompted.body })
    check('POST', `${T}/prompt`, repeated)
    expect(h.registry.store.journal(id).prompts).toHaveLength(1)

    // Dialog: the repeat is the first 204, not "no open question".
    const k3 = randomUUID()
    expect((await api(h.url, 'POST', `/api/threads/${id}/dialog`, { id: asked.data.id, confirmed: true }, keyed(k3))).status).toBe(204)
    const answeredAgain = await api(h.url, 'POST', `/api/threads/${id}/dialog`, { id: asked.data.id, confirmed: true }, keyed(k3))
    expect(answeredAgain.status).toBe(204)
    expect(answeredAgain.headers.get('idempotent-replayed')).toBe('true')
    await tab.waitFor(is('status', { busy: false, run: 1 }))
    expect(tab.events().filter((e) => e === 'dialog-settled')).toHaveLength(1)

    // Abort: the first answer (409 idle) comes back, even once something runs.
    const k4 = randomUUID()
    const idle = await api(h.url, 'POST', `/api/threads/${id}/abort`, {}, keyed(k4))
    expect(idle).toMatchObject({ status: 409, body: { reason: 'idle' } })
    await api(h.url, 'POST', `/api/threads/${id}/prompt`, ask)
    await tab.waitFor((f) => f.event === 'extension-ui-request' && f.data.id !== asked.data.id)
    const stillIdle = await api(h.url, 'POST', `/api/threads/${id}/abort`, {}, keyed(k4))
    expect(stillIdle).toMatchObject({ status: 409, body: idle.body })
    check('POST', `${T}/abort`, stillIdle)
    expect((await api(h.url, 'GET', `/api/threads/${id}`)).body).toMatchObject({ busy: true, run: 2 })
    expect(tab.events().filter((e) => e === 'user-message')).toHaveLength(2)
  })

  it('the same Idempotency-Key with another request is 422 and runs nothing', async () => {
    const h = await harness()
    const check = await contract(h.url)
    const key = randomUUID()
    expect((await api(h.url, 'POST', '/api/threads', { id: 'a1' }, keyed(key))).status).toBe(201)
    const other = await api(h.url, 'POST', '/api/threads', { id: 'a2' }, keyed(key))
    expect(other).toMatchObject({ status: 422, body: { reason: 'idempotency-key-reused' } })
    check('POST', '/api/threads', other)
    // Another route with the same key is another request too.
    const prompt = await api(h.url, 'POST', '/api/threads/a1/prompt', { message: 'hi' }, keyed(key))
    expect(prompt.status).toBe(422)
    check('POST', `${T}/prompt`, prompt)
    for (const [path, route] of [['/api/threads/a1/abort', `${T}/abort`], ['/api/threads/a1/dialog', `${T}/dialog`]]) {
      const res = await api(h.url, 'POST', path, path.endsWith('dialog') ? { id: 'q', value: 'v' } : {}, keyed(key))
      expect(res.status, path).toBe(422)
      check('POST', route, res)
    }
    expect((await api(h.url, 'GET', '/api/threads')).body.threads.map((t: { threadId: string }) => t.threadId)).toEqual(['a1'])
    expect(h.registry.store.journal('a1').prompts).toHaveLength(0)
  })

  it('concurrent repeats with the same Idempotency-Key run once', async () => {
    const h = await harness()
    const key = randomUUID()
    const creates = await Promise.all(Array.from({ length: 12 }, () => api(h.url, 'POST', '/api/threads', {}, keyed(key))))
    expect(new Set(creates.map((r) => `${r.status} ${r.body.threadId}`)).size).toBe(1)
    expect(creates[0].status).toBe(201)
    expect((await api(h.url, 'GET', '/api/threads')).body.threads).toHaveLength(1)

    const id = creates[0].body.threadId as string
    const promptKey = randomUUID()
    const prompts = await Promise.all(
      Array.from({ length: 12 }, () => api(h.url, 'POST', `/api/threads/${id}/prompt`, { message: 'only once' }, keyed(promptKey))),
    )
    expect(new Set(prompts.map((r) => `${r.status} ${r.body.messageId}`)).size).toBe(1)
    expect(prompts[0].status).toBe(202)
    expect(h.registry.store.journal(id).prompts.map((p) => p.text)).toEqual(['only once'])
  })

  it('an Idempotency-Key outlives a restart: the repeat after reopening the data dir gets the first answer', async () => {
    let h = await startHarness({ demoDelayMs: 2 })
    const dataDir = h.dataDir
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }))
    const key = randomUUID()
    const first = await api(h.url, 'POST', '/api/threads', { title: 'Before' }, keyed(key))
    expect(first.status).toBe(201)
    await h.close({ keepData: true })

    h = await startHarness({ demoDelayMs: 2, dataDir })
    cleanups.push(() => h.close({ keepData: true }))
    const again = await api(h.url, 'POST', '/api/threads', { title: 'Before' }, keyed(key))
    expect(again).toMatchObject({ status: 201, body: first.body })
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect((await api(h.url, 'GET', '/api/threads')).body.threads).toHaveLength(1)
    expect((await api(h.url, 'POST', '/api/threads', { title: 'After' }, keyed(key))).status).toBe(422)
  })

  it('the web client sends a fresh Idempotency-Key with each write and retries a lost answer with the same key, never an HTTP error', async () => {
    const h = await harness()
    const realFetch = globalThis.fetch
    const delays = RETRY_DELAYS_MS.splice(0, RETRY_DELAYS_MS.length, 1, 1, 1)
    const sent: { url: string; key?: string }[] = []
    let loseNext = 0
    globalThis.fetch = (async (input: string, init?: RequestInit) => {
      const key = (init?.headers as Record<string, string> | undefined)?.['idempotency-key']
      sent.push({ url: String(input), key })
      const response = await realFetch(input, init)
      // The server ran it and answered; the answer never reaches the page.
      if (loseNext > 0 && loseNext--) throw new TypeError('Failed to fetch')
      return response
    }) as typeof fetch
    apiConfig.base = h.url
    try {
      loseNext = 2
      const created = await client.createThread({ title: 'Retried' })
      expect(sent).toHaveLength(3)
      expect(new Set(sent.map((s) => s.key)).size).toBe(1)
      expect(sent[0].key).toMatch(/^[0-9a-f]{32}$/)
      expect((await api(h.url, 'GET', '/api/threads')).body.threads.map((t: { threadId: string }) => t.threadId)).toEqual([created.threadId])

      sent.length = 0
      loseNext = 1
      const receipt = await client.prompt(created.threadId, 'once, though sent twice')
      expect(sent.map((s) => s.key)).toEqual([sent[0].key, sent[0].key])
      expect(receipt).toMatchObject({ threadId: created.threadId, run: 1 })
      expect(h.registry.store.journal(created.threadId).prompts).toHaveLength(1)

      // Each call its own key; an HTTP error is not retried.
      sent.length = 0
      await expect(client.abort('nope')).rejects.toBeInstanceOf(ApiError)
      await expect(client.answerDialog(created.threadId, { id: 'no-such', value: 'x' })).rejects.toBeInstanceOf(ApiError)
      expect(sent).toHaveLength(2)
      expect(sent[0].key).not.toBe(sent[1].key)
      expect(sent.every((s) => s.key)).toBe(true)
    } finally {
      globalThis.fetch = realFetch
      apiConfig.base = ''
      RETRY_DELAYS_MS.splice(0, RETRY_DELAYS_MS.length, ...delays)
    }
  })
})

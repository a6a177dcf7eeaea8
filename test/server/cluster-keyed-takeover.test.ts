/**
 * A keyed prompt whose owner dies after admitting it but before its answer reached the engine's keys
 * (`th_idem`): the key was claimed in the prompt's own admission record in the thread's log, so the
 * node that takes the thread over knows it was admitted and answers a retry with the answer the
 * first would have had — the prompt never runs a second time. Two nodes in this process on the
 * in-process engine; the owner "dies" by losing its lease and never coming back, with the answer's
 * write to the keys held back (the seam), which is the window a kill -9 leaves open.
 */
import { describe, expect, it } from 'vitest'
import { MemoryCluster } from '../../src/host/cluster/memory.js'
import type { ClusterEngine } from '../../src/host/cluster/port.js'
import { api, is, SseClient } from './harness.js'
import { inProcessNodes } from './in-process-cluster.js'

/** The node dies between admitting and recording: its answers never reach the keys, and once its lease is gone it never rejoins. */
const diesBeforeTheAnswer = (engine: ClusterEngine): ClusterEngine => ({
  ...engine,
  keys: { ...engine.keys, record: () => Promise.reject(new Error('the node died before its answer reached the engine')) },
  membership: Object.assign(Object.create(engine.membership) as ClusterEngine['membership'], { rejoin: () => new Promise<void>(() => {}) }),
})

describe('a keyed prompt whose owner died before its answer was recorded', () => {
  const { node, tabs } = inProcessNodes('keyed-takeover')

  async function twoNodes(demoDelayMs = 2) {
    const cluster = new MemoryCluster()
    const a = await node(cluster, 'na', { demoDelayMs, engine: diesBeforeTheAnswer })
    const b = await node(cluster, 'nb', { demoDelayMs })
    return { cluster, a, b, die: () => cluster.expire(a.node.self.id) }
  }

  it('that ran: the same key through another node gets the same 202, replayed, and the prompt ran once', async () => {
    const { cluster, a, b, die } = await twoNodes()
    expect((await api(a.url, 'POST', '/api/threads', { id: 'k1' })).status).toBe(201)
    const tab = await SseClient.open(`${b.url}/api/threads/k1/follow`)
    tabs.push(tab)
    const key = { 'idempotency-key': 'ran-once' }
    const first = await api(a.url, 'POST', '/api/threads/k1/prompt', { message: 'run me once' }, key)
    expect(first.status).toBe(202)
    expect(cluster.owners.get('k1')?.record.name).toBe('na')
    await tab.waitFor(is('settled', { run: 1, aborted: false }))
    // The engine's keys hold na's claim and no answer.
    expect(cluster.keys.get('ran-once')?.record.answer).toBeUndefined()

    die()
    const again = await api(b.url, 'POST', '/api/threads/k1/prompt', { message: 'run me once' }, key)
    expect({ status: again.status, body: again.body }).toEqual({ status: first.status, body: first.body })
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    // A prompt after it: had the repeat run the first again, this one's run would be 3.
    const next = await api(b.url, 'POST', '/api/threads/k1/prompt', { message: 'and then me' })
    expect(next).toMatchObject({ status: 202, body: { run: 2 } })
    await tab.waitFor(is('settled', { run: 2 }))
    expect(tab.frames.filter((f) => f.event === 'user-message').map((f) => f.data.text)).toEqual(['run me once', 'and then me'])
    // Later repeats, on either node, are answered from the engine's keys.
    expect(cluster.keys.get('ran-once')?.record.answer?.status).toBe(202)
  })

  it('that was queued and never started: the retry gets the same 202 (queued), the prompt comes back owner-lost once and never runs', async () => {
    const { a, b, die } = await twoNodes(20)
    expect((await api(a.url, 'POST', '/api/threads', { id: 'k2' })).status).toBe(201)
    const tab = await SseClient.open(`${b.url}/api/threads/k2/follow`)
    tabs.push(tab)
    expect((await api(a.url, 'POST', '/api/threads/k2/prompt', { message: 'slow 500' })).status).toBe(202)
    await tab.waitFor(is('assistant-delta'))
    const key = { 'idempotency-key': 'queued-once' }
    const first = await api(a.url, 'POST', '/api/threads/k2/prompt', { message: 'queued behind', deliverAs: 'followUp' }, key)
    expect(first).toMatchObject({ status: 202, body: { run: 1, queued: true } })

    die()
    await tab.waitFor(is('prompt-rejected', { messageId: first.body.messageId, reason: 'owner-lost' }))
    const again = await api(b.url, 'POST', '/api/threads/k2/prompt', { message: 'queued behind', deliverAs: 'followUp' }, key)
    expect({ status: again.status, body: again.body }).toEqual({ status: first.status, body: first.body })
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    const next = await api(b.url, 'POST', '/api/threads/k2/prompt', { message: 'and then me' })
    expect(next).toMatchObject({ status: 202, body: { run: 2, queued: false } })
    await tab.waitFor(is('settled', { run: 2 }))
    expect(tab.frames.filter((f) => f.event === 'user-message').map((f) => f.data.text)).toEqual(['slow 500', 'and then me'])
    expect(tab.frames.filter(is('prompt-rejected', { messageId: first.body.messageId }))).toHaveLength(1)
  })
})

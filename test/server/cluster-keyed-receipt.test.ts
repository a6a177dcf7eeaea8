/**
 * A keyed prompt's 202 in cluster mode waits for what the thread's log must hold for a retry to get
 * the same answer on any node — its admission, with the key and the receipt — and for nothing else:
 * not for a record written after the machine's answer (it would queue behind the frames of the run
 * the prompt starts), and not for the engine's keys (`th_idem`), which get the answer after it is sent.
 */
import { describe, expect, it } from 'vitest'
import { MemoryCluster } from '../../src/host/cluster/memory.js'
import type { ClusterEngine, ThreadRecord } from '../../src/host/cluster/port.js'
import { api, is, SseClient } from './harness.js'
import { inProcessNodes } from './in-process-cluster.js'

/** Every record of a thread's log, batches opened. */
function recordsOf(cluster: MemoryCluster, threadId: string): ThreadRecord[] {
  const open = (record: ThreadRecord): ThreadRecord[] => (record.kind === 'batch' ? record.records.flatMap(open) : [record])
  return (cluster.logs.get(threadId) ?? []).flatMap(open)
}

describe("a keyed prompt's 202 in cluster mode", () => {
  const { node: start, tabs } = inProcessNodes('keyed-receipt')
  const node = (cluster: MemoryCluster, name: string, engine?: (engine: ClusterEngine) => ClusterEngine, demoDelayMs = 2) =>
    start(cluster, name, { demoDelayMs, ...(engine ? { engine } : {}) })

  it('is in the log with its admission: the accepted record holds the receipt the 202 gave, idle (the next run) or running (queued), and no record follows the answer', async () => {
    const cluster = new MemoryCluster()
    const a = await node(cluster, 'na', undefined, 20)
    expect((await api(a.url, 'POST', '/api/threads', { id: 'r1' })).status).toBe(201)
    const tab = await SseClient.open(`${a.url}/api/threads/r1/follow`)
    tabs.push(tab)
    const idle = await api(a.url, 'POST', '/api/threads/r1/prompt', { message: 'slow 40' }, { 'idempotency-key': 'idle-1' })
    expect(idle).toMatchObject({ status: 202, body: { run: 1, queued: false } })
    await tab.waitFor(is('assistant-delta'))
    const running = await api(a.url, 'POST', '/api/threads/r1/prompt', { message: 'after it', deliverAs: 'followUp' }, { 'idempotency-key': 'running-1' })
    expect(running).toMatchObject({ status: 202, body: { run: 1, queued: true } })
    await tab.waitFor(is('settled', { run: 1 }))

    const records = recordsOf(cluster, 'r1')
    const accepted = (messageId: string) => records.find((r) => r.kind === 'prompt' && r.op === 'accepted' && r.messageId === messageId)
    expect(accepted(idle.body.messageId)).toMatchObject({ key: { key: 'idle-1', run: 1, queued: false } })
    expect(accepted(running.body.messageId)).toMatchObject({ key: { key: 'running-1', run: 1, queued: true } })
    expect(records.filter((r) => r.kind === 'prompt' && r.op === 'admitted')).toEqual([])
  })

  it("does not wait for the engine's keys to record it: with their writes never answering, the keyed prompt is answered 202 and its repeat replays it", async () => {
    const cluster = new MemoryCluster()
    const stalled = (engine: ClusterEngine): ClusterEngine => ({ ...engine, keys: { ...engine.keys, record: () => new Promise<void>(() => {}) } })
    const a = await node(cluster, 'na', stalled)
    const b = await node(cluster, 'nb', stalled)
    expect((await api(a.url, 'POST', '/api/threads', { id: 'r2' })).status).toBe(201)
    const key = { 'idempotency-key': 'no-keys-write' }
    const first = await api(a.url, 'POST', '/api/threads/r2/prompt', { message: 'once' }, key)
    expect(first).toMatchObject({ status: 202, body: { run: 1 } })
    // Through the other node too: it passes the repeat on to the owner, which replays its answer.
    for (const via of [a, b]) {
      const again = await api(via.url, 'POST', '/api/threads/r2/prompt', { message: 'once' }, key)
      expect({ status: again.status, body: again.body, replayed: again.headers.get('idempotent-replayed') }).toEqual({ status: 202, body: first.body, replayed: 'true' })
    }
    expect(cluster.keys.get('no-keys-write')?.record.answer).toBeUndefined()
  })
  it('passed on by another node is claimed in the engine once: the receiving node digests it as the owner does, so the claim started as it arrives is the one its guard takes up', async () => {
    const cluster = new MemoryCluster()
    const claims: string[] = []
    /** The claims made by the time each command passed on to the owner had been handed to it (before fastify saw it). */
    const atArrival: number[] = []
    const counted = (engine: ClusterEngine): ClusterEngine => ({
      ...engine,
      keys: { ...engine.keys, claim: (key, ...rest) => (claims.push(key), engine.keys.claim(key, ...rest)) },
      commands: {
        ...engine.commands,
        serve: (threadId, handler) =>
          engine.commands.serve(threadId, (request, answer) => {
            const handled = handler(request, answer)
            atArrival.push(claims.length)
            return handled
          }),
      },
    })
    const a = await node(cluster, 'na', counted)
    const b = await node(cluster, 'nb')
    expect((await api(a.url, 'POST', '/api/threads', { id: 'r3' })).status).toBe(201)
    const tab = await SseClient.open(`${a.url}/api/threads/r3/follow`)
    tabs.push(tab)
    expect(await api(a.url, 'POST', '/api/threads/r3/prompt', { message: 'take it' })).toMatchObject({ status: 202 })
    await tab.waitFor(is('settled', { run: 1 }))
    const key = { 'idempotency-key': 'passed-on' }
    const first = await api(b.url, 'POST', '/api/threads/r3/prompt', { message: 'once', deliverAs: 'followUp' }, key)
    expect(first).toMatchObject({ status: 202, body: { run: 2 } })
    expect(claims.filter((k) => k === 'passed-on')).toHaveLength(1)
    // Claimed as the command arrived, not after its way through fastify to the write guard.
    expect(atArrival).toEqual([1])
    const again = await api(b.url, 'POST', '/api/threads/r3/prompt', { message: 'once', deliverAs: 'followUp' }, key)
    expect({ status: again.status, body: again.body }).toEqual({ status: 202, body: first.body })
  })
})

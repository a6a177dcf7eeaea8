/**
 * A thread's owner keeps checkpoints of its log, and a node that starts to mirror the thread starts
 * from the newest (docs/flows/cluster.md): a tab on it gets the owner's snapshot, and a command that
 * makes it the owner runs on, numbered on, from the same fold. Two nodes in this process on the
 * in-process engine, a checkpoint every 5 records.
 */
import { describe, expect, it } from 'vitest'
import { MemoryCluster } from '../../src/host/cluster/memory.js'
import type { ClusterEngine } from '../../src/host/cluster/port.js'
import { api, is, SseClient } from './harness.js'
import { inProcessNodes } from './in-process-cluster.js'

describe('checkpoints of a thread\'s log across nodes', () => {
  const { node, tabs } = inProcessNodes('checkpoints')
  const follow = async (url: string) => {
    const tab = await SseClient.open(url)
    tabs.push(tab)
    return tab
  }

  it('a node that had never read the thread reads its log from the owner\'s checkpoint on: its tab gets the owner\'s snapshot, and a prompt that makes it the owner runs on from there', async () => {
    const cluster = new MemoryCluster()
    const reads: number[] = []
    const noted = (engine: ClusterEngine): ClusterEngine => ({
      ...engine,
      logs: { ...engine.logs, read: (id, onRecord, caughtUp, after) => (reads.push(after ?? 0), engine.logs.read(id, onRecord, caughtUp, after)) },
    })
    const a = await node(cluster, 'na', { checkpointEvery: 5, idleMs: 300 })
    const b = await node(cluster, 'nb', { checkpointEvery: 5, engine: noted })
    expect((await api(a.url, 'POST', '/api/threads', { id: 'c1' })).status).toBe(201)
    const onA = await follow(`${a.url}/api/threads/c1/follow`)
    for (let run = 1; run <= 3; run++) {
      expect((await api(a.url, 'POST', '/api/threads/c1/prompt', { message: `prompt ${run}` })).status).toBe(202)
      await onA.waitFor((f) => is('settled')(f) && f.data.run === run)
    }
    await onA.waitFor((f) => f.event === 'status' && f.data.busy === false && f.data.run === 3)
    await expect.poll(() => cluster.checkpoints.get('c1')?.position ?? 0).toBeGreaterThan(0)
    const kept = cluster.checkpoints.get('c1')!.position

    const onB = await follow(`${b.url}/api/threads/c1/follow`)
    const fresh = await follow(`${a.url}/api/threads/c1/follow`)
    const [snapshotB, snapshotA] = await Promise.all([onB.waitFor(is('snapshot')), fresh.waitFor(is('snapshot'))])
    expect(reads).toEqual([kept])
    expect(snapshotB.data).toEqual(snapshotA.data)
    expect(snapshotB.data.transcript.filter((e: { kind: string }) => e.kind === 'user').map((e: { text: string }) => e.text)).toEqual(['prompt 1', 'prompt 2', 'prompt 3'])

    // na's idle time passes and it gives the thread back; nb takes it on the next prompt, from its fold.
    await expect.poll(() => cluster.owners.has('c1'), { timeout: 10_000 }).toBe(false)
    expect((await api(b.url, 'POST', '/api/threads/c1/prompt', { message: 'prompt 4' })).status).toBe(202)
    expect(cluster.owners.get('c1')?.record.name).toBe('nb')
    await onB.waitFor((f) => is('settled')(f) && f.data.run === 4)
    const ids = onB.frames.filter((f) => f.id !== undefined).map((f) => Number(f.id))
    expect(ids).toEqual(ids.map((_, i) => ids[0] + i))
    expect(onB.frames.filter((f) => f.event === 'user-message').map((f) => f.data.text)).toEqual(['prompt 4'])
  })
})

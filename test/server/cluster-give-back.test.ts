/**
 * A cluster node owns only the threads it is running: one that goes cold on its owner is given back
 * (its owner record released once what was written for it is in its log), so the next command —
 * through any node — takes it anew, and a dead node's takeover is of its running threads alone.
 * Two nodes in this process on the in-process engine.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MemoryCluster } from '../../src/host/cluster/memory.js'
import { EngineAway, type ClusterEngine } from '../../src/host/cluster/port.js'
import { api, is, SseClient } from './harness.js'
import { startNode, type InProcessNode } from './in-process-cluster.js'

describe('a cluster node gives back the threads it no longer runs', () => {
  let dataDir: string
  let cluster: MemoryCluster
  let a: InProcessNode
  let b: InProcessNode
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'threadhost-give-back-'))
    cluster = new MemoryCluster()
    a = await startNode(cluster, 'na', dataDir, { idleMs: 300 })
    b = await startNode(cluster, 'nb', dataDir, { idleMs: 60_000 })
  })
  afterAll(async () => {
    await b?.close()
    await a?.close()
    await rm(dataDir, { recursive: true, force: true })
  })

  it('a thread gone cold on its owner is given back: no owner record is left, and the next prompt through another node runs there, numbered on', async () => {
    expect((await api(a.url, 'POST', '/api/threads', { id: 'g1' })).status).toBe(201)
    const tab = await SseClient.open(`${b.url}/api/threads/g1/follow`)
    try {
      expect((await api(a.url, 'POST', '/api/threads/g1/prompt', { message: 'hello' })).status).toBe(202)
      expect(cluster.owners.get('g1')?.record.name).toBe('na')
      await tab.waitFor((f) => is('settled')(f) && f.data.run === 1)
      // na's idle time passes: the runtime goes, and with it the ownership.
      await tab.waitFor((f) => f.event === 'status' && f.data.live === false, 10_000)
      await expect.poll(() => cluster.owners.has('g1'), { timeout: 5000 }).toBe(false)

      expect((await api(b.url, 'POST', '/api/threads/g1/prompt', { message: 'again' })).status).toBe(202)
      expect(cluster.owners.get('g1')?.record.name).toBe('nb')
      await tab.waitFor((f) => is('settled')(f) && f.data.run === 2)
      const ids = tab.frames.map((f) => Number(f.id))
      expect(ids).toEqual([...ids].sort((x, y) => x - y))
      expect(new Set(ids).size).toBe(ids.length)
      expect(tab.frames.filter((f) => f.event === 'user-message').map((f) => f.data.text)).toEqual(['hello', 'again'])
    } finally {
      tab.close()
    }
  })

  /**
   * A thread that goes cold on a node `name` whose first `failures` releases fail, as they do while
   * the engine does not answer; then a prompt through nb, which runs once the record is gone. How
   * many releases were tried.
   */
  async function coldWhileReleasesFail(name: string, threadId: string, failures: number): Promise<number> {
    let tried = 0
    const failing = (engine: ClusterEngine): ClusterEngine => ({
      ...engine,
      owners: { ...engine.owners, release: (ownership) => (tried++ < failures ? Promise.reject(new EngineAway('no answer in time')) : engine.owners.release(ownership)) },
    })
    const node = await startNode(cluster, name, dataDir, { idleMs: 300, engine: failing })
    try {
      expect((await api(node.url, 'POST', '/api/threads', { id: threadId })).status).toBe(201)
      const tab = await SseClient.open(`${b.url}/api/threads/${threadId}/follow`)
      try {
        expect((await api(node.url, 'POST', `/api/threads/${threadId}/prompt`, { message: 'hello' })).status).toBe(202)
        await tab.waitFor((f) => f.event === 'status' && f.data.live === false, 10_000)
        await expect.poll(() => cluster.owners.has(threadId), { timeout: 10_000 }).toBe(false)
        expect((await api(b.url, 'POST', `/api/threads/${threadId}/prompt`, { message: 'again' })).status).toBe(202)
        await tab.waitFor((f) => is('settled')(f) && f.data.run === 2)
      } finally {
        tab.close()
      }
    } finally {
      await node.close()
    }
    return tried
  }

  it('a release the engine does not answer is tried again: the record does not stay behind naming a live node that no longer serves the thread', async () => {
    expect(await coldWhileReleasesFail('nc', 'g2', 1)).toBeGreaterThan(1)
  })

  it('a give-back the engine never answered (away longer than the retries) is released by the node\'s next full scan: the next prompt through another node runs', async () => {
    // Every try of the give-back fails: the engine was away for all of them.
    expect(await coldWhileReleasesFail('nd', 'g3', 5)).toBeGreaterThan(5)
  })

  it('a node that loses its lease while a full scan is reading gives back none of its old life\'s records: its new life takes the thread over and settles the run it left open', async () => {
    let hold: { entered: () => void; go: Promise<void> } | undefined
    // The next full read of the owner records waits, once armed, until the test lets it through.
    const heldList = (engine: ClusterEngine): ClusterEngine => ({
      ...engine,
      owners: {
        ...engine.owners,
        list: async () => {
          const read = await engine.owners.list()
          const held = hold
          hold = undefined
          if (held) {
            held.entered()
            await held.go
          }
          return read
        },
      },
    })
    const own = new MemoryCluster()
    const e = await startNode(own, 'ne', dataDir, { engine: heldList })
    try {
      expect((await api(e.url, 'POST', '/api/threads', { id: 'g4' })).status).toBe(201)
      expect((await api(e.url, 'POST', '/api/threads/g4/prompt', { message: 'slow 10000' })).status).toBe(202)
      const oldLife = e.node.self.id
      await expect.poll(() => own.owners.get('g4')?.record.node).toBe(oldLife)
      let go!: () => void
      const entered = new Promise<void>((resolve) => (hold = { entered: resolve, go: new Promise<void>((r) => (go = r)) }))
      await entered
      // The read comes back while the node is between its lives: the lease lost, the new one not yet joined.
      own.expire(oldLife)
      go()
      await expect.poll(() => e.node.self.id, { timeout: 10_000 }).not.toBe(oldLife)
      const settled = () => (own.logs.get('g4') ?? []).some((r) => r.kind === 'frames' && r.frames.some((f) => f.includes('event: settled') && f.includes('"aborted":true')))
      await expect.poll(settled, { timeout: 10_000 }).toBe(true)
    } finally {
      await e.close()
    }
  })
})

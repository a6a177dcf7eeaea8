/**
 * Every node answers for every thread, the moment it exists: a thread made on one node reaches the others'
 * lists through the index's watch a moment later, and a request to another node in between (a tab sent
 * there by the load balancer right after the create) finds it in the index rather than a 404
 * (src/host/cluster/cluster-node.ts `lookUp`, docs/flows/cluster.md).
 */
import { describe, expect, it } from 'vitest'
import { MemoryCluster } from '../../src/host/cluster/memory.js'
import type { ClusterEngine } from '../../src/host/cluster/port.js'
import { api, is, SseClient } from './harness.js'
import { inProcessNodes } from './in-process-cluster.js'

/** An engine seam: the index's notices of new rows reach this node only once `release()`d; its reads of the index are counted. */
function slowWatch() {
  const held: (() => void)[] = []
  let holding = true
  const lookups: string[] = []
  return {
    lookups,
    release: () => {
      holding = false
      for (const deliver of held.splice(0)) deliver()
    },
    engine: (engine: ClusterEngine): ClusterEngine => ({
      ...engine,
      index: {
        ...engine.index,
        get: (threadId) => (lookups.push(threadId), engine.index.get(threadId)),
        watch: (onPut, onDelete) => engine.index.watch((row, revision) => (holding ? held.push(() => onPut(row, revision)) : onPut(row, revision)), onDelete),
      },
    }),
  }
}

describe('a thread made on another node a moment ago', () => {
  const { node, tabs } = inProcessNodes('lookup')

  it('is found through a node that has not heard its row yet: its summary, a follow and a prompt answer, and a thread that does not exist is still 404', async () => {
    const cluster = new MemoryCluster()
    const watch = slowWatch()
    const a = await node(cluster, 'na')
    const b = await node(cluster, 'nb', { engine: watch.engine })
    expect((await api(a.url, 'POST', '/api/threads', { id: 'fresh', title: 'made on a' })).status).toBe(201)
    await expect.poll(() => cluster.rows.has('fresh')).toBe(true)

    expect(await api(b.url, 'GET', '/api/threads/fresh')).toMatchObject({ status: 200, body: { threadId: 'fresh', title: 'made on a' } })
    const tab = await SseClient.open(`${b.url}/api/threads/fresh/follow`)
    tabs.push(tab)
    expect(tab.status).toBe(200)
    await tab.waitFor(is('snapshot'))
    expect((await api(b.url, 'POST', '/api/threads/fresh/prompt', { message: 'hello' })).status).toBe(202)
    await tab.waitFor(is('settled', { run: 1 }))
    // Listed from then on: asked of the index once.
    expect(watch.lookups).toEqual(['fresh'])

    expect((await api(b.url, 'GET', '/api/threads/nowhere')).status).toBe(404)
    watch.release()
  })
})

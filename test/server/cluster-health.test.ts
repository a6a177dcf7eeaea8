/**
 * `GET /api/health` on a cluster node names the node and the live nodes (docs/flows/cluster.md) from
 * what the takeover scan last saw: a load balancer that polls it costs the engine no listing per poll.
 */
import { describe, expect, it } from 'vitest'
import { MemoryCluster } from '../../src/host/cluster/memory.js'
import type { ClusterEngine } from '../../src/host/cluster/port.js'
import { api } from './harness.js'
import { inProcessNodes } from './in-process-cluster.js'

describe('GET /api/health on a cluster node', () => {
  const { node } = inProcessNodes('health')

  it('names the live nodes from the takeover scan: polled many times a second, it lists the engine\'s nodes no more than the scan does', async () => {
    const cluster = new MemoryCluster()
    let listings = 0
    const counted = (engine: ClusterEngine): ClusterEngine => ({ ...engine, membership: { ...engine.membership, live: () => (listings++, engine.membership.live()) } })
    const a = await node(cluster, 'na', { engine: counted })
    const b = await node(cluster, 'nb')
    await expect.poll(async () => (await api(a.url, 'GET', '/api/health')).body?.cluster, { timeout: 5000 }).toEqual({ mode: 'memory', nodes: ['na', 'nb'] })
    // Until the node's first scan (250 ms after it starts) health lists the nodes itself.
    await expect.poll(async () => {
      const before = listings
      await api(a.url, 'GET', '/api/health')
      return listings - before
    }, { timeout: 5000 }).toBe(0)
    const before = listings
    for (let k = 0; k < 20; k++) expect((await api(a.url, 'GET', '/api/health')).body).toMatchObject({ node: 'na', cluster: { nodes: ['na', 'nb'] } })
    // The scan's own full read, every 2 s, may fall in the middle.
    expect(listings - before).toBeLessThanOrEqual(1)
    // A node that leaves is gone from it as soon as the scan sees its lease end.
    await b.close()
    await expect.poll(async () => (await api(a.url, 'GET', '/api/health')).body?.cluster?.nodes, { timeout: 5000 }).toEqual(['na'])
  })
})

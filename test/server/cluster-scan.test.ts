/**
 * The takeover scan's reads (src/host/cluster/takeover-scan.ts), on a clock the test
 * holds: with every node live, a scan only asks whether the nodes of the last full read still are;
 * the nodes and every owner record are read in full when one is not, and every 2 s of the node's clock.
 */
import { describe, expect, it } from 'vitest'
import { MemoryCluster } from '../../src/host/cluster/memory.js'
import type { ClusterEngine } from '../../src/host/cluster/port.js'
import { api } from './harness.js'
import { inProcessNodes } from './in-process-cluster.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe("the takeover scan's reads", () => {
  const { node } = inProcessNodes('scan')

  async function watched() {
    const cluster = new MemoryCluster()
    let at = 0
    const reads = { owners: 0 }
    const counted = (engine: ClusterEngine): ClusterEngine => ({ ...engine, owners: { ...engine.owners, list: () => (reads.owners++, engine.owners.list()) } })
    // nb first: a node that joins later is seen at a full read, which this clock holds back.
    const b = await node(cluster, 'nb')
    const a = await node(cluster, 'na', { engine: counted, clock: () => at })
    await expect.poll(async () => (await api(a.url, 'GET', '/api/health')).body?.cluster?.nodes, { timeout: 5000 }).toEqual(['na', 'nb'])
    await sleep(600)
    return { cluster, a, b, reads, advance: (ms: number) => void (at += ms) }
  }

  it('with every node live, reads the owner records in full once per 2 s of its clock, not at each scan (4 a second)', async () => {
    const { reads, advance } = await watched()
    const before = reads.owners
    await sleep(1200)
    expect(reads.owners).toBe(before)
    advance(1999)
    await sleep(600)
    expect(reads.owners).toBe(before)
    advance(1)
    await expect.poll(() => reads.owners, { timeout: 2000 }).toBe(before + 1)
  })

  it('reads in full at the next scan once a node of its view is not live, whatever its clock says', async () => {
    const { b, reads, a } = await watched()
    const before = reads.owners
    await b.close()
    await expect.poll(() => reads.owners, { timeout: 2000 }).toBeGreaterThan(before)
    expect((await api(a.url, 'GET', '/api/health')).body?.cluster?.nodes).toEqual(['na'])
  })

  it('reads in full at the next scan once a node it saw lost its lease, and has its next life from the next full read on', async () => {
    const { cluster, b, reads, a, advance } = await watched()
    const before = reads.owners
    const old = b.node.self.id
    cluster.expire(old)
    await expect.poll(() => reads.owners, { timeout: 2000 }).toBeGreaterThan(before)
    // The lost node rejoins under a new id with its name; a node that joined is seen at a full read.
    await expect.poll(() => b.node.self.id !== old, { timeout: 2000 }).toBe(true)
    const afterLoss = reads.owners
    advance(2000)
    await expect.poll(() => reads.owners, { timeout: 2000 }).toBe(afterLoss + 1)
    expect((await api(a.url, 'GET', '/api/health')).body?.cluster?.nodes).toEqual(['na', 'nb'])
    // Its old life is out of the view: the quick checks pass again, and nothing more is read in full.
    const settled = reads.owners
    await sleep(800)
    expect(reads.owners).toBe(settled)
  })
})

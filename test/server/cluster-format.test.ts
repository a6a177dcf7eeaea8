/**
 * A node joins only a cluster whose live nodes write its record format (RECORD_FORMAT,
 * docs/flows/cluster.md): one that would misread the others' records, or have its own misread, stays out.
 */
import { describe, expect, it } from 'vitest'
import { OtherRecordFormat } from '../../src/host/cluster/cluster-node.js'
import { MemoryCluster } from '../../src/host/cluster/memory.js'
import { RECORD_FORMAT } from '../../src/host/cluster/port.js'
import { api } from './harness.js'
import { inProcessNodes } from './in-process-cluster.js'

describe('a cluster of nodes that write other record formats', () => {
  const { node } = inProcessNodes('format')

  it('a node started while a node of another format is live does not join: it says which node and both formats, and holds no lease', async () => {
    const cluster = new MemoryCluster()
    const a = await node(cluster, 'na')
    const started = node(cluster, 'newer', { format: RECORD_FORMAT + 1 })
    await expect(started).rejects.toBeInstanceOf(OtherRecordFormat)
    await expect(started).rejects.toThrow(`node na writes the cluster's records in format ${RECORD_FORMAT} and this threadhost in format ${RECORD_FORMAT + 1}`)
    expect([...cluster.members.nodes.values()].map((n) => n.name)).toEqual(['na'])
    // The node already there goes on, alone.
    await expect.poll(async () => (await api(a.url, 'GET', '/api/health')).body?.cluster?.nodes, { timeout: 5000 }).toEqual(['na'])
  })

  it('a node of this format started beside a live node of another format does not join either; once that one is gone it does', async () => {
    const cluster = new MemoryCluster()
    const older = cluster.members.membership('older', RECORD_FORMAT - 1)
    await older.join()
    await expect(node(cluster, 'na')).rejects.toThrow(`node older writes the cluster's records in format ${RECORD_FORMAT - 1} and this threadhost in format ${RECORD_FORMAT}`)
    expect([...cluster.members.nodes.values()].map((n) => n.name)).toEqual(['older'])
    older.close()
    const a = await node(cluster, 'na')
    const created = await api(a.url, 'POST', '/api/threads', {})
    expect(created.status).toBe(201)
  })
})

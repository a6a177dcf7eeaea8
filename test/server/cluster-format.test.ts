/**
 * A node joins only a cluster whose live nodes write its record format (RECORD_FORMAT,
 * docs/flows/cluster.md): one that would misread the others' records, or have its own misread, stays out.
 */
import { describe, expect, it } from 'vitest'
import { MemoryCluster } from '../../src/host/cluster/memory.js'
import { EngineAway, RECORD_FORMAT, type ClusterEngine } from '../../src/host/cluster/port.js'
import { OtherRecordFormat } from '../../src/host/cluster/record-format.js'
import { CHECKPOINT_FORMAT } from '../../src/host/cluster/mirror-state.js'
import { api } from './harness.js'
import { inProcessNodes } from './in-process-cluster.js'

/** An engine seam whose next `fail(n)` listings of the live nodes fail as when the engine is away. */
function flakyListings() {
  let failing = 0
  return {
    fail: (n: number) => void (failing = n),
    engine: (engine: ClusterEngine): ClusterEngine => ({
      ...engine,
      // A proxy, not a copy: the membership's `self` changes with each life.
      membership: new Proxy(engine.membership, {
        get: (target, name) => (name === 'live' ? () => (failing-- > 0 ? Promise.reject(new EngineAway()) : target.live()) : Reflect.get(target, name)),
      }),
    }),
  }
}

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

  it('a node whose log checkpoints are in another format does not join either, and says so: the log is trimmed below checkpoints, so one it cannot read would lose what they hold', async () => {
    const cluster = new MemoryCluster()
    await node(cluster, 'na')
    const started = node(cluster, 'newer', { checkpointFormat: CHECKPOINT_FORMAT + 1 })
    await expect(started).rejects.toBeInstanceOf(OtherRecordFormat)
    await expect(started).rejects.toThrow(`node na keeps its log checkpoints in format ${CHECKPOINT_FORMAT} and this threadhost in format ${CHECKPOINT_FORMAT + 1}: a change of format`)
    expect([...cluster.members.nodes.values()].map((n) => n.name)).toEqual(['na'])
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

  /** A node away past its lease while a node of the next format joins; its first `failures` asks for the live nodes after that fail. */
  async function awayWhileNextJoins(failures: number): Promise<void> {
    const cluster = new MemoryCluster()
    const listings = flakyListings()
    const a = await node(cluster, 'na', { engine: listings.engine })
    expect((await api(a.url, 'POST', '/api/threads', { id: 'f1' })).status).toBe(201)
    expect((await api(a.url, 'POST', '/api/threads/f1/prompt', { message: 'hello' })).status).toBe(202)
    // Away past its lease (frozen, cut off): meanwhile a node of the next version joins.
    const next = cluster.members.membership('next', RECORD_FORMAT + 1)
    await next.join()
    const oldLife = a.node.self.id
    expect(cluster.owners.get('f1')?.record.node).toBe(oldLife)
    listings.fail(failures)
    cluster.expire(oldLife)
    // It tried to join again, as a new life, and left.
    await expect.poll(() => a.node.self.id, { timeout: 5000 }).not.toBe(oldLife)
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect([...cluster.members.nodes.values()].map((n) => n.name)).toEqual(['next'])
    // Asked to run a command on the thread its old life held, it does not take it.
    expect((await api(a.url, 'POST', '/api/threads/f1/prompt', { message: 'again' })).status).toBe(503)
    expect(cluster.owners.get('f1')?.record.node).toBe(oldLife)
    next.close()
  }

  it('a node that lost its lease while nodes of another format joined does not join again: it holds no lease and takes no thread', () => awayWhileNextJoins(0))

  it('… nor when the engine does not answer its first ask for the live nodes: it asks again', () => awayWhileNextJoins(1))

  it('a node whose lease is lost again while it waits to rejoin asks its process to stop once, with the error naming the other format', async () => {
    const cluster = new MemoryCluster()
    const listings = flakyListings()
    const stops: Error[] = []
    const a = await node(cluster, 'na', { engine: listings.engine, onMustStop: (error) => void stops.push(error) })
    const next = cluster.members.membership('next', RECORD_FORMAT + 1)
    await next.join()
    const first = a.node.self.id
    listings.fail(4)
    cluster.expire(first)
    // Joined again as a new life, which waits for the engine to list the formats; that lease is lost too.
    await expect.poll(() => a.node.self.id).not.toBe(first)
    cluster.expire(a.node.self.id)
    await expect.poll(() => stops.length, { timeout: 5000 }).toBe(1)
    await new Promise((resolve) => setTimeout(resolve, 600))
    expect(stops).toHaveLength(1)
    expect(stops[0]).toBeInstanceOf(OtherRecordFormat)
    expect([...cluster.members.nodes.values()].map((n) => n.name)).toEqual(['next'])
    next.close()
  })
})

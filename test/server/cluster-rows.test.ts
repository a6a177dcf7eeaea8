/**
 * A thread is listed alike on every node of a cluster: the row its owner writes as a prompt is
 * admitted (its run, its last activity, the first prompt that names an untitled thread) and as each
 * run ends (its preview, the last thing said) reaches the engine's index, so a tab on another node
 * lists it as a tab on the owner does.
 */
import { describe, expect, it } from 'vitest'
import { MemoryCluster } from '../../src/host/cluster/memory.js'
import { Fenced, type ClusterEngine } from '../../src/host/cluster/port.js'
import { api, is, SseClient } from './harness.js'
import { carriesAccepted, inProcessNodes, threadRanOnce } from './in-process-cluster.js'

/** The thread's summary as a node lists it, without what says where it runs. */
async function listed(url: string, threadId: string) {
  const list = (await api(url, 'GET', '/api/threads')).body.threads as Array<Record<string, unknown>>
  const { live: _live, busy: _busy, node: _node, ...summary } = list.find((t) => t.threadId === threadId) ?? {}
  return summary
}

/**
 * An engine seam: once `take()` is called, another node takes the thread — renames it, in the engine only
 * (on NATS the index watch is asynchronous: its row is not heard here yet) — and appends first as this
 * node's next prompt goes in.
 */
function takenOver(cluster: MemoryCluster) {
  let taken = false
  return {
    take: () => void (taken = true),
    logs: (engine: ClusterEngine): ClusterEngine['logs'] => ({
      ...engine.logs,
      append: async (threadId, record, expected, id) => {
        if (!taken || !carriesAccepted(record)) return engine.logs.append(threadId, record, expected, id)
        cluster.rows.set(threadId, { ...cluster.rows.get(threadId)!, title: 'renamed on its next owner' })
        throw new Fenced(threadId, 'another node appended first')
      },
    }),
  }
}

describe("a thread's summary on every node", () => {
  const { node, tabs } = inProcessNodes('rows')

  it('is the one its owner lists: named by its first prompt, its run, last activity and preview as its prompts and runs left them, not as its creation left them', async () => {
    const cluster = new MemoryCluster()
    const a = await node(cluster, 'na')
    const b = await node(cluster, 'nb')
    expect((await api(a.url, 'POST', '/api/threads', { id: 'r1' })).status).toBe(201)
    const tab = await SseClient.open(`${a.url}/api/threads/r1/follow`)
    tabs.push(tab)
    for (const [run, message] of [[1, 'plan the release'], [2, 'and the notes']] as const) {
      expect(await api(a.url, 'POST', '/api/threads/r1/prompt', { message })).toMatchObject({ status: 202, body: { run } })
      await tab.waitFor(is('settled', { run }))
    }
    const onOwner = await listed(a.url, 'r1')
    expect(onOwner).toMatchObject({ run: 2 })
    expect(JSON.stringify(onOwner)).toContain('plan the release')
    expect(onOwner.preview).toMatch(/and the notes/)
    await expect.poll(() => listed(b.url, 'r1')).toEqual(onOwner)
  })

  it("is not written over by a node that lost the thread: its row as it stopped stays its own, the next owner's stays the cluster's", async () => {
    const cluster = new MemoryCluster()
    const over = takenOver(cluster)
    const a = await node(cluster, 'na', { engine: (engine) => ({ ...engine, logs: over.logs(engine) }) })
    await threadRanOnce(a, 'r2', 'first', tabs)
    over.take()
    expect((await api(a.url, 'POST', '/api/threads/r2/prompt', { message: 'second' })).status).toBe(503)
    await expect.poll(() => a.node.owns('r2')).toBe(false)
    // The lost thread's runtime is gone (its row kept here as it stopped); the index has the next owner's.
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(cluster.rows.get('r2')?.title).toBe('renamed on its next owner')
  })

  it('is not written over by a row its last owner wrote before it lost the thread and the engine took only after', async () => {
    const cluster = new MemoryCluster()
    // Armed below: the engine takes no row until released (away, as in an outage); then another node takes the thread.
    let away = false
    const waiting: Array<() => void> = []
    const over = takenOver(cluster)
    const seam = (engine: ClusterEngine): ClusterEngine => ({
      ...engine,
      index: {
        ...engine.index,
        put: (row, still) => (away ? new Promise<number | undefined>((resolve) => waiting.push(() => void engine.index.put(row, still).then(resolve))) : engine.index.put(row, still)),
      },
      logs: over.logs(engine),
    })
    const a = await node(cluster, 'na', { engine: seam })
    const { tab } = await threadRanOnce(a, 'r3', 'first', tabs)
    away = true
    expect(await api(a.url, 'POST', '/api/threads/r3/prompt', { message: 'second' })).toMatchObject({ status: 202, body: { run: 2 } })
    await tab.waitFor(is('settled', { run: 2 }))
    expect(waiting.length).toBeGreaterThan(0)
    over.take()
    expect((await api(a.url, 'POST', '/api/threads/r3/prompt', { message: 'third' })).status).toBe(503)
    await expect.poll(() => a.node.owns('r3')).toBe(false)
    // The engine back: what waited of the lost ownership is not written over the next owner's row.
    away = false
    for (const release of waiting.splice(0)) release()
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(cluster.rows.get('r3')).toMatchObject({ title: 'renamed on its next owner', run: 1 })
  })
})

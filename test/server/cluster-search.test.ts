/**
 * A search gives the same answer on every node of a cluster: each node's message index holds what was
 * said in the threads it ran, so a search asks every live node and keeps each thread's best hit.
 */
import { describe, expect, it } from 'vitest'
import { MemoryCluster } from '../../src/host/cluster/memory.js'
import { SearchResults } from '../../src/schemas/search.js'
import { Value } from 'typebox/value'
import { api, is, SseClient } from './harness.js'
import { inProcessNodes, threadRanOnce } from './in-process-cluster.js'

/** The threads a search for `q` through the node at `url` finds, best first. */
const found = async (url: string, q: string) => ((await api(url, 'GET', `/api/search?q=${q}`)).body.results as Array<{ threadId: string }>).map((hit) => hit.threadId)
/**
 * How long a search (or health's list of nodes) is polled for what it should show: a search waits up to
 * 1 s for a node that is slow to answer, health lists a node that joined within about 2 s — under load,
 * more than vitest's default second.
 */
const SEARCHED = { timeout: 5000 }

describe('a search on a cluster', () => {
  const { node, tabs } = inProcessNodes('search')

  it('finds what was said in threads run on any node, through any node: one hit a thread, titled as the node lists it', async () => {
    const cluster = new MemoryCluster()
    const a = await node(cluster, 'na')
    const b = await node(cluster, 'nb')
    // Each thread run on its own node, after both started: neither node read the other's at its start.
    for (const [id, owner, message] of [['s1', a, 'deploy the blue widget'], ['s2', b, 'is the widget green']] as const) await threadRanOnce(owner, id, message, tabs)
    for (const url of [a.url, b.url]) {
      // Health lists a node that joined within about 2 s (the takeover scan's listing).
      await expect.poll(async () => (await api(url, 'GET', '/api/health')).body.cluster.nodes, SEARCHED).toEqual(['na', 'nb'])
      const widget = (await api(url, 'GET', '/api/search?q=widget')).body
      expect(Value.Check(SearchResults, widget)).toBe(true)
      expect(widget.results.map((hit: { threadId: string }) => hit.threadId).sort()).toEqual(['s1', 's2'])
      expect(widget.results.find((hit: { threadId: string }) => hit.threadId === 's1')).toMatchObject({ title: 'deploy the blue widget', kind: 'user' })
      expect((await api(url, 'GET', '/api/search?q=blue')).body.results.map((hit: { threadId: string }) => hit.threadId)).toEqual(['s1'])
      expect((await api(url, 'GET', '/api/search?q=widget&limit=1')).body.results).toHaveLength(1)
    }
  })

  it('finds a thread as it stands, not as a node that ran it before indexed it: an edit on its next node hides the old words on every node', async () => {
    const cluster = new MemoryCluster()
    // A thread at rest is given back at once: the next command through another node makes that node its owner.
    const a = await node(cluster, 'na', { idleMs: 50 })
    const b = await node(cluster, 'nb', { idleMs: 50 })
    const { tab: onA, prompt } = await threadRanOnce(a, 's3', 'deploy the blue widget', tabs)
    onA.close()
    await expect.poll(() => a.node.owns('s3')).toBe(false)
    for (const url of [a.url, b.url]) await expect.poll(() => found(url, 'blue'), SEARCHED).toEqual(['s3'])

    const onB = await SseClient.open(`${b.url}/api/threads/s3/follow`)
    tabs.push(onB)
    expect((await api(b.url, 'POST', '/api/threads/s3/edit', { messageId: prompt, text: 'deploy the red widget' })).status).toBe(202)
    await onB.waitFor(is('settled', { run: 2 }))
    expect(b.node.owns('s3')).toBe(true)
    for (const url of [a.url, b.url]) {
      await expect.poll(() => found(url, 'red'), SEARCHED).toEqual(['s3'])
      expect(await found(url, 'blue')).toEqual([])
    }
  })

  it('finds a thread as it stands after its next node shows another version of a prompt: no run, and every node finds that version', async () => {
    const cluster = new MemoryCluster()
    const a = await node(cluster, 'na', { idleMs: 50 })
    // Its next node keeps it live: the row is not written again as it goes cold.
    const b = await node(cluster, 'nb')
    const { tab: onA, prompt } = await threadRanOnce(a, 's4', 'deploy the blue widget', tabs)
    expect((await api(a.url, 'POST', '/api/threads/s4/edit', { messageId: prompt, text: 'deploy the red widget' })).status).toBe(202)
    await onA.waitFor(is('settled', { run: 2 }))
    onA.close()
    await expect.poll(() => a.node.owns('s4')).toBe(false)
    for (const url of [a.url, b.url]) await expect.poll(() => found(url, 'red'), SEARCHED).toEqual(['s4'])

    // The first version again, through the other node: it takes the thread, and no run starts.
    const onB = await SseClient.open(`${b.url}/api/threads/s4/follow`)
    tabs.push(onB)
    expect((await api(b.url, 'POST', '/api/threads/s4/version', { messageId: prompt })).status).toBe(200)
    await onB.waitFor((f) => is('branch')(f) && JSON.stringify(f.data.transcript).includes('blue'))
    expect(b.node.owns('s4')).toBe(true)
    for (const url of [a.url, b.url]) {
      await expect.poll(() => found(url, 'blue'), SEARCHED).toEqual(['s4'])
      expect(await found(url, 'red')).toEqual([])
    }
  })
})

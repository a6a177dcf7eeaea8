/**
 * A search gives the same answer on every node of a cluster: each node's message index holds what was
 * said in the threads it ran, so a search asks every live node and keeps each thread's best hit.
 */
import { describe, expect, it } from 'vitest'
import { MemoryCluster } from '../../src/host/cluster/memory.js'
import { SearchResults } from '../../src/schemas/search.js'
import { Value } from 'typebox/value'
import { api, is, SseClient } from './harness.js'
import { inProcessNodes } from './in-process-cluster.js'

describe('a search on a cluster', () => {
  const { node, tabs } = inProcessNodes('search')

  it('finds what was said in threads run on any node, through any node: one hit a thread, titled as the node lists it', async () => {
    const cluster = new MemoryCluster()
    const a = await node(cluster, 'na')
    const b = await node(cluster, 'nb')
    // Each thread run on its own node, after both started: neither node read the other's at its start.
    for (const [id, owner, message] of [['s1', a, 'deploy the blue widget'], ['s2', b, 'is the widget green']] as const) {
      expect((await api(owner.url, 'POST', '/api/threads', { id })).status).toBe(201)
      const tab = await SseClient.open(`${owner.url}/api/threads/${id}/follow`)
      tabs.push(tab)
      expect((await api(owner.url, 'POST', `/api/threads/${id}/prompt`, { message })).status).toBe(202)
      await tab.waitFor(is('settled', { run: 1 }))
    }
    for (const url of [a.url, b.url]) {
      await expect.poll(async () => (await api(url, 'GET', '/api/health')).body.cluster.nodes).toEqual(['na', 'nb'])
      const found = (await api(url, 'GET', '/api/search?q=widget')).body
      expect(Value.Check(SearchResults, found)).toBe(true)
      expect(found.results.map((hit: { threadId: string }) => hit.threadId).sort()).toEqual(['s1', 's2'])
      expect(found.results.find((hit: { threadId: string }) => hit.threadId === 's1')).toMatchObject({ title: 'deploy the blue widget', kind: 'user' })
      expect((await api(url, 'GET', '/api/search?q=blue')).body.results.map((hit: { threadId: string }) => hit.threadId)).toEqual(['s1'])
      expect((await api(url, 'GET', '/api/search?q=widget&limit=1')).body.results).toHaveLength(1)
    }
  })
})

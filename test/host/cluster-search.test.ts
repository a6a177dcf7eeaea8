/**
 * How a search on a cluster picks each thread's hit (src/host/cluster/cluster-search.ts), over the
 * in-process command bus: the hit of the node that wrote the thread's row last, when it answered.
 */
import { describe, expect, it } from 'vitest'
import { searchNodes, serveSearch, type SearchNode } from '../../src/host/cluster/cluster-search.js'
import { localCommandBus } from '../../src/host/cluster/in-process.js'
import type { SearchHit } from '../../src/host/thread-search.js'

/** A node with these hits in its index (best first) and these writers for the cluster's threads. */
function searchNode(name: string, hits: Array<[threadId: string, rank: number]>, writers: Record<string, string>, built = true): SearchNode {
  const index: SearchHit[] = hits.map(([threadId, rank]) => ({ threadId, rank, title: threadId, messageId: `${name}-${threadId}`, kind: 'user', snippet: name, matches: [] }))
  return {
    self: () => ({ id: `${name}-life`, name, format: 1, checkpointFormat: 1 }),
    find: (_q, limit) => index.slice(0, limit),
    built: () => built,
    writerOf: (threadId) => writers[threadId],
    titleOf: (threadId) => threadId,
  }
}

const picked = (hits: SearchHit[]) => hits.map((hit) => [hit.threadId, hit.snippet])

describe('a search on a cluster', () => {
  it("takes a thread's hit from its writer, or none when the writer has none; another node's better-ranked copy does not count", async () => {
    const bus = localCommandBus()
    const writers = { t: 'a', u: 'b', v: 'b' }
    await serveSearch(bus, searchNode('b', [['v', -3]], writers))
    const a = searchNode('a', [['u', -9], ['t', -1]], writers)
    await serveSearch(bus, a)
    expect(picked(await searchNodes(bus, a, 1, 'q', 10))).toEqual([['v', 'b'], ['t', 'a']])
  })

  it("does not let its copies of other nodes' threads crowd its own out of a limited answer", async () => {
    const bus = localCommandBus()
    const writers = { t: 'a', x: 'b', y: 'b' }
    await serveSearch(bus, searchNode('b', [], writers))
    const a = searchNode('a', [['x', -9], ['y', -8], ['t', -1]], writers)
    expect(picked(await searchNodes(bus, a, 1, 'q', 1))).toEqual([['t', 'a']])
  })

  it("takes the best copy for a thread whose writer did not answer, or answered before its index was built", async () => {
    const bus = localCommandBus()
    const writers = { t: 'b', u: 'c' }
    // b is still building its index; c does not answer at all.
    await serveSearch(bus, searchNode('b', [], writers, false))
    const a = searchNode('a', [['t', -2], ['u', -1]], writers)
    expect(picked(await searchNodes(bus, a, 2, 'q', 10))).toEqual([['t', 'a'], ['u', 'a']])
  })
})

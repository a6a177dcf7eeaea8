/**
 * Search on a cluster (`GET /api/search`). A node's message index holds what was said in the threads it
 * ran, and in those it read at its start — not what another node's threads said since. So a search asks
 * every live node, this one too, over the command bus, and keeps each thread's best hit: every node
 * answers alike. A node that does not answer in time leaves its threads out of that answer (the index
 * is derived: a slow node costs a search result, never the search).
 */
import type { SearchHit } from '../thread-search.js'
import type { CommandBus } from './port.js'

export const SEARCH_TOPIC = 'search'
/** How long a search waits for the nodes that have not answered yet. */
export const SEARCH_WAIT_MS = 1000

interface Question {
  q: string
  limit: number
}

/** This node's side: its own index's hits for every node's search. */
export function serveSearch(bus: CommandBus, find: (q: string, limit: number) => SearchHit[]): Promise<() => void> {
  return bus.serveAll(SEARCH_TOPIC, async (body) => {
    const { q, limit } = JSON.parse(body) as Question
    return JSON.stringify(find(q, limit))
  })
}

/**
 * Every live node's hits (`nodes`: how many answer), one per thread — its best —, best first, titled
 * as this node lists the thread; a thread this node does not list (deleted, or not heard of here yet) is left out.
 */
export async function searchNodes(bus: CommandBus, nodes: number, q: string, limit: number, titleOf: (threadId: string) => string | undefined): Promise<SearchHit[]> {
  const answers = await bus.askAll(SEARCH_TOPIC, JSON.stringify({ q, limit } satisfies Question), nodes, SEARCH_WAIT_MS)
  const best = new Map<string, SearchHit>()
  for (const answer of answers) {
    for (const hit of JSON.parse(answer) as SearchHit[]) {
      const known = best.get(hit.threadId)
      if (!known || hit.rank < known.rank) best.set(hit.threadId, hit)
    }
  }
  const hits: SearchHit[] = []
  for (const hit of [...best.values()].sort((a, b) => a.rank - b.rank)) {
    const title = titleOf(hit.threadId)
    if (title !== undefined) hits.push({ ...hit, title })
    if (hits.length >= limit) break
  }
  return hits
}

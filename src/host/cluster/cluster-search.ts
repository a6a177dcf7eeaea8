/**
 * Search on a cluster (`GET /api/search`). A node's message index holds what was said in the threads it
 * ran, and in those it read at its start — not what another node's threads said since, and a thread it
 * ran before may have changed since on another node (an edit, a branch). So a search asks every other
 * live node over the command bus, and takes each thread's hit from the node that wrote the thread's row
 * last (its owner then, whose index had the thread as the row says it): that node's hit, or none when it
 * answered without one. A thread whose row names no node, or one that did not answer, gets the best hit
 * of those that did. A node that does not answer within SEARCH_WAIT_MS leaves its threads out of that
 * answer, and with the engine away the answer is this node's own (the index is derived: a slow node
 * costs a search result, never the search).
 */
import type { SearchHit } from '../thread-search.js'
import type { CommandBus, NodeInfo } from './port.js'

export const SEARCH_TOPIC = 'search'
/** How long a search waits for the nodes that have not answered yet. */
export const SEARCH_WAIT_MS = 1000

interface Question {
  q: string
  limit: number
  /** The asking node's life: it answers from its own index, not over the bus. */
  from: string
}

interface Answer {
  node: string
  hits: SearchHit[]
}

type Find = (q: string, limit: number) => SearchHit[]

/** This node's side: its own index's hits for every other node's search. */
export function serveSearch(bus: CommandBus, self: () => NodeInfo, find: Find): Promise<() => void> {
  return bus.serveAll(SEARCH_TOPIC, async (body) => {
    const { q, limit, from } = JSON.parse(body) as Question
    if (from === self().id) return undefined
    return JSON.stringify({ node: self().name, hits: find(q, limit) } satisfies Answer)
  })
}

export interface SearchNodes {
  self: NodeInfo
  /** How many other live nodes answer. */
  others: number
  local: Find
  /** The node that wrote the thread's row last, when the row names one. */
  writerOf: (threadId: string) => string | undefined
  /** As this node lists the thread; undefined: it does not (deleted, or not heard of here yet), and it is left out. */
  titleOf: (threadId: string) => string | undefined
}

/** Each thread's hit (see above), best first by FTS5's rank, at most `limit`. */
export async function searchNodes(bus: CommandBus, nodes: SearchNodes, q: string, limit: number): Promise<SearchHit[]> {
  const asked = await bus.askAll(SEARCH_TOPIC, JSON.stringify({ q, limit, from: nodes.self.id } satisfies Question), nodes.others, SEARCH_WAIT_MS)
  const answers: Answer[] = [{ node: nodes.self.name, hits: nodes.local(q, limit) }]
  for (const body of asked) {
    try {
      const answer = JSON.parse(body) as Answer
      if (typeof answer?.node === 'string' && Array.isArray(answer.hits)) answers.push(answer)
    } catch {
      // Not an answer this node reads (another version's, say): its node's threads are left out.
    }
  }
  const answered = new Set(answers.map((a) => a.node))
  const best = new Map<string, SearchHit>()
  for (const { node, hits } of answers) {
    for (const hit of hits) {
      const writer = nodes.writerOf(hit.threadId)
      // The writer answered: its hit is the thread's, and no other node's is.
      if (writer !== undefined && answered.has(writer)) {
        if (node === writer) best.set(hit.threadId, hit)
        continue
      }
      const known = best.get(hit.threadId)
      if (!known || hit.rank < known.rank) best.set(hit.threadId, hit)
    }
  }
  const hits: SearchHit[] = []
  for (const hit of [...best.values()].sort((a, b) => a.rank - b.rank)) {
    const title = nodes.titleOf(hit.threadId)
    if (title !== undefined) hits.push({ ...hit, title })
    if (hits.length >= limit) break
  }
  return hits
}

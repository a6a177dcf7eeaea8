/**
 * Search on a cluster (`GET /api/search`). A node's message index holds what was said in the threads it
 * ran, and in those it read at its start — not what another node's threads said since, and a thread it
 * ran before may have changed since on another node (an edit, a branch). So a search asks every other
 * live node over the command bus, and takes each thread's hit from the node that wrote the thread's row
 * last: its owner then, which writes it as it takes the thread, as each run ends and as the thread moves
 * to another branch, so its index has the thread as the row says it. That node's hit, or none when it
 * answered without one. A thread whose row names no node, or whose node did not answer (or answered
 * before its index was built), gets the best hit (FTS5's rank) of those that did. A node that does not
 * answer within SEARCH_WAIT_MS leaves its threads out of that answer, and with the engine away the
 * answer is this node's own: the index is derived, so a slow node costs a search result, never the search.
 */
import type { SearchHit } from '../thread-search.js'
import type { CommandBus, NodeInfo } from './port.js'

export const SEARCH_TOPIC = 'search'
/** How long a search waits for the nodes that have not answered yet. */
export const SEARCH_WAIT_MS = 1000
/** A node looks this many times deeper than `limit` in its index, so its copies of other nodes' threads seldom crowd out its own hits. */
const DEPTH = 3

interface Question {
  q: string
  limit: number
  /** The asking node's life: it answers from its own index, not over the bus. */
  from: string
}

interface Answer {
  node: string
  hits: SearchHit[]
  /** Its index was still being built (the node just started): a hit missing from it says nothing. */
  partial?: boolean
}

/** What a node of a cluster searches with. */
export interface SearchNode {
  self(): NodeInfo
  /** The node's own message index. */
  find(q: string, limit: number): SearchHit[]
  /** Whether the node's index holds every thread it read at its start. */
  built(): boolean
  /** The node that wrote the thread's row last, when the row names one. */
  writerOf(threadId: string): string | undefined
  /** As this node lists the thread; undefined: it does not (deleted, or not heard of here yet), and it is left out. */
  titleOf(threadId: string): string | undefined
}

/**
 * A node's hits: `limit` of the threads it wrote (or whose writer is unknown) first, then `limit` of the
 * others' — which the asker takes only for a thread whose writer did not answer.
 */
function answerOf(node: SearchNode, q: string, limit: number): Answer {
  const self = node.self().name
  const hits = node.find(q, limit * DEPTH)
  const mine = (hit: SearchHit) => (node.writerOf(hit.threadId) ?? self) === self
  return { node: self, hits: [...hits.filter(mine).slice(0, limit), ...hits.filter((hit) => !mine(hit)).slice(0, limit)], ...(node.built() ? {} : { partial: true }) }
}

/** This node's side: its own index's hits for every other node's search. */
export function serveSearch(bus: CommandBus, node: SearchNode): Promise<() => void> {
  return bus.serveAll(SEARCH_TOPIC, async (body) => {
    const { q, limit, from } = JSON.parse(body) as Question
    if (from === node.self().id) return undefined
    return JSON.stringify(answerOf(node, q, limit))
  })
}

/** Each thread's hit (see above), best first by FTS5's rank, at most `limit`. `others`: how many other live nodes answer. */
export async function searchNodes(bus: CommandBus, node: SearchNode, others: number, q: string, limit: number): Promise<SearchHit[]> {
  const asked = await bus.askAll(SEARCH_TOPIC, JSON.stringify({ q, limit, from: node.self().id } satisfies Question), others, SEARCH_WAIT_MS)
  const answers: Answer[] = [answerOf(node, q, limit)]
  for (const body of asked) {
    try {
      const answer = JSON.parse(body) as Answer
      if (typeof answer?.node === 'string' && Array.isArray(answer.hits)) answers.push(answer)
    } catch {
      // Not an answer this node reads (another version's, say): its node's threads are left out.
    }
  }
  const answered = new Set(answers.filter((a) => !a.partial).map((a) => a.node))
  const best = new Map<string, SearchHit>()
  for (const { node: from, hits } of answers) {
    for (const hit of hits) {
      const writer = node.writerOf(hit.threadId)
      // The writer answered: its hit is the thread's, and no other node's is.
      if (writer !== undefined && answered.has(writer)) {
        if (from === writer) best.set(hit.threadId, hit)
        continue
      }
      const known = best.get(hit.threadId)
      if (!known || hit.rank < known.rank) best.set(hit.threadId, hit)
    }
  }
  const hits: SearchHit[] = []
  for (const hit of [...best.values()].sort((a, b) => a.rank - b.rank)) {
    const title = node.titleOf(hit.threadId)
    if (title !== undefined) hits.push({ ...hit, title })
    if (hits.length >= limit) break
  }
  return hits
}

/**
 * Search over every thread's messages (the host's message index, SQLite FTS5), and the workspace
 * roots a new thread may be given: what the client's list and empty state ask.
 */
import type { ThreadRegistry } from '../../host/thread-registry.js'
import type { SearchHit } from '../../host/thread-search.js'
import type { RouteHandlers } from './register.js'

const tags = ['threads']

/** `search`: a cluster's, which asks every node (host/cluster/cluster-search.ts); else this host's own index. */
export function searchRoutes(registry: ThreadRegistry, search?: (q: string, limit?: number) => Promise<SearchHit[]>): RouteHandlers {
  return {
    searchThreads: {
      tags,
      summary: "Threads whose messages match the query, each with its best match's snippet",
      description:
        'Every word of `q` must appear in one message (a prompt or a reply), each as a prefix (`log` finds `login`); punctuation is ignored. One hit per thread, the best first, from an index kept as messages are appended.',
      handler: async (request) => {
        const { q, limit } = request.query
        const hits = await (search ?? ((q, limit) => Promise.resolve(registry.search(q, limit))))(q, limit ? Number(limit) : undefined)
        // `rank` orders hits inside the host (a cluster's merge): the API's hit is the schema's.
        return { results: hits.map(({ rank: _rank, ...hit }) => hit) }
      },
    },
    listWorkspaces: {
      tags,
      summary: 'The workspace roots a new thread may work in (`--workspace`), the default first',
      handler: async () => registry.workspaceRoots(),
    },
  }
}

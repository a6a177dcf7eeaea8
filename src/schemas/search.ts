/** Search over what was said in the threads, and the workspace roots a new thread may take (see docs/api.md). */
import { Type, type Static } from 'typebox'

/** `GET /api/search?q=`: every word must appear in one message (each a prefix: "log" finds "login"). */
export const SearchQuery = Type.Object({
  q: Type.String({ minLength: 1, maxLength: 200 }),
  /** At most this many threads (default 50). */
  limit: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,2}$' })),
})
export type SearchQuery = Static<typeof SearchQuery>

export const SearchHit = Type.Object({
  threadId: Type.String(),
  title: Type.String(),
  /** The best-matching message in the thread. */
  messageId: Type.String(),
  kind: Type.Union([Type.Literal('user'), Type.Literal('assistant')]),
  /** Some words around the match. */
  snippet: Type.String(),
  /** `[start, end)` offsets into `snippet` of the matched words. */
  matches: Type.Array(Type.Tuple([Type.Integer(), Type.Integer()])),
})
export type SearchHit = Static<typeof SearchHit>

/** One hit per thread, the best-matching threads first. */
export const SearchResults = Type.Object({ results: Type.Array(SearchHit) })
export type SearchResults = Static<typeof SearchResults>

/** `GET /api/workspaces`: the `--workspace` roots a new thread's `cwd` may be, the default first. */
export const WorkspaceList = Type.Object({ roots: Type.Array(Type.String()), default: Type.String() })
export type WorkspaceList = Static<typeof WorkspaceList>

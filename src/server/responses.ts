/**
 * The response side of the HTTP contract, as schemas: what each status carries. They live in
 * src/schemas/responses.ts, beside the route table (src/schemas/api-routes.ts) the typed client
 * reads; the server's files take them from here.
 */
import { ErrorBody } from '../schemas/index.js'

export { ErrorBody }
export { errorBody, EventStream, guarded, NoContent, notFound, ReasonError, unprocessable, withBody } from '../schemas/responses.js'

/** The text of a `409 unavailable`: what is wrong, and the two ways out. */
export const unavailableError = (threadId: string, reason = 'damaged') =>
  `thread ${threadId} is unavailable: its session file is damaged (${reason}); repair it and restart threadhost, or delete the thread`

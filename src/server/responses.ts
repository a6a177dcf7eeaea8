/**
 * What the server says in an error body beyond its schema. The response schemas themselves live in
 * src/schemas/responses.ts, beside the route table (src/schemas/api-routes.ts) the typed client reads.
 */
export { EventStream, guarded } from '../schemas/responses.js'

/** The text of a `409 unavailable`: what is wrong, and the two ways out. */
export const unavailableError = (threadId: string, reason = 'damaged') =>
  `thread ${threadId} is unavailable: its session file is damaged (${reason}); repair it and restart threadhost, or delete the thread`

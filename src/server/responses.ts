/**
 * Replying with an outcome: the table in src/schemas/outcomes.ts says its status and body (a
 * refusal's `{error, code, ...}`), so a route never picks a status itself. The response schemas
 * live in src/schemas/responses.ts, beside the route table (src/schemas/api-routes.ts).
 */
import type { FastifyReply } from 'fastify'
import { answerOf, type OutcomeTable } from '../schemas/outcomes.js'

/** Sends the table's answer to `outcome`; `context` holds what its text names (the thread's id, …). */
export function replyWith<O extends { kind: string }, C>(reply: FastifyReply, table: OutcomeTable<O, C>, outcome: NoInfer<O>, context: NoInfer<C>): FastifyReply {
  const { status, body } = answerOf(table, outcome, context)
  return body === undefined ? reply.code(status).send() : reply.code(status).send(body)
}

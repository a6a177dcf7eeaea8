/**
 * `POST …/dialog`: answer (or withdraw) an open question. The question's own machine judges the
 * answer; this maps its verdict to 204, 404 or 422.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { apiRoutes } from '../../schemas/api-routes.js'
import type { ThreadRegistry } from '../../host/thread-registry.js'
import type { WriteGuards } from '../writes.js'

/** What the route takes and answers: the table the typed client reads too. */
const { answerDialog } = apiRoutes

export const dialogRoutes: FastifyPluginAsyncTypebox<{ registry: ThreadRegistry; writes: WriteGuards }> = async (app, { registry, writes }) => {
  app.post(
    answerDialog.path,
    {
      schema: {
        tags: ['dialogs'],
        summary: 'Answer an open question: `{id, value}`, `{id, confirmed}`, `{id, answers}` or `{id, cancelled: true}`',
        params: answerDialog.params,
        body: answerDialog.body,
        response: answerDialog.response,
      },
      preHandler: [writes.idempotent, writes.durable],
    },
    async (request, reply) => {
      const { id } = request.params
      const outcome = await registry.answer(id, request.body)
      switch (outcome.kind) {
        case 'answered':
          return reply.code(204).send()
        case 'not-live':
          return reply.code(404).send({ error: `no live session for thread ${id}` })
        case 'unknown':
          // Never asked, or already settled (another tab was first): worth a look when it repeats.
          request.log.warn({ threadId: id, dialogId: request.body.id }, 'answer names no open question')
          return reply.code(404).send({ error: `no open question ${request.body.id} on thread ${id}` })
        case 'refused':
          return reply.code(422).send({ error: 'the answer does not fit the question', refusal: outcome.refusal })
      }
    },
  )
}

/**
 * `POST …/dialog`: answer (or withdraw) an open question. The question's own machine judges the
 * answer; this maps its verdict to 204, 404 or 422.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { DialogAnswerRequest, ThreadParams } from '../../schemas/index.js'
import type { ThreadRegistry } from '../../host/thread-registry.js'
import { NoContent, notFound, unprocessable, withBody } from '../responses.js'
import { refusedWrites, type WriteGuards } from '../writes.js'

export const dialogRoutes: FastifyPluginAsyncTypebox<{ registry: ThreadRegistry; writes: WriteGuards }> = async (app, { registry, writes }) => {
  app.post(
    '/api/threads/:id/dialog',
    {
      schema: {
        tags: ['dialogs'],
        summary: 'Answer an open question: `{id, value}`, `{id, confirmed}`, `{id, answers}` or `{id, cancelled: true}`',
        params: ThreadParams,
        body: DialogAnswerRequest,
        response: {
          204: NoContent('taken (or withdrawn): every follower gets `dialog-settled`'),
          404: notFound('the thread is not live, or no open question has that id'),
          422: unprocessable(
            'the answer does not fit the question; it stays open (`refusal` says why). Or the `Idempotency-Key` was used with another request (`reason`)',
            { refusal: Type.Optional(Type.String()), reason: Type.Optional(Type.String()) },
          ),
          ...withBody,
          ...refusedWrites,
        },
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

/**
 * The thread routes: models, create, list, read, change, delete, the composer's draft and commands.
 * Each asks the registry and maps its answer to a status; the codes are the contract in docs/api.md.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { CommandList, CreateThreadBody, DraftBody, ModelList, ThreadParams, ThreadSummary, UpdateThreadBody } from '../../schemas/index.js'
import type { ThreadRegistry } from '../../host/thread-registry.js'
import { errorBody, guarded, NoContent, notFound, ReasonError, unprocessable, withBody } from '../responses.js'
import { refusedWrites, type WriteGuards } from '../writes.js'

export const CreatedReceipt = Type.Object({ threadId: Type.String() }, { additionalProperties: false })
export const ThreadList = Type.Object({ threads: Type.Array(ThreadSummary) }, { description: 'most recently updated first' })

const tags = ['threads']

export const threadRoutes: FastifyPluginAsyncTypebox<{ registry: ThreadRegistry; writes: WriteGuards }> = async (app, { registry, writes }) => {
  app.get(
    '/api/models',
    { schema: { tags, summary: 'The models a thread can run on', response: { 200: ModelList, ...guarded } } },
    async () => registry.models(),
  )

  app.post(
    '/api/threads',
    {
      schema: {
        tags,
        summary: 'Create a thread (the body is optional)',
        body: CreateThreadBody,
        response: {
          201: CreatedReceipt,
          409: errorBody('the id is taken, or its thread is still being deleted'),
          422: unprocessable(
            'an unknown model, one without credentials, or an unusable cwd; or the `Idempotency-Key` was used with another request. Nothing was created',
          ),
          ...withBody,
          ...refusedWrites,
        },
      },
      preValidation: emptyBodyIsObject,
      preHandler: [writes.idempotent, writes.durable],
    },
    async (request, reply) => {
      const outcome = await registry.create(request.body ?? {})
      switch (outcome.kind) {
        case 'taken':
          return reply.code(409).send({ error: `thread ${request.body?.id} already exists` })
        case 'invalid':
          return reply.code(422).send({ error: outcome.reason })
        case 'created':
          return reply.code(201).send({ threadId: outcome.threadId })
      }
    },
  )

  app.put(
    '/api/threads/:id/draft',
    {
      schema: {
        tags,
        summary: "The composer's draft, for extensions that read the editor",
        params: ThreadParams,
        body: DraftBody,
        response: { 204: NoContent('taken'), 404: notFound('the thread is not live (this never builds a runtime)'), ...withBody },
      },
    },
    async (request, reply) => {
      return registry.reportDraft(request.params.id, request.body.text)
        ? reply.code(204).send()
        : reply.code(404).send({ error: `thread ${request.params.id} is not live` })
    },
  )

  app.get(
    '/api/threads/:id/commands',
    {
      schema: {
        tags,
        summary: "The composer's commands: threadhost's, then pi's for this thread (builds a cold thread's runtime)",
        params: ThreadParams,
        response: { 200: CommandList, 404: notFound('no such thread'), ...guarded },
      },
    },
    async (request, reply) => {
      const commands = await registry.commands(request.params.id)
      return commands ? { commands } : reply.code(404).send({ error: `no thread ${request.params.id}` })
    },
  )

  app.get('/api/threads', { schema: { tags, summary: 'Every thread', response: { 200: ThreadList, ...guarded } } }, async () => ({
    threads: registry.list(),
  }))

  app.get(
    '/api/threads/:id',
    { schema: { tags, summary: "A thread's summary", params: ThreadParams, response: { 200: ThreadSummary, 404: notFound('no such thread'), ...guarded } } },
    async (request, reply) => {
      const summary = registry.get(request.params.id)
      return summary ?? reply.code(404).send({ error: `no thread ${request.params.id}` })
    },
  )

  app.patch(
    '/api/threads/:id',
    {
      schema: {
        tags,
        summary: 'Rename a thread, or change its model or thinking level for the runs to come',
        params: ThreadParams,
        body: UpdateThreadBody,
        response: {
          200: ThreadSummary,
          404: notFound('no such thread'),
          409: ReasonError('`busy`: a model or thinking level while a run is in flight'),
          422: unprocessable('an unusable model; nothing changed'),
          ...withBody,
          ...refusedWrites,
        },
      },
      preHandler: writes.durable,
    },
    async (request, reply) => {
      const outcome = await registry.update(request.params.id, request.body)
      switch (outcome.kind) {
        case 'updated':
          return outcome.summary
        case 'unknown':
          return reply.code(404).send({ error: `no thread ${request.params.id}` })
        case 'invalid':
          return reply.code(422).send({ error: outcome.reason })
        case 'busy':
          return reply.code(409).send({ error: 'a run is in progress; change the model or thinking level between runs', reason: 'busy' })
      }
    },
  )

  app.delete(
    '/api/threads/:id',
    {
      schema: {
        tags,
        summary: 'Delete a thread (a live one is disposed first)',
        params: ThreadParams,
        response: { 204: NoContent('deleted'), 404: notFound('no such thread'), ...guarded, ...refusedWrites },
      },
      preHandler: writes.durable,
    },
    async (request, reply) => {
      const deleted = await registry.delete(request.params.id)
      return deleted ? reply.code(204).send() : reply.code(404).send({ error: `no thread ${request.params.id}` })
    },
  )
}

/** Create and abort take an optional body: none at all means `{}` (a JSON `null` is a body, and a bad one). */
export async function emptyBodyIsObject(request: { body: unknown }): Promise<void> {
  if (request.body === undefined) request.body = {}
}

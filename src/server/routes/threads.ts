/**
 * The thread routes: models, create, fork, list, read, change, delete, the composer's draft and commands.
 * Each asks the registry and maps its answer to a status; the codes are the contract in docs/api.md.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import {
  CommandList,
  CreateThreadBody,
  DraftBody,
  ForkBody,
  ForkReceipt,
  ModelList,
  ThreadParams,
  ThreadSummary,
  UpdateThreadBody,
} from '../../schemas/index.js'
import type { ThreadRegistry } from '../../host/thread-registry.js'
import { errorBody, guarded, NoContent, notFound, ReasonError, unavailableError, unprocessable, withBody } from '../responses.js'
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

  app.post(
    '/api/threads/:id/fork',
    {
      schema: {
        tags,
        summary: 'Fork a thread before one of its prompts: edit and resend a prompt, or regenerate a reply',
        description:
          'A new thread holding the history before the prompt `fromMessageId` names (a user message, or the prompt that produced the reply named), linked to this one (`parentId`). The receipt gives that prompt, to edit or send again. The source is only read: a thread may be forked mid-run, from any message already persisted.',
        params: ThreadParams,
        body: ForkBody,
        response: {
          201: ForkReceipt,
          404: notFound('no such thread, or no such message in its persisted transcript (a reply still streaming is not yet forkable)'),
          409: ReasonError("`unavailable`: the thread's session file is damaged, so it cannot be read"),
          422: unprocessable('the runtime cannot fork; or the `Idempotency-Key` was used with another request. Nothing was created'),
          ...withBody,
          ...refusedWrites,
        },
      },
      preHandler: [writes.idempotent, writes.durable],
    },
    async (request, reply) => {
      const outcome = await registry.fork(request.params.id, request.body.fromMessageId)
      switch (outcome.kind) {
        case 'forked':
          return reply.code(201).send({ thread: outcome.summary, prompt: outcome.prompt })
        case 'unknown':
          return reply.code(404).send({ error: `no thread ${request.params.id}` })
        case 'unknown-message':
          return reply.code(404).send({ error: `thread ${request.params.id} has no message ${request.body.fromMessageId} to fork at` })
        case 'invalid':
          return reply.code(422).send({ error: outcome.reason })
        case 'unavailable':
          return reply.code(409).send({ error: unavailableError(request.params.id, outcome.reason), reason: 'unavailable' })
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
          409: ReasonError('`busy`: a model or thinking level while a run is in flight; `unavailable`: the thread\'s session file is damaged'),
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
        case 'unavailable':
          return reply.code(409).send({ error: unavailableError(request.params.id, outcome.reason), reason: 'unavailable' })
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

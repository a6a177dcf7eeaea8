/**
 * The thread routes: models, create, fork, list, read, change, delete, the composer's draft and commands.
 * Each asks the registry and maps its answer to a status; the codes are the contract in docs/api.md.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { apiRoutes } from '../../schemas/api-routes.js'
import type { ThreadRegistry } from '../../host/thread-registry.js'
import { unavailableError } from '../responses.js'
import type { WriteGuards } from '../writes.js'

const tags = ['threads']
/** What each route takes and answers: the table the typed client reads too. */
const { listModels, createThread, forkThread, reportDraft, listCommands, listThreads, getThread, updateThread, deleteThread } = apiRoutes

export const threadRoutes: FastifyPluginAsyncTypebox<{ registry: ThreadRegistry; writes: WriteGuards }> = async (app, { registry, writes }) => {
  app.get(
    listModels.path,
    { schema: { tags, summary: 'The models a thread can run on', response: listModels.response } },
    async () => registry.models(),
  )

  app.post(
    createThread.path,
    {
      schema: { tags, summary: 'Create a thread (the body is optional)', body: createThread.body, response: createThread.response },
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
    forkThread.path,
    {
      schema: {
        tags,
        summary: 'Fork a thread before one of its prompts: edit and resend a prompt, or regenerate a reply',
        description:
          'A new thread holding the history before the prompt `fromMessageId` names (a user message, or the prompt that produced the reply named), linked to this one (`parentId`). The receipt gives that prompt, to edit or send again. The source is only read: a thread may be forked mid-run, from any message already persisted.',
        params: forkThread.params,
        body: forkThread.body,
        response: forkThread.response,
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
    reportDraft.path,
    {
      schema: {
        tags,
        summary: "The composer's draft, for extensions that read the editor",
        params: reportDraft.params,
        body: reportDraft.body,
        response: reportDraft.response,
      },
    },
    async (request, reply) => {
      return registry.reportDraft(request.params.id, request.body.text)
        ? reply.code(204).send()
        : reply.code(404).send({ error: `thread ${request.params.id} is not live` })
    },
  )

  app.get(
    listCommands.path,
    {
      schema: {
        tags,
        summary: "The composer's commands: threadhost's, then pi's for this thread (builds a cold thread's runtime)",
        params: listCommands.params,
        response: listCommands.response,
      },
    },
    async (request, reply) => {
      const commands = await registry.commands(request.params.id)
      return commands ? { commands } : reply.code(404).send({ error: `no thread ${request.params.id}` })
    },
  )

  app.get(listThreads.path, { schema: { tags, summary: 'Every thread', response: listThreads.response } }, async () => ({
    threads: registry.list(),
  }))

  app.get(
    getThread.path,
    { schema: { tags, summary: "A thread's summary", params: getThread.params, response: getThread.response } },
    async (request, reply) => {
      const summary = registry.get(request.params.id)
      return summary ?? reply.code(404).send({ error: `no thread ${request.params.id}` })
    },
  )

  app.patch(
    updateThread.path,
    {
      schema: {
        tags,
        summary: 'Rename a thread, or change its model or thinking level for the runs to come',
        params: updateThread.params,
        body: updateThread.body,
        response: updateThread.response,
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
    deleteThread.path,
    {
      schema: { tags, summary: 'Delete a thread (a live one is disposed first)', params: deleteThread.params, response: deleteThread.response },
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

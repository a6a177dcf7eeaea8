/**
 * Starting and stopping runs: `POST …/prompt` and `POST …/abort`. The registry (and the thread's
 * machine behind it) decides; these map its answer to the statuses docs/api.md lists.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { apiRoutes } from '../../schemas/api-routes.js'
import { MAX_PROMPT_CHARS } from '../../schemas/index.js'
import type { ThreadRegistry } from '../../host/thread-registry.js'
import { unavailableError } from '../responses.js'
import { refuseWrite, type WriteGuards } from '../writes.js'
import { emptyBodyIsObject } from './threads.js'

const tags = ['runs']
/** What each route takes and answers: the table the typed client reads too. */
const { prompt, abort } = apiRoutes

export const runRoutes: FastifyPluginAsyncTypebox<{ registry: ThreadRegistry; writes: WriteGuards }> = async (app, { registry, writes }) => {
  app.post(
    prompt.path,
    {
      schema: {
        tags,
        summary: 'Start a run, or queue the prompt into the running one; or run one of threadhost\'s commands',
        description: 'The first prompt to an unknown id creates the thread.',
        params: prompt.params,
        body: prompt.body,
        response: prompt.response,
      },
      preHandler: [writes.idempotent, writes.durable],
    },
    async (request, reply) => {
      const { id } = request.params
      const { message, admission = 'enqueue', deliverAs = 'steer', run } = request.body
      if (message.length > MAX_PROMPT_CHARS) {
        return reply.code(413).send({ error: `a prompt is at most ${MAX_PROMPT_CHARS} characters`, limit: MAX_PROMPT_CHARS })
      }
      const outcome = await registry.prompt(id, { message, admission, deliverAs, ...(run !== undefined ? { run } : {}) })
      switch (outcome.kind) {
        case 'admitted':
          return reply.code(202).send({ threadId: id, messageId: outcome.messageId, run: outcome.run, queued: outcome.queued })
        case 'command-done':
          return reply.code(200).send({ threadId: id, command: outcome.command, thread: outcome.summary })
        case 'unknown-command':
          return reply.code(422).send({
            error: `unknown command /${outcome.name}${outcome.suggestions.length ? `; did you mean ${outcome.suggestions.join(', ')}?` : ''}`,
            suggestions: outcome.suggestions,
          })
        case 'invalid':
          return reply.code(422).send({ error: outcome.reason })
        case 'unknown':
          return reply.code(404).send({ error: `no thread ${id}` })
        case 'busy':
          return reply.code(409).send({ error: `thread ${id} is busy and the prompt asked not to be queued`, reason: 'busy' })
        case 'stale-run':
          return reply.code(409).send({ error: `run ${run} is not the current run of thread ${id}; the prompt was not queued`, reason: 'stale-run' })
        case 'unavailable':
          return reply.code(409).send({ error: unavailableError(id, outcome.reason), reason: 'unavailable' })
        case 'closing':
          return reply.code(503).send({ error: 'threadhost is shutting down' })
        case 'not-durable':
          request.log.warn({ code: outcome.fault.code }, `prompt refused: ${outcome.fault.message}`)
          return refuseWrite(reply, outcome.fault)
        case 'build-failed':
          return reply.code(502).send({ error: `the thread's runtime could not start: ${outcome.reason}` })
        case 'rejected':
          if (outcome.reason === 'unavailable') {
            return reply.code(409).send({ error: unavailableError(id, registry.get(id)?.unavailable), reason: 'unavailable' })
          }
          return reply.code(409).send({ error: `the prompt was not run`, reason: outcome.reason })
      }
    },
  )

  app.post(
    abort.path,
    {
      schema: {
        tags,
        summary: 'Stop the run (the body is optional); the queued prompts are handed back',
        description: 'The run still ends on the follow, by its own `settled`.',
        params: abort.params,
        body: abort.body,
        response: abort.response,
      },
      preValidation: emptyBodyIsObject,
      // A stop is never refused for a full or read-only disk: stopping an agent must always work.
      preHandler: writes.idempotent,
    },
    async (request, reply) => {
      const { id } = request.params
      const outcome = await registry.abort(id, request.body.run)
      switch (outcome.kind) {
        case 'stopped':
          // The count only: the texts are the user's and go back to the caller alone.
          request.log.info({ threadId: id, restored: outcome.restored.length }, 'abort: queue restored to the caller')
          return reply.code(200).send({ threadId: id, restored: outcome.restored })
        case 'not-live':
          return reply.code(404).send({ error: `no live session for thread ${id}` })
        case 'idle':
          return reply.code(409).send({ error: `nothing is running on thread ${id}`, reason: 'idle' })
        case 'stale-run':
          return reply.code(409).send({ error: `run ${request.body.run} is not the current run of thread ${id}`, reason: 'stale-run' })
      }
    },
  )
}

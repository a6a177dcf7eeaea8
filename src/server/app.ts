/**
 * The HTTP layer: validate, send the host an event, read its answer, reply. No behaviour lives
 * here; the codes below are the public contract documented in docs/api.md.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import fastifyStatic from '@fastify/static'
import { type TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { Type } from 'typebox'
import {
  AbortBody,
  CreateThreadBody,
  DialogAnswerRequest,
  DraftBody,
  MAX_PROMPT_CHARS,
  PromptBody,
  ThreadParams,
  UpdateThreadBody,
} from '../schemas/index.js'
import type { ThreadRegistry } from '../host/thread-registry.js'
import { defaultStreamOptions, type StreamOptions } from './event-stream.js'
import { streamFeed } from './follow.js'
import { apiGuard } from './guard.js'

export interface AppOptions {
  registry: ThreadRegistry
  /** Bearer token checked on every /api route; required when bound beyond loopback. */
  token?: string
  /** The built web client; when missing, `/` says how to build it. */
  clientDir?: string
  follow?: Partial<StreamOptions>
  logger?: FastifyServerOptions['logger']
  /** Extra routes (the inspector) registered under the same auth and error handling. */
  plugins?: ((app: FastifyInstance) => Promise<void> | void)[]
}

const FollowQuery = Type.Object({ after: Type.Optional(Type.String()), token: Type.Optional(Type.String()) })

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { registry } = options
  const follow = { ...defaultStreamOptions, ...options.follow }
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: 1 << 20,
    // Followers hold their sockets open; close must not wait for them.
    forceCloseConnections: true,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false } },
  }).withTypeProvider<TypeBoxTypeProvider>()

  app.setErrorHandler((error: { validation?: unknown; statusCode?: number; message: string; code?: string }, request, reply) => {
    if (error.validation) return reply.code(400).send({ error: `bad request: ${error.message}` })
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return reply.code(413).send({ error: 'the request body is too large' })
    const status = error.statusCode && error.statusCode >= 400 ? error.statusCode : 500
    if (status >= 500) request.log.error(error)
    return reply.code(status).send({ error: status >= 500 ? 'internal error' : error.message })
  })

  app.addHook('onRequest', apiGuard({ token: options.token, closing: () => registry.closing }))

  // Clients that always send `content-type: application/json` may send no body to create and abort.
  const json = app.getDefaultJsonParser('error', 'error')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) =>
    body === '' ? done(null, undefined) : json(request, body as string, done),
  )

  app.post('/api/threads', { schema: { body: CreateThreadBody }, preValidation: emptyBodyIsObject }, async (request, reply) => {
    const outcome = await registry.create(request.body ?? {})
    switch (outcome.kind) {
      case 'taken':
        return reply.code(409).send({ error: `thread ${request.body?.id} already exists` })
      case 'invalid':
        return reply.code(422).send({ error: outcome.reason })
      case 'created':
        return reply.code(201).send({ threadId: outcome.threadId })
    }
  })

  app.get('/api/models', async () => registry.models())

  app.put('/api/threads/:id/draft', { schema: { params: ThreadParams, body: DraftBody } }, async (request, reply) => {
    return registry.reportDraft(request.params.id, request.body.text)
      ? reply.code(204).send()
      : reply.code(404).send({ error: `thread ${request.params.id} is not live` })
  })

  app.get('/api/threads/:id/commands', { schema: { params: ThreadParams } }, async (request, reply) => {
    const commands = await registry.commands(request.params.id)
    return commands ? { commands } : reply.code(404).send({ error: `no thread ${request.params.id}` })
  })

  app.get('/api/threads', async () => ({ threads: registry.list() }))

  app.get('/api/threads/:id', { schema: { params: ThreadParams } }, async (request, reply) => {
    const summary = registry.get(request.params.id)
    return summary ?? reply.code(404).send({ error: `no thread ${request.params.id}` })
  })

  app.patch('/api/threads/:id', { schema: { params: ThreadParams, body: UpdateThreadBody } }, async (request, reply) => {
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
  })

  app.delete('/api/threads/:id', { schema: { params: ThreadParams } }, async (request, reply) => {
    const deleted = await registry.delete(request.params.id)
    return deleted ? reply.code(204).send() : reply.code(404).send({ error: `no thread ${request.params.id}` })
  })

  app.post('/api/threads/:id/prompt', { schema: { params: ThreadParams, body: PromptBody } }, async (request, reply) => {
    const { id } = request.params
    const { message, admission = 'enqueue', deliverAs = 'steer' } = request.body
    if (message.length > MAX_PROMPT_CHARS) {
      return reply.code(413).send({ error: `a prompt is at most ${MAX_PROMPT_CHARS} characters`, limit: MAX_PROMPT_CHARS })
    }
    const outcome = await registry.prompt(id, { message, admission, deliverAs })
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
      case 'closing':
        return reply.code(503).send({ error: 'threadhost is shutting down' })
      case 'build-failed':
        return reply.code(502).send({ error: `the thread's runtime could not start: ${outcome.reason}` })
      case 'not-live':
      case 'rejected':
        return reply
          .code(409)
          .send({ error: `the prompt was not run`, reason: outcome.kind === 'rejected' ? outcome.reason : 'not-live' })
    }
  })

  app.post(
    '/api/threads/:id/abort',
    { schema: { params: ThreadParams, body: AbortBody }, preValidation: emptyBodyIsObject },
    async (request, reply) => {
    const { id } = request.params
    const outcome = await registry.abort(id, request.body.run)
    switch (outcome.kind) {
      case 'stopped':
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

  app.post('/api/threads/:id/dialog', { schema: { params: ThreadParams, body: DialogAnswerRequest } }, async (request, reply) => {
    const { id } = request.params
    const outcome = await registry.answer(id, request.body)
    switch (outcome.kind) {
      case 'answered':
        return reply.code(204).send()
      case 'not-live':
        return reply.code(404).send({ error: `no live session for thread ${id}` })
      case 'unknown':
        return reply.code(404).send({ error: `no open question ${request.body.id} on thread ${id}` })
      case 'refused':
        return reply.code(422).send({ error: 'the answer does not fit the question', refusal: outcome.refusal })
    }
  })

  app.get('/api/threads/:id/follow', { schema: { params: ThreadParams, querystring: FollowQuery } }, async (request, reply) => {
    const feed = await registry.feed(request.params.id)
    if (!feed) return reply.code(404).send({ error: `no thread ${request.params.id}` })
    streamFeed(request, reply, feed, follow)
  })

  for (const plugin of options.plugins ?? []) await plugin(app)

  await serveClient(app, options.clientDir)
  return app
}

async function serveClient(app: FastifyInstance, clientDir: string | undefined): Promise<void> {
  if (clientDir && existsSync(join(clientDir, 'index.html'))) {
    await app.register(fastifyStatic, { root: clientDir, prefix: '/', wildcard: false })
    return
  }
  app.get('/', async (_request, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .send(
        '<!doctype html><meta charset="utf-8"><title>threadhost</title>' +
          '<p>threadhost is running, but its web client is not built. Run <code>npm run build</code> (or ' +
          '<code>npm start</code>, which builds it), or use the HTTP API described in <code>docs/api.md</code>.</p>',
      ),
  )
}

/** Create and abort take an optional body: none at all means `{}`. */
async function emptyBodyIsObject(request: { body: unknown }): Promise<void> {
  request.body ??= {}
}

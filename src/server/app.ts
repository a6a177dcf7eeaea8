/**
 * The HTTP layer: validate, send the host an event, read its answer, reply. No behaviour lives
 * here; the codes are the public contract documented in docs/api.md and, as schemas, in the
 * OpenAPI document each route group's schemas build (`GET /api/openapi.json`).
 *
 * This file assembles the app: the guard, the error shape, logging, metrics and the document, then
 * the route groups as plugins (src/server/routes), then the web client.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import fastifyHelmet from '@fastify/helmet'
import fastifyStatic from '@fastify/static'
import { type TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyPluginAsync, type FastifyServerOptions } from 'fastify'
import type { ThreadRegistry } from '../host/thread-registry.js'
import { defaultStreamOptions, type StreamOptions } from './event-stream.js'
import { apiGuard } from './guard.js'
import { RequestLog } from './log.js'
import { installMetrics } from './metrics.js'
import { registerOpenApi } from './openapi.js'
import { replyWith } from './responses.js'
import { schemaCompilers } from './schema-compilers.js'
import { dialogRoutes } from './routes/dialogs.js'
import { changeRoutes } from './routes/changes.js'
import { followRoutes } from './routes/follow.js'
import { registerRoutes } from './routes/register.js'
import { searchRoutes } from './routes/search.js'
import { runRoutes } from './routes/runs.js'
import { threadRoutes } from './routes/threads.js'
import { pushRoutes } from './routes/push.js'
import { PushNotifier } from '../host/push/notifier.js'
import { answerOf, guardOutcomes } from '../schemas/outcomes.js'
import { extensionCounts } from '../schemas/extensions.js'
import { installWriteGuards, refuseWrite } from './writes.js'
import type { ClusterHttp } from './cluster-http.js'
import type { ClusterMetrics } from './cluster-metrics.js'
import { writeFault } from '../host/store/port.js'
import { openingRegistry, waits, type OpeningRegistry } from './opening.js'

export interface AppOptions {
  /**
   * The host, or the host while it opens (serve.ts listens first): the web client and health answer at
   * once, every request that reads the registry waits until it is open (src/server/opening.ts).
   */
  registry: ThreadRegistry | OpeningRegistry
  /** Bearer token checked on every /api route and /metrics; required when bound beyond loopback. */
  token?: string
  /** The built web client; when missing, `/` says how to build it. */
  clientDir?: string
  follow?: Partial<StreamOptions>
  /** Fastify's logger option (tests pass their own, or none: off). */
  logger?: FastifyServerOptions['logger']
  /** A logger made beforehand, shared with the host (serve.ts); wins over `logger`. */
  loggerInstance?: FastifyBaseLogger
  /** Node's process metrics on /metrics (memory, event loop, GC). */
  processMetrics?: boolean
  /** Notifications: keys and subscriptions in the data dir (serve.ts); without it, kept in memory for this app. */
  push?: PushNotifier
  /** Extra routes (the inspector) registered under the same auth and error handling. */
  plugins?: FastifyPluginAsync[]
  /** Cluster mode (`--cluster`): commands reach each thread's owner, health names the nodes. */
  cluster?: ClusterHttp
  /** Cluster mode: the node's name on every metric, and its cluster figures (cluster-metrics.ts). */
  clusterMetrics?: ClusterMetrics
}

const STARTING = 'the threads are being recovered: requests that need them wait until it is done'

/** The heartbeat in cluster mode: a tab sees a frozen node's silence after 2.5 of them (follow-connection.ts). */
const CLUSTER_HEARTBEAT_MS = 2000

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const opening = 'opened' in options.registry ? options.registry : openingRegistry(options.registry)
  const { registry } = opening
  // A node can freeze (a stopped process, a partition) with its tabs' sockets open: in a cluster the
  // heartbeat is frequent enough that a tab on a frozen node resumes on another within seconds.
  const follow = { ...defaultStreamOptions, ...(options.cluster ? { heartbeatMs: CLUSTER_HEARTBEAT_MS } : {}), ...options.follow }
  const app = Fastify({
    ...(options.loggerInstance ? { loggerInstance: options.loggerInstance } : { logger: options.logger ?? false }),
    // One line per request, with the route pattern rather than the URL.
    logController: new RequestLog(),
    bodyLimit: 1 << 20,
    // Followers hold their sockets open; close must not wait for them.
    forceCloseConnections: true,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false } },
    // Validators built at a route's first request; bodies serialized by JSON.stringify (schema-compilers.ts).
    schemaController: schemaCompilers(),
  }).withTypeProvider<TypeBoxTypeProvider>()

  app.setErrorHandler((error: { validation?: unknown; statusCode?: number; message: string; code?: string }, request, reply) => {
    if (error.validation) return replyWith(reply, guardOutcomes, { kind: 'bad-request', message: `bad request: ${error.message}` }, undefined)
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return replyWith(reply, guardOutcomes, { kind: 'body-too-large' }, undefined)
    // The disk filled (or turned read-only) between the write guard's check and the request's own
    // write: the write threw before the change was made, so it is the guard's refusal, not a fault.
    const fault = writeFault(error)
    if (fault) {
      request.log.warn({ code: fault.code }, `write refused: ${fault.message}`)
      return refuseWrite(reply, fault)
    }
    const status = error.statusCode && error.statusCode >= 400 ? error.statusCode : 500
    if (status >= 500) {
      request.log.error(error)
      return replyWith(reply, guardOutcomes, { kind: 'internal' }, undefined)
    }
    // fastify's own refusals of a request (400s, such as a body that is not JSON): said as fastify says it.
    const { body } = answerOf(guardOutcomes, { kind: 'bad-request', message: error.message }, undefined)
    return reply.code(status).send(body)
  })
  app.setNotFoundHandler((request, reply) =>
    replyWith(reply, guardOutcomes, { kind: 'route-not-found', method: request.method, url: request.url }, undefined),
  )

  // Model output is untrusted and rendered in the page: whatever slips past the Markdown sanitiser
  // still cannot run a script, load a remote image or talk to another origin, and no site can frame us.
  await app.register(fastifyHelmet, {
    // Applied by the hook below, to every request but a command another node passed on here.
    global: false,
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        // Lit's styles are constructed sheets; a few style attributes remain, and styles carry no script.
        styleSrc: ["'self'", "'unsafe-inline'"],
        imgSrc: ["'self'", 'data:'],
        connectSrc: ["'self'"],
        fontSrc: ["'self'", 'data:'],
        objectSrc: ["'none'"],
        baseUri: ["'self'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
      },
    },
    referrerPolicy: { policy: 'no-referrer' },
    // threadhost serves plain http on loopback by default; HSTS there would only confuse.
    strictTransportSecurity: false,
    crossOriginEmbedderPolicy: false,
  })
  // Routes set no helmet options of their own and there are no nonces, so every answer gets the same
  // headers: @fastify/helmet builds helmet's middleware anew for every request (0.1-0.15 ms on the
  // 2-vCPU VM), so the first request's are kept and set on the rest. A command another node passed on
  // here answers that node, which sends the client its own: it gets none.
  let securityHeaders: Array<[string, string | number | string[]]> | undefined
  app.addHook('onRequest', async (request, reply) => {
    if (options.cluster?.passedOn(request)) return
    if (securityHeaders) for (const [name, value] of securityHeaders) reply.raw.setHeader(name, value)
    else {
      const before = new Set(reply.raw.getHeaderNames())
      reply.helmet()
      securityHeaders = Object.entries(reply.raw.getHeaders()).filter((entry): entry is [string, string | number | string[]] => !before.has(entry[0]) && entry[1] !== undefined)
    }
  })

  // Ahead of the guard: a command passed on straight here that this node cannot run is sent back untouched.
  if (options.cluster) app.addHook('onRequest', options.cluster.arrival)

  const guard = apiGuard({ token: options.token, closing: () => opening.current?.closing ?? false })
  app.addHook('onRequest', guard)
  // Before every other hook that may read the registry (the cluster's, the write guards').
  if (!opening.current) app.addHook('onRequest', async (request) => void (opening.current || !waits(request) || (await opening.opened)))

  // Every body is JSON in UTF-8; anything else is a 400 before any route sees it. Clients that
  // always send a content type may send no body to create and abort.
  const json = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  app.removeContentTypeParser('text/plain')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(request.headers['content-type'] ?? '')?.[1]
    if (charset && !/^utf-?8$/i.test(charset)) return done(badBody(`a JSON body must be UTF-8, not ${charset}`), undefined)
    if (body === '') return done(null, undefined)
    json(request, body as string, (error, parsed) => (error ? done(badBody(`the body is not JSON: ${error.message}`), undefined) : done(null, parsed)))
  })
  app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) =>
    body === '' ? done(null, undefined) : done(badBody('the body must be JSON, sent as content-type: application/json'), undefined),
  )

  // Before the write guards: a command runs on its thread's owner, and is answered once it is in the log.
  options.cluster?.install(app)

  // Before the routes: the hooks that record idempotent answers apply to the routes added after them.
  const writes = installWriteGuards(app, () => registry.store, options.cluster?.keys)

  // Before the routes: the document is built from each route as it is added.
  await registerOpenApi(app)
  const metrics = installMetrics(app, { registry, processMetrics: options.processMetrics, cluster: options.clusterMetrics })

  const push = options.push ?? PushNotifier.inMemory((level, message) => app.log[level](message))
  const unwatchPush = push.watch(registry)
  app.addHook('onClose', async () => unwatchPush())

  const stream = { ...follow, onDropped: metrics.onFollowerDropped, onJoined: metrics.onFollowJoined }
  registerRoutes(
    app,
    {
      health: {
        tags: ['meta'],
        summary: '`ok`, or `degraded` with the reason: the data dir is full or read-only, so requests that write are refused; `starting` while the threads are recovered at start (requests that need them wait)',
        handler: async () => {
          if (!opening.current) return { status: 'starting' as const, reason: STARTING }
          const extensions = registry.extensions()
          const cluster = await options.cluster?.health()
          return { ...writes.health(), ...(extensions ? { extensions: extensionCounts(extensions) } : {}), ...cluster }
        },
      },
      listExtensions: {
        tags: ['meta'],
        summary: "The user's and the projects' pi extensions: what loaded, what failed and why, which tool names clash",
        description:
          'As the latest thread session built for each scope found them: the agent dir\'s extensions (`scope: user`) with every session, a workspace\'s (`scope: project`, its `cwd`) with each session there. A failure with an `event` is a handler that threw (`session_start`, …); without one, the file did not load.',
        handler: async () => registry.extensions() ?? { loaded: [], failed: [], clashes: [] },
      },
      ...threadRoutes(registry),
      ...searchRoutes(registry, options.cluster?.search),
      ...runRoutes(registry, writes),
      ...dialogRoutes(registry),
      ...followRoutes(registry, stream),
      ...changeRoutes(registry),
      ...pushRoutes(push),
    },
    writes,
  )
  for (const plugin of options.plugins ?? []) await app.register(plugin)

  await serveClient(app, options.clientDir)
  return app
}

function badBody(message: string): Error {
  return Object.assign(new Error(message), { statusCode: 400 })
}

async function serveClient(app: FastifyInstance, clientDir: string | undefined): Promise<void> {
  if (clientDir && existsSync(join(clientDir, 'index.html'))) {
    await app.register(fastifyStatic, { root: clientDir, prefix: '/', wildcard: false })
    return
  }
  app.get('/', { schema: { hide: true } }, async (_request, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .send(
        '<!doctype html><meta charset="utf-8"><title>threadhost</title>' +
          '<p>threadhost is running, but its web client is not built. Run <code>npm run build</code> (or ' +
          '<code>npm start</code>, which builds it), or use the HTTP API described in <code>docs/api.md</code>.</p>',
      ),
  )
}

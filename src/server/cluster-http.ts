/**
 * Cluster mode's HTTP edge (docs/flows/cluster.md): every node answers every route. A command on a
 * thread (ROUTED below) runs on the thread's owner: the receiving node passes the request on
 * verbatim — straight to the owner's HTTP port once an answer named it (owner-link.ts), else over
 * the command bus — and sends the owner's answer back verbatim; with no owner it takes the thread and runs it here. Its answer
 * leaves only once what it wrote is in the thread's log (a 202 means the prompt is in the log). An
 * owner that cannot be reached in time is a 503 with Retry-After (an Idempotency-Key makes the retry safe).
 */
import { randomBytes } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ClusterKeys } from '../host/cluster/cluster-keys.js'
import type { SearchHit } from '../host/thread-search.js'
import { COMMAND_TIMEOUT_MS, type ClusterNode, type CommandStart } from '../host/cluster/cluster-node.js'
import type { CommandReply, CommandRequest } from '../host/cluster/port.js'
import { apiRoutes, type RouteName, type RouteSpec } from '../schemas/api-routes.js'
import { answerOf, guardOutcomes } from '../schemas/outcomes.js'
import { clusterMetrics } from './cluster-metrics.js'
import { refuseWhileDraining } from './graceful-stop.js'
import { FINGERPRINT_HEADER, OwnerLinks, PASSED_ON_HEADER, RAN_ON_HEADER } from './owner-link.js'
import { replyWith } from './responses.js'
import { fingerprintOf, IDEMPOTENCY_HEADER, idempotencyKeyOf } from './writes.js'

/**
 * What runs on the owner: every command on a thread — each route under `/api/threads/:id` that is not
 * a GET (prompt, abort, queue take, answer, terminal input, draft, change, delete, fork, edit,
 * version, shortcut, revert, redo…), taken from the route table so a new one is never left out — and
 * the reads only the live thread can answer (its commands).
 */
const THREAD_PATH = '/api/threads/:id'
const OWNER_READS: readonly RouteName[] = ['listCommands']
const ROUTED = new Set(
  (Object.keys(apiRoutes) as RouteName[]).filter((name) => {
    const { method, path } = apiRoutes[name]
    return (path === THREAD_PATH || path.startsWith(`${THREAD_PATH}/`)) && (method !== 'GET' || OWNER_READS.includes(name))
  }),
)
/** The routed commands that take an `Idempotency-Key` (`METHOD /path`). */
const KEYED = new Set([...ROUTED].filter((name) => (apiRoutes[name] as RouteSpec).idempotent).map((name) => `${apiRoutes[name].method} ${apiRoutes[name].path}`))
/** Passed on with the command: what the owner's guards and routes read. */
const PASSED_HEADERS = ['authorization', 'content-type', 'idempotency-key']
const OWNER_HEADER = 'x-threadhost-owner'
/** Names a command the owner runs for another node, so its route can answer it as soon as the answer is final. */
const COMMAND_HEADER = 'x-threadhost-command'
/** Passed back with the answer; `RAN_ON_HEADER` goes no further than the node that passed the command on. */
const ANSWER_HEADERS = ['content-type', 'retry-after', 'idempotent-replayed', RAN_ON_HEADER]

function replyOf(status: number, headers: Record<string, unknown>, body: string): CommandReply {
  const passed: Record<string, string> = {}
  for (const name of ANSWER_HEADERS) if (headers[name] !== undefined) passed[name] = String(headers[name])
  return { status, headers: passed, body }
}

/** The address other nodes reach this one at: the one given, else the one address it listens on (none for a wildcard). */
function ownAddress(given: string | undefined, app: FastifyInstance): string | undefined {
  if (given !== undefined) return given
  const bound = app.server.address() as AddressInfo | string | null
  if (bound === null || typeof bound === 'string' || bound.address === '0.0.0.0' || bound.address === '::') return undefined
  return `http://${bound.family === 'IPv6' ? `[${bound.address}]` : bound.address}:${bound.port}`
}

const PROMPT_ROUTE = `${apiRoutes.prompt.method} ${apiRoutes.prompt.path}`

/** The prompt a 202 of the prompt route accepted (its body names it): that answer waits for the prompt's record only. */
function admittedPrompt(request: FastifyRequest, status: number, payload: unknown): string | undefined {
  if (status !== 202 || typeof payload !== 'string' || `${request.method} ${request.routeOptions.url}` !== PROMPT_ROUTE) return undefined
  return /"messageId":"([^"]+)"/.exec(payload)?.[1]
}

export interface ClusterHttp {
  install(app: FastifyInstance): void
  health(): Promise<object>
  /** A search every live node answers (host/cluster/cluster-search.ts). */
  search(q: string, limit?: number): Promise<SearchHit[]>
  /** `Idempotency-Key`s claimed and answered in the engine, so every node (and a thread's next owner) replays them. */
  keys: ClusterKeys
  /** Whether the request is a command another node passed on here, which this node runs for it. */
  passedOn(request: FastifyRequest): boolean
  /**
   * The first hook after the security headers', ahead of the API guard: a command another node passed
   * on straight here runs here, counted from this turn, or is answered `421` with nothing run.
   */
  arrival(request: FastifyRequest, reply: FastifyReply): Promise<unknown>
}

/** `url`: the address other nodes reach this node's HTTP port at (`--node-url`). */
export function clusterHttp(node: ClusterNode, options: { url?: string } = {}): ClusterHttp {
  // Marks a request the owner runs for another node (app.inject), so it is not passed on again.
  const secret = randomBytes(16).toString('hex')
  // The pass of a command another node sends straight here (owner-link.ts): only nodes learn it, from
  // this node's answers to the commands they passed on.
  const pass = randomBytes(16).toString('hex')
  const routed = new Set([...ROUTED].map((name) => `${apiRoutes[name].method} ${apiRoutes[name].path}`))
  // Commands that run here: their thread, and how it stood when they were counted (what their answer waits for).
  const local = new WeakMap<FastifyRequest, { threadId: string; began: CommandStart }>()
  // A command `dispatch` kept here counts against the thread's being given back until it is over
  // (one passed on by another node is counted by the node's command bus, around the whole of it).
  const counted = new WeakSet<FastifyRequest>()
  const done = (request: FastifyRequest) => {
    const here = local.get(request)
    if (here === undefined) return
    local.delete(request)
    if (counted.delete(request)) node.commandEnded(here.threadId)
  }
  // A keyed prompt's 202 leaves once its admission (key and receipt) is in the log: the onSend hook below.
  const keys = new ClusterKeys(node.engine, undefined, (threadId, key) => node.keyedAdmission(threadId, key), (route, status) => status === 202 && route === PROMPT_ROUTE)
  // Set once the app is installed: this node's address as others reach it (read once it listens).
  let own: () => string | undefined = () => options.url
  const ranOn = () => {
    const here = own()
    return here === undefined ? undefined : `${pass} ${here}`
  }
  const links = new OwnerLinks(() => own())
  // A command passed on straight to its owner counts as the bus's do (cluster-metrics.ts).
  const counts = clusterMetrics(node)?.counts
  const sentStraight = (request: FastifyRequest) => request.headers[PASSED_ON_HEADER] === pass
  // An early claim of a keyed command sent straight here, let go if its guard never took it up.
  const earlyClaims = new WeakMap<FastifyRequest, () => void>()
  // Commands sent straight here that reached their route: its onSend ends them, answered or not.
  const reachedRoute = new WeakSet<FastifyRequest>()
  return {
    health: () => node.health(),
    search: (q, limit) => node.search(q, limit),
    keys,
    passedOn: (request) => request.headers[OWNER_HEADER] === secret || sentStraight(request),
    async arrival(request, reply) {
      const marked = request.headers[PASSED_ON_HEADER]
      if (marked === undefined || !routed.has(`${request.method} ${request.routeOptions.url}`)) return
      const threadId = (request.params as { id: string }).id
      // Another pass is another node's (or this address's last process's): nothing runs here either way.
      const began = marked === pass ? node.runsHere(threadId) : undefined
      if (!began) return replyWith(reply, guardOutcomes, { kind: 'not-owner', threadId }, undefined)
      local.set(request, { threadId, began })
      counted.add(request)
      if (counts) counts.served++
      const here = ranOn()
      if (here !== undefined) reply.header(RAN_ON_HEADER, here)
      // Over when its socket closes before it reached its route (fastify then runs neither onSend nor
      // onResponse); one that did is over at its onSend, which runs even once the socket is gone.
      reply.raw.once('close', () => {
        if (!reachedRoute.has(request)) done(request)
        earlyClaims.get(request)?.()
      })
      // Claimed as it arrives, as one the bus brings (serveWith, below).
      const { [FINGERPRINT_HEADER]: fingerprint, [IDEMPOTENCY_HEADER]: key } = request.headers
      if (typeof fingerprint === 'string' && typeof key === 'string' && !node.draining && KEYED.has(`${request.method} ${request.routeOptions.url}`)) earlyClaims.set(request, keys.early(key, fingerprint))
    },
    install(app) {
      let address: string | undefined
      own = () => (address ??= ownAddress(options.url, app))
      app.addHook('onClose', async () => links.close())
      /** An answer this node gives to a command passed on to it names it, so the next one can come straight here. */
      const ranHere = (reply: CommandReply): CommandReply => {
        const here = ranOn()
        if (here !== undefined) reply.headers[RAN_ON_HEADER] = here
        return reply
      }
      // A command passed on by another node is answered from its route's last onSend hook, once every
      // shared one has run (the log's flush, the key's record): the answer is final there, and the
      // injected response's own end comes after the work the command set off (a run's start-up).
      const answering = new Map<string, { answer: (reply: CommandReply) => void; began: CommandStart }>()
      let commands = 0
      node.serveWith(async (command, answer, began) => {
        const id = String(++commands)
        answering.set(id, { answer, began })
        const key = command.headers[IDEMPOTENCY_HEADER]
        // Not while draining: every command is refused before its guard then.
        const untaken = key !== undefined && command.fingerprint !== undefined && !node.draining ? keys.early(key, command.fingerprint) : undefined
        try {
          const response = await app.inject({
            method: command.method as 'POST',
            url: command.url,
            headers: { ...command.headers, [OWNER_HEADER]: secret, [COMMAND_HEADER]: id },
            ...(command.body !== undefined ? { payload: command.body } : {}),
            // Built here, not by a caller: light-my-request's check of its shape (ajv, per request) is not needed.
            validate: false,
          })
          // An answer its route never gave (no such route, or refused before it) is the injected response.
          return ranHere(replyOf(response.statusCode, response.headers, response.body))
        } finally {
          answering.delete(id)
          untaken?.()
        }
      })
      const answered = async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
        const id = request.headers[COMMAND_HEADER]
        if (request.headers[OWNER_HEADER] !== secret || typeof id !== 'string' || (payload !== undefined && typeof payload !== 'string')) return payload
        const passed = answering.get(id)
        answering.delete(id)
        passed?.answer(ranHere(replyOf(reply.statusCode, reply.getHeaders(), payload ?? '')))
        return payload
      }
      // Route-level onSend hooks run after every shared one.
      app.addHook('onRoute', (route) => {
        const methods = Array.isArray(route.method) ? route.method : [route.method]
        if (!methods.some((method) => routed.has(`${method} ${route.url}`))) return
        const own = route.onSend === undefined ? [] : Array.isArray(route.onSend) ? route.onSend : [route.onSend]
        route.onSend = [...own, answered]
      })

      // A thread made on another node a moment ago, whose row this node has not heard yet, is looked up
      // before any route under it answers (a lookup only when this node does not list the thread).
      app.addHook('preValidation', async (request) => {
        const url = request.routeOptions.url
        if (url === undefined || !(url === THREAD_PATH || url.startsWith(`${THREAD_PATH}/`))) return
        await node.lookUp((request.params as { id: string }).id)
      })

      app.addHook('preHandler', async (request, reply) => {
        if (!routed.has(`${request.method} ${request.routeOptions.url}`)) return
        const threadId = (request.params as { id: string }).id
        // Run here for another node: by the bus (app.inject), or sent straight here and counted on arrival.
        if (request.headers[OWNER_HEADER] === secret) {
          const passed = answering.get(String(request.headers[COMMAND_HEADER]))
          // Counted by the bus as it arrived; one it no longer answers for is not run here.
          if (!passed) return replyWith(reply.header('retry-after', '1'), guardOutcomes, { kind: 'owner-changed', threadId }, undefined)
          return void local.set(request, { threadId, began: passed.began })
        }
        if (local.has(request)) return void reachedRoute.add(request)
        const headers: Record<string, string> = {}
        for (const name of PASSED_HEADERS) if (typeof request.headers[name] === 'string') headers[name] = request.headers[name]
        const command: CommandRequest = { method: request.method, url: request.url, headers, ...(request.body !== undefined ? { body: JSON.stringify(request.body) } : {}) }
        const owned = node.owns(threadId)
        // Validated here as on the owner: its digest lets the owner claim the key as the command arrives.
        if (!owned && KEYED.has(`${request.method} ${request.routeOptions.url}`) && idempotencyKeyOf(request) !== undefined) command.fingerprint = fingerprintOf(request)
        let where: Awaited<ReturnType<ClusterNode['dispatch']>> | undefined
        const direct = owned ? undefined : await links.send(threadId, command, COMMAND_TIMEOUT_MS)
        if (direct === 'unavailable') where = 'unavailable'
        else if (direct !== undefined && direct !== 'not-sent') {
          if (counts) counts.forwarded++
          where = replyOf(direct.status, direct.headers, direct.body)
        }
        where ??= await node.dispatch(threadId, command)
        if (typeof where === 'object' && 'local' in where) {
          local.set(request, { threadId, began: where.local })
          counted.add(request)
          return
        }
        if (where === 'unavailable') {
          return replyWith(reply.header('retry-after', '1'), guardOutcomes, { kind: 'owner-unreachable', threadId }, undefined)
        }
        // Where it ran is for this node, kept for the thread's next command; never for the client.
        const { [RAN_ON_HEADER]: owner, ...answer } = where.headers
        links.learn(threadId, owner)
        for (const [name, value] of Object.entries(answer)) reply.header(name, value)
        return reply.code(where.status).send(where.body === '' ? undefined : where.body)
      })

      // A graceful stop: what would run here is refused while the node drains (graceful-stop.ts).
      refuseWhileDraining(app, node)

      // Before the write guards record an idempotent answer: nothing is answered before it is in the log.
      // A prompt's 202 promises the prompt (its `accepted` record), not the first frames of the run it started.
      app.addHook('onSend', async (request, reply, payload) => {
        const here = local.get(request)
        if (here === undefined) return payload
        const { threadId, began } = here
        try {
          if ((await node.flushed(threadId, admittedPrompt(request, reply.statusCode, payload), began)) || reply.statusCode >= 300) return payload
          const { status, body } = answerOf(guardOutcomes, { kind: 'owner-changed', threadId }, undefined)
          reply.code(status).header('retry-after', '1').type('application/json; charset=utf-8')
          return JSON.stringify(body)
        } finally {
          done(request)
        }
      })
      // A request whose answer was never sent (its socket went first) is over too.
      app.addHook('onResponse', async (request) => done(request))

      // A live thread's summary names the node that owns it.
      app.addHook('preSerialization', async (request, _reply, payload) => {
        if (request.routeOptions.url !== apiRoutes.getThread.path || request.method !== 'GET' || !payload || typeof payload !== 'object') return payload
        const owner = await node.ownerName((request.params as { id: string }).id).catch(() => undefined)
        return owner ? { ...(payload as object), node: owner } : payload
      })
    },
  }
}

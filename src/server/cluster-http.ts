/**
 * Cluster mode's HTTP edge (docs/flows/cluster.md): every node answers every route. A command on a
 * thread (ROUTED below) runs on the thread's owner: the receiving node passes the request on
 * verbatim over the command bus and sends the owner's answer back verbatim; with no owner it takes the thread and runs it here. Its answer
 * leaves only once what it wrote is in the thread's log (a 202 means the prompt is in the log). An
 * owner that cannot be reached in time is a 503 with Retry-After (an Idempotency-Key makes the retry safe).
 */
import { randomBytes } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ClusterKeys } from '../host/cluster/cluster-keys.js'
import type { ClusterNode } from '../host/cluster/cluster-node.js'
import type { CommandReply, CommandRequest } from '../host/cluster/port.js'
import { apiRoutes, type RouteName, type RouteSpec } from '../schemas/api-routes.js'
import { answerOf, guardOutcomes } from '../schemas/outcomes.js'
import { refuseWhileDraining } from './graceful-stop.js'
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
const ANSWER_HEADERS = ['content-type', 'retry-after', 'idempotent-replayed']

function replyOf(status: number, headers: Record<string, unknown>, body: string): CommandReply {
  const passed: Record<string, string> = {}
  for (const name of ANSWER_HEADERS) if (headers[name] !== undefined) passed[name] = String(headers[name])
  return { status, headers: passed, body }
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
  /** `Idempotency-Key`s claimed and answered in the engine, so every node (and a thread's next owner) replays them. */
  keys: ClusterKeys
  /** Whether the request is a command another node passed on here, which this node runs for it. */
  passedOn(request: FastifyRequest): boolean
}

export function clusterHttp(node: ClusterNode): ClusterHttp {
  // Marks a request the owner runs for another node (app.inject), so it is not passed on again.
  const secret = randomBytes(16).toString('hex')
  const routed = new Set([...ROUTED].map((name) => `${apiRoutes[name].method} ${apiRoutes[name].path}`))
  const local = new WeakMap<FastifyRequest, string>()
  // A command `dispatch` kept here counts against the thread's being given back until it is over
  // (one passed on by another node is counted by the node's command bus, around the whole of it).
  const counted = new WeakSet<FastifyRequest>()
  const done = (request: FastifyRequest) => {
    const threadId = local.get(request)
    if (threadId === undefined) return
    local.delete(request)
    if (counted.delete(request)) node.commandEnded(threadId)
  }
  // A keyed prompt's 202 leaves once its admission (key and receipt) is in the log: the onSend hook below.
  const keys = new ClusterKeys(node.engine, undefined, (threadId, key) => node.keyedAdmission(threadId, key), (route, status) => status === 202 && route === PROMPT_ROUTE)
  return {
    health: () => node.health(),
    keys,
    passedOn: (request) => request.headers[OWNER_HEADER] === secret,
    install(app) {
      // A command passed on by another node is answered from its route's last onSend hook, once every
      // shared one has run (the log's flush, the key's record): the answer is final there, and the
      // injected response's own end comes after the work the command set off (a run's start-up).
      const answering = new Map<string, (reply: CommandReply) => void>()
      let commands = 0
      node.serveWith(async (command, answer) => {
        const id = String(++commands)
        answering.set(id, answer)
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
          return replyOf(response.statusCode, response.headers, response.body)
        } finally {
          answering.delete(id)
          untaken?.()
        }
      })
      const answered = async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
        const id = request.headers[COMMAND_HEADER]
        if (request.headers[OWNER_HEADER] !== secret || typeof id !== 'string' || (payload !== undefined && typeof payload !== 'string')) return payload
        const answer = answering.get(id)
        answering.delete(id)
        answer?.(replyOf(reply.statusCode, reply.getHeaders(), payload ?? ''))
        return payload
      }
      // Route-level onSend hooks run after every shared one.
      app.addHook('onRoute', (route) => {
        const methods = Array.isArray(route.method) ? route.method : [route.method]
        if (!methods.some((method) => routed.has(`${method} ${route.url}`))) return
        const own = route.onSend === undefined ? [] : Array.isArray(route.onSend) ? route.onSend : [route.onSend]
        route.onSend = [...own, answered]
      })

      app.addHook('preHandler', async (request, reply) => {
        if (!routed.has(`${request.method} ${request.routeOptions.url}`)) return
        const threadId = (request.params as { id: string }).id
        if (request.headers[OWNER_HEADER] === secret) return void local.set(request, threadId)
        const headers: Record<string, string> = {}
        for (const name of PASSED_HEADERS) if (typeof request.headers[name] === 'string') headers[name] = request.headers[name]
        const command: CommandRequest = { method: request.method, url: request.url, headers, ...(request.body !== undefined ? { body: JSON.stringify(request.body) } : {}) }
        // Validated here as on the owner: its digest lets the owner claim the key as the command arrives.
        if (!node.owns(threadId) && KEYED.has(`${request.method} ${request.routeOptions.url}`) && idempotencyKeyOf(request) !== undefined) command.fingerprint = fingerprintOf(request)
        const where = await node.dispatch(threadId, command)
        if (where === 'local') {
          local.set(request, threadId)
          counted.add(request)
          return
        }
        if (where === 'unavailable') {
          return replyWith(reply.header('retry-after', '1'), guardOutcomes, { kind: 'owner-unreachable', threadId }, undefined)
        }
        for (const [name, value] of Object.entries(where.headers)) reply.header(name, value)
        return reply.code(where.status).send(where.body === '' ? undefined : where.body)
      })

      // A graceful stop: what would run here is refused while the node drains (graceful-stop.ts).
      refuseWhileDraining(app, node)

      // Before the write guards record an idempotent answer: nothing is answered before it is in the log.
      // A prompt's 202 promises the prompt (its `accepted` record), not the first frames of the run it started.
      app.addHook('onSend', async (request, reply, payload) => {
        const threadId = local.get(request)
        if (threadId === undefined) return payload
        try {
          if ((await node.flushed(threadId, admittedPrompt(request, reply.statusCode, payload))) || reply.statusCode >= 300) return payload
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

/**
 * The response side of the HTTP contract, as schemas: what each status carries. The route table
 * (api-routes.ts) puts them per route and status; the server registers them (so they reach the
 * OpenAPI document) and the typed client infers its result and error types from them.
 *
 * Every error body is `{error, code, ...details}` (`code` is stable: src/schemas/outcomes.ts);
 * the shapes below only name the details a route adds. The success bodies live in http.ts, beside the
 * requests.
 */
import { Type, type TProperties, type TSchema } from 'typebox'
import { MAX_PROMPT_CHARS, ThreadSummary } from './http.js'
import { ErrorCode } from './outcomes.js'
import { ExtensionCounts } from './extensions.js'

const detailed = <P extends TProperties>(description: string, details: P) =>
  Type.Object({ error: Type.String(), code: ErrorCode, ...details }, { additionalProperties: true, description })

/** A plain `{error, code}` (details may follow). */
export const errorBody = (description: string) => detailed(description, {})

/** A 409 that says which rule refused it (`busy`, `idle`, `stale-run`, `deleted`, …). */
export const ReasonError = (description: string) => detailed(description, { reason: Type.String() })

/** `204`: nothing in the body. */
export const NoContent = (description: string) => Type.Unsafe<undefined>({ type: 'null', description })

/** A response that is not JSON: the route writes it itself, so the schema only names the media type. */
export interface MediaResponse {
  description: string
  content: Record<string, { schema: TSchema }>
}

/** An SSE response. */
export const EventStream = (description: string) => ({
  description,
  content: { 'text/event-stream': { schema: Type.String({ description: 'Server-Sent Events: `id:`, `event:`, `data:` frames' }) } },
}) satisfies MediaResponse

/**
 * What the guard and the error handler may answer on any /api route, before or instead of the
 * handler: a bad request, a missing token, a foreign origin, the server shutting down, a failure.
 */
export const guarded = {
  400: errorBody('bad request: the path, query or body does not match the schema; the body is not JSON (any other content type, or a charset other than UTF-8); a malformed `Idempotency-Key`; two `Host` headers'),
  401: errorBody('a bearer token is required (the server was started with --token)'),
  403: errorBody('without a token, requests must come from a loopback Host and this Origin'),
  500: errorBody('internal error'),
  503: errorBody('threadhost is shutting down (with `Retry-After`), or the data dir is read-only so a request that writes was refused (`reason: read-only`)'),
} satisfies Record<number, TSchema>

/** Routes with a body can also refuse it for its size. */
export const withBody = {
  ...guarded,
  413: detailed(`the body is over 1 MiB (a prompt's: over its images' limit), a prompt over ${MAX_PROMPT_CHARS} characters, or an image over its limit in bytes (\`limit\`); nothing was stored`, {
    limit: Type.Optional(Type.Integer()),
  }),
}

export const notFound = errorBody
export const unprocessable = <P extends TProperties>(description: string, details: P = {} as P) => detailed(description, details)

/** The statuses the write guards (src/server/writes.ts) add to a route's responses. */
export const refusedWrites = {
  507: errorBody('the data dir is full: the request could not be made durable, so nothing was done (`reason: disk-full`)'),
}
export const idempotencyMismatch = errorBody('the `Idempotency-Key` was used before with another request (`reason: idempotency-key-reused`)')

/** `GET /api/health`. */
export const Health = Type.Object(
  {
    /** `starting`: the server listens while the threads are recovered; requests that need them wait until it is done. */
    status: Type.Union([Type.Literal('ok'), Type.Literal('degraded'), Type.Literal('starting')]),
    /** Why writes are refused (degraded), or what the start is doing (starting). */
    reason: Type.Optional(Type.String()),
    /** `disk-full` or `read-only` (degraded only). */
    fault: Type.Optional(Type.Union([Type.Literal('disk-full'), Type.Literal('read-only')])),
    /** How many of the user's and the projects' extensions loaded, failed or clash (`GET /api/extensions` says which). */
    extensions: Type.Optional(ExtensionCounts),
    /** Cluster mode: this node's name, and the names of the nodes whose lease is current. */
    node: Type.Optional(Type.String()),
    cluster: Type.Optional(Type.Object({ mode: Type.Literal('nats'), nodes: Type.Array(Type.String()) }, { additionalProperties: false })),
  },
  { additionalProperties: false },
)

/** `201` from `POST /api/threads`. */
export const CreatedReceipt = Type.Object({ threadId: Type.String() }, { additionalProperties: false })
/** `GET /api/threads`. */
export const ThreadList = Type.Object({ threads: Type.Array(ThreadSummary) }, { description: 'most recently updated first' })

/** `GET /api/openapi.json`: the document itself, open beyond its version. */
export const OpenApiDocument = Type.Object({ openapi: Type.String() }, { additionalProperties: true })

/** `GET /metrics`: Prometheus' text format. */
export const MetricsText = { description: 'the metrics', content: { 'text/plain': { schema: Type.String() } } } satisfies MediaResponse

/**
 * An ActorNode (inspection.ts, a plain type) as a schema. The tree is spelled out to a fixed depth
 * (a thread, its dialogs and ask-queue, theirs) rather than as a `$ref` cycle, which the OpenAPI
 * document would have to carry as a shared component; deeper children are left open.
 */
const actorNode = (depth: number): TSchema =>
  Type.Object({
    actorId: Type.String(),
    id: Type.String(),
    threadId: Type.String(),
    machineId: Type.String(),
    systemId: Type.Optional(Type.String()),
    value: Type.Unknown({ description: "xstate's state value: a string, or an object of regions; null when it has none" }),
    status: Type.String(),
    children: Type.Array(depth > 0 ? actorNode(depth - 1) : Type.Object({}, { additionalProperties: true })),
  })

/** `GET /api/debug/actors`. */
export const ActorForest = Type.Object({ threads: Type.Array(actorNode(3)) })

/** `GET /api/debug/machines/:machineId`. */
export const MachineDefinition = Type.Object({
  machineId: Type.String(),
  definition: Type.Object({}, { additionalProperties: true, description: "the machine's definition, as xstate serialises it" }),
  transitions: Type.Array(
    Type.Object({
      key: Type.String(),
      source: Type.String(),
      event: Type.String(),
      guard: Type.Optional(Type.String()),
      targets: Type.Array(Type.String()),
      reenter: Type.Boolean(),
    }, { additionalProperties: true }),
  ),
})

/** `404` from `GET /api/debug/machines/:machineId`. */
export const UnknownMachine = detailed('no such machine; `machines` lists those there are', { machines: Type.Array(Type.String()) })

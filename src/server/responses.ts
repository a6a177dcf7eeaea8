/**
 * The response side of the HTTP contract, as schemas: what each status carries, for the OpenAPI
 * document and for the test that checks real answers against it.
 *
 * Every error is an ErrorBody (`{error, ...details}`); the shapes below only name the details a
 * route adds. The wire types themselves live in src/schemas; this file only puts them per status.
 */
import { Type, type TProperties, type TSchema } from 'typebox'
import { ErrorBody, MAX_PROMPT_CHARS } from '../schemas/index.js'

export { ErrorBody }

const detailed = <P extends TProperties>(description: string, details: P) =>
  Type.Object({ error: Type.String(), ...details }, { additionalProperties: true, description })

/** A plain `{error}` (details may follow). */
export const errorBody = (description: string) => Type.Object({ error: Type.String() }, { additionalProperties: true, description })

/** A 409 that says which rule refused it (`busy`, `idle`, `stale-run`, `deleted`, …). */
export const ReasonError = (description: string) => detailed(description, { reason: Type.String() })

/** `204`: nothing in the body. */
export const NoContent = (description: string) => Type.Unsafe<undefined>({ type: 'null', description })

/** An SSE response: the route writes frames itself, so the schema only names the media type. */
export const EventStream = (description: string) => ({
  description,
  content: { 'text/event-stream': { schema: Type.String({ description: 'Server-Sent Events: `id:`, `event:`, `data:` frames' }) } },
})

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
  413: detailed(`the body is over 1 MiB, or a prompt over ${MAX_PROMPT_CHARS} characters (\`limit\`)`, {
    limit: Type.Optional(Type.Integer()),
  }),
}

export const notFound = errorBody
export const unprocessable = <P extends TProperties>(description: string, details: P = {} as P) => detailed(description, details)

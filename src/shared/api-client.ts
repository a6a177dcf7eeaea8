/**
 * A typed client for threadhost's HTTP API, for scripts (Node ≥ 22) and the web client alike: plain
 * `fetch`, with every call's params, query, body, result and error bodies inferred from the route
 * table (src/schemas/api-routes.ts) the server registers its routes with. No generated code: the
 * types are TypeBox's `Static` of the same schema objects.
 *
 *   const th = createApiClient({ baseUrl: 'http://127.0.0.1:4317' })
 *   const { threadId } = await th.call('createThread', { body: { title: 'notes' } })
 *   await th.call('prompt', { params: { id: threadId }, body: { message: 'hello' } })
 */
import type { Static, TSchema } from 'typebox'
import { apiRoutes, type ApiRoutes, type RouteName, type RouteSpec } from '../schemas/api-routes.js'
import { ERROR_CODES, type ErrorCode } from '../schemas/outcomes.js'
import type { MediaResponse } from '../schemas/responses.js'

export { apiRoutes, type ApiRoutes, type RouteName } from '../schemas/api-routes.js'
export { ERROR_CODES, type ErrorCode } from '../schemas/outcomes.js'

type Route<N extends RouteName> = ApiRoutes[N]
/** The statuses a route answers (spreading a status map turns its keys into strings: `"400"`). */
type Statuses<R extends RouteSpec> = {
  [K in keyof R['response']]: K extends number ? K : K extends `${infer N extends number}` ? N : never
}[keyof R['response']]
type At<M, S extends number> = S extends keyof M ? M[S] : `${S}` extends keyof M ? M[`${S}`] : never
type Success = 200 | 201 | 202 | 203 | 204 | 206
/** A JSON schema's type; a response the route writes itself (SSE, Prometheus text) arrives as text. */
type BodyOf<S> = S extends MediaResponse ? string : S extends TSchema ? Static<S> : never
export type ResponseBody<R extends RouteSpec, S extends number> = BodyOf<At<R['response'], S>>

/** One answer of a route: its status and that status's body, so narrowing `r.status` narrows the body (switch on `body.code` for which refusal). */
export type Reply<R extends RouteSpec> = {
  [S in Statuses<R>]: { status: S; ok: S extends Success ? true : false; body: ResponseBody<R, S> }
}[Statuses<R>]
export type SuccessBody<R extends RouteSpec> = ResponseBody<R, Extract<Statuses<R>, Success>>

/** An input part the route declares: required unless every field of it is optional. */
type Part<K extends string, R, F extends string> = R extends { [P in F]: infer S extends TSchema }
  ? {} extends Static<S>
    ? { [P in K]?: Static<S> }
    : { [P in K]: Static<S> }
  : { [P in K]?: never }

export type RouteInput<R extends RouteSpec> = Part<'params', R, 'params'> &
  Part<'query', R, 'querystring'> &
  Part<'body', R, 'body'> &
  Part<'headers', R, 'headers'> &
  (R extends { idempotent: true } ? { /** Default: a fresh key for this call (kept across its retries). */ idempotencyKey?: string } : {})

/** The input argument: optional when nothing in it is required. */
type Args<N extends RouteName> = {} extends RouteInput<Route<N>> ? [input?: RouteInput<Route<N>>] : [input: RouteInput<Route<N>>]

/** The shape every threadhost error body has (`{error, code, ...details}`), for errors not tied to a route. */
export interface ErrorDetails {
  error?: string
  /** Stable (src/schemas/outcomes.ts): what a caller switches on. */
  code?: ErrorCode
  refusal?: string
  [key: string]: unknown
}

/**
 * A request the server answered with a status that is not a success. Its message is what the server
 * said (`refusal`, else `error`), so a person can be shown `err.message` as it is; `code` says which
 * refusal it is (switch on it, not on `status`).
 */
export class ApiError<B = ErrorDetails, S extends number = number> extends Error {
  /** The body's `code`; absent only when no threadhost answered (a proxy's error page). */
  readonly code: ErrorCode | undefined
  constructor(
    readonly status: S,
    readonly body: B,
    /** The route it came from, when a client call made it (see `isApiError`). */
    readonly route?: RouteName,
  ) {
    const said = (body ?? {}) as ErrorDetails
    super(said.refusal ?? said.error ?? `HTTP ${status}`)
    this.name = 'ApiError'
    this.code = typeof said.code === 'string' && (ERROR_CODES as readonly string[]).includes(said.code) ? said.code : undefined
  }
}

/** `err` is an error answer whose `code` is one of `codes`. */
export function hasErrorCode(err: unknown, ...codes: ErrorCode[]): err is ApiError {
  return err instanceof ApiError && err.code !== undefined && codes.includes(err.code)
}

/** The errors a route can answer, one per status, so narrowing `err.status` narrows `err.body`. */
export type ApiErrorOf<R extends RouteSpec> = {
  [S in Exclude<Statuses<R>, Success>]: ApiError<ResponseBody<R, S>, S>
}[Exclude<Statuses<R>, Success>]

/** `err` is an error answer of route `name`, typed by status. */
export function isApiError<N extends RouteName>(err: unknown, name: N): err is ApiErrorOf<Route<N>> {
  return err instanceof ApiError && err.route === name
}

/** No answer at all (the request may or may not have reached the server): what `fetch` throws. */
export function isNetworkError(err: unknown): boolean {
  return err instanceof TypeError || (err instanceof Error && err.name === 'NetworkError')
}

/** A fresh `Idempotency-Key`: random, and made without `crypto.randomUUID`, which plain-http LAN pages lack. */
export function idempotencyKey(): string {
  const bytes = new Uint8Array(16)
  globalThis.crypto.getRandomValues(bytes)
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')
}

export interface ApiClientOptions {
  /** Where the server is, e.g. `http://127.0.0.1:4317`; `''` is the page's own origin. Read on every call. */
  baseUrl: string
  /** The bearer token, when the server runs with `--token`. Read on every call. */
  token?: string
  /**
   * Waits between tries of an idempotent request (create, prompt, stop, answer) that got no answer
   * at all: it is sent again with the same `Idempotency-Key`, so it runs at most once. An HTTP error
   * is an answer and is never retried. Read on every call. Default: 250, 1000 and 3000 ms.
   */
  retryDelaysMs?: readonly number[]
  /** Default: the global `fetch`, looked up on every call. */
  fetch?: typeof globalThis.fetch
}

export interface ApiClient {
  /** Sends the request; resolves with any status the route answers. Rejects only when no answer came. */
  request<N extends RouteName>(name: N, ...args: Args<N>): Promise<Reply<Route<N>>>
  /** Sends the request; resolves with a success's body, throws `ApiError` (see `isApiError`) for any other status. */
  call<N extends RouteName>(name: N, ...args: Args<N>): Promise<SuccessBody<Route<N>>>
  /** The route's URL, for what `fetch` does not do: an `EventSource` on `follow`, a link. */
  url<N extends RouteName>(name: N, ...args: Args<N>): string
}

export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [250, 1000, 3000]

export function createApiClient(options: ApiClientOptions): ApiClient {
  const url = (name: RouteName, input: AnyInput = {}): string => {
    const spec: RouteSpec = apiRoutes[name]
    const params = (input.params ?? {}) as Record<string, unknown>
    const path = spec.path.replace(/:(\w+)/g, (_, key: string) => {
      if (params[key] === undefined) throw new TypeError(`${name}: the path needs params.${key}`)
      return encodeURIComponent(String(params[key]))
    })
    const query = new URLSearchParams()
    for (const [key, value] of Object.entries((input.query ?? {}) as Record<string, unknown>)) {
      if (value !== undefined) query.set(key, String(value))
    }
    const qs = query.toString()
    return `${options.baseUrl}${path}${qs ? `?${qs}` : ''}`
  }

  const request = async (name: RouteName, input: AnyInput = {}): Promise<{ status: number; ok: boolean; body: unknown }> => {
    const spec: RouteSpec = apiRoutes[name]
    const headers: Record<string, string> = { accept: 'application/json', ...(input.headers as Record<string, string> | undefined) }
    if (options.token) headers.authorization = `Bearer ${options.token}`
    const init: RequestInit = { method: spec.method, headers }
    if (input.body !== undefined) {
      init.body = JSON.stringify(input.body)
      headers['content-type'] = 'application/json'
    }
    const target = url(name, input)
    if (!spec.idempotent) return read(await send(target, init))
    headers['idempotency-key'] = input.idempotencyKey ?? idempotencyKey()
    for (let attempt = 0; ; attempt++) {
      const delays = options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS
      try {
        return read(await send(target, init))
      } catch (err) {
        if (!isNetworkError(err) || attempt >= delays.length) throw err
        await new Promise((resolve) => setTimeout(resolve, delays[attempt]))
      }
    }
  }

  const send = (target: string, init: RequestInit) => {
    const fetch = options.fetch ?? globalThis.fetch
    return fetch(target, init)
  }

  return {
    request: request as ApiClient['request'],
    url: url as ApiClient['url'],
    call: (async (name: RouteName, input?: AnyInput) => {
      const reply = await request(name, input)
      if (!reply.ok) throw new ApiError(reply.status, reply.body ?? {}, name)
      return reply.body
    }) as ApiClient['call'],
  }
}

type AnyInput = { params?: unknown; query?: unknown; body?: unknown; headers?: unknown; idempotencyKey?: string }

/** The body as its status says: none for 204, JSON, or text for a route that writes its own media type. */
async function read(res: Response): Promise<{ status: number; ok: boolean; body: unknown }> {
  const text = res.status === 204 ? '' : await res.text()
  let body: unknown = undefined
  if (text) {
    const json = /\bjson\b/i.test(res.headers.get('content-type') ?? '')
    try {
      body = json ? JSON.parse(text) : res.ok ? text : { error: text }
    } catch {
      body = { error: text }
    }
  }
  return { status: res.status, ok: res.ok, body }
}

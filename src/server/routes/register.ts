/**
 * Routes registered from the route table (src/schemas/api-routes.ts): each route's method, path and
 * schemas come from its spec, and so do its write guards — `idempotent` takes an `Idempotency-Key`,
 * `durable` is refused while the data dir cannot be written. A route group only gives, per route
 * name, what the table does not hold: the prose for the OpenAPI document and the handler.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify'
import type { Static, TSchema } from 'typebox'
import { apiRoutes, type ApiRoutes, type RouteName, type RouteSpec } from '../../schemas/api-routes.js'
import type { WriteGuards } from '../writes.js'

type Part<R, F extends string> = R extends { readonly [K in F]: infer S extends TSchema } ? Static<S> : unknown

/** The request a route's handler gets, typed from its spec's schemas. */
export type RequestOf<R extends RouteSpec> = FastifyRequest<{ Params: Part<R, 'params'>; Querystring: Part<R, 'querystring'>; Body: Part<R, 'body'> }>

export interface RouteHandler<N extends RouteName> {
  tags: string[]
  summary: string
  description?: string
  preValidation?: (request: RequestOf<ApiRoutes[N]>) => Promise<void>
  handler: (request: RequestOf<ApiRoutes[N]>, reply: FastifyReply) => Promise<unknown>
}

export type RouteHandlers = { [N in RouteName]?: RouteHandler<N> }

/** Registers a handler for each route the table names and `handlers` gives, in the table's order. */
export function registerRoutes(app: FastifyInstance, handlers: RouteHandlers, writes?: WriteGuards): void {
  for (const name of Object.keys(apiRoutes) as RouteName[]) {
    const given = handlers[name] as RouteHandler<RouteName> | undefined
    if (!given) continue
    const spec: RouteSpec = apiRoutes[name]
    const preHandler: preHandlerAsyncHookHandler[] = []
    if (spec.idempotent || spec.durable) {
      if (!writes) throw new Error(`route ${name} takes write guards, and none were given`)
      if (spec.idempotent) preHandler.push(writes.idempotent)
      if (spec.durable) preHandler.push(writes.durable)
    }
    const { params, querystring, body, headers, response } = spec
    const schemas = Object.fromEntries(Object.entries({ params, querystring, body, headers, response }).filter(([, s]) => s !== undefined))
    app.route({
      method: spec.method,
      url: spec.path,
      schema: { tags: given.tags, summary: given.summary, ...(given.description ? { description: given.description } : {}), ...schemas },
      ...(given.preValidation ? { preValidation: given.preValidation as (request: FastifyRequest) => Promise<void> } : {}),
      ...(preHandler.length ? { preHandler } : {}),
      ...(spec.bodyLimit !== undefined ? { bodyLimit: spec.bodyLimit } : {}),
      handler: given.handler as (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>,
    })
  }
}

/**
 * The registry while it opens. The server listens before the host is open (serve.ts): pi's modules
 * load and recovery runs while the web client and `GET /api/health` already answer. The app's routes
 * are built against `registry` below, which stands for the registry once it is open, and every request
 * for a route that reads it waits (`waits`, app.ts's hook) until then: no request touches a thread
 * before recovery is done, and none is refused for coming early.
 */
import type { FastifyRequest } from 'fastify'
import type { ThreadRegistry } from '../host/thread-registry.js'
import { apiRoutes } from '../schemas/api-routes.js'
import { DOCS_PREFIX } from './openapi.js'

export interface OpeningRegistry {
  /** The registry once it is open; `undefined` while it opens. */
  readonly current: ThreadRegistry | undefined
  /** Resolves once the registry is open (recovered); rejects with why it could not open. */
  readonly opened: Promise<ThreadRegistry>
  /**
   * What the routes hold: the registry itself when it was open already; else it stands for it. Read
   * before the registry is open it throws, but for its subscriptions (`watchFeeds`, `observeFeeds`,
   * `onLiveChange`), which the app makes as it is built: they take effect as the registry opens.
   */
  readonly registry: ThreadRegistry
}

/** The calls an app makes while it is built, before any request: made on the registry once it is open. */
const SUBSCRIPTIONS = new Set<PropertyKey>(['watchFeeds', 'observeFeeds', 'onLiveChange'] satisfies (keyof ThreadRegistry)[])

export function openingRegistry(opening: ThreadRegistry | Promise<ThreadRegistry>): OpeningRegistry {
  if (!(opening instanceof Promise)) return { current: opening, opened: Promise.resolve(opening), registry: opening }
  let current: ThreadRegistry | undefined
  const opened = opening.then((registry) => (current = registry))
  // Why it could not open is serve.ts's to say (the process exits); a request waiting is answered 500.
  opened.catch(() => {})
  const later = (subscribe: (registry: ThreadRegistry) => () => void): (() => void) => {
    let unsubscribe: (() => void) | undefined
    let cancelled = false
    opened.then((registry) => void (cancelled || (unsubscribe = subscribe(registry))), () => {})
    return () => {
      cancelled = true
      unsubscribe?.()
    }
  }
  const registry = new Proxy({} as ThreadRegistry, {
    get(_, key) {
      if (current) {
        const value: unknown = Reflect.get(current, key, current)
        // Its methods use private fields: they must run on the registry, not on this stand-in.
        return typeof value === 'function' ? value.bind(current) : value
      }
      if (SUBSCRIPTIONS.has(key)) return (...args: unknown[]) => later((r) => (r[key as 'watchFeeds'] as (...a: unknown[]) => () => void)(...args))
      throw new Error(`the thread registry was read (${String(key)}) before it was open`)
    },
  })
  return {
    get current() {
      return current
    },
    opened,
    registry,
  }
}

/** The routes that never read the registry: the web client's files, health, and the API's own description. */
const WITHOUT_THREADS = new Set<string>([apiRoutes.health.path, apiRoutes.openapi.path])

/** Whether a request must wait for the registry: every route of the API and `/metrics` but those above. */
export function waits(request: FastifyRequest): boolean {
  const route = request.routeOptions.url
  if (route === undefined || WITHOUT_THREADS.has(route) || route.startsWith(DOCS_PREFIX)) return false
  return route.startsWith('/api/') || route === apiRoutes.metrics.path
}

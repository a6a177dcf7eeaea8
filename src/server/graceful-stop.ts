/**
 * A cluster node's graceful stop (SIGTERM, a deploy; docs/flows/cluster.md, "graceful stop"): before
 * the host shuts down, the node drains.
 *
 * 1. It takes no new thread (no takeover, no cold thread opened here) and refuses a command that
 *    would start or change a conversation here — `503` with `Retry-After`, so the client (or the
 *    load balancer) retries, on another node once this one has let the thread go. What helps a run
 *    end still goes through: stop it, take its queue, answer its questions, type into its terminal;
 *    drafts too. Commands for threads another node owns are passed on as ever.
 * 2. Its runs in flight get up to `graceMs` to settle (their queued follow-ups run in them).
 * 3. Then the host shuts down (a run still going is stopped and reported `aborted`, its queued prompts
 *    handed back, as on one node) and the node leaves: each thread's records are flushed and its owner
 *    record deleted — released, not left for a takeover, so another node serves it at once — and the
 *    follows this node served end, their tabs resuming on another node after their last seq.
 *
 * One process alone (no `--cluster`) stops as it always did: nothing here is reached.
 */
import type { FastifyInstance } from 'fastify'
import type { ClusterNode } from '../host/cluster/cluster-node.js'
import type { ThreadRegistry } from '../host/thread-registry.js'
import { apiRoutes, type RouteName } from '../schemas/api-routes.js'
import { guardOutcomes } from '../schemas/outcomes.js'
import { replyWith } from './responses.js'

/** How long a draining node waits for its runs to settle before it stops what is left. */
export const RUN_GRACE_MS = 10_000

/** What a draining node still runs: what lets a run end, and drafts. */
const WHILE_DRAINING: readonly RouteName[] = ['abort', 'takeQueue', 'answerDialog', 'terminalInput', 'reportDraft']

/**
 * preHandler, after the cluster's routing (a command it passed to the owner is answered by then):
 * while the node drains, a write it would run here is refused 503 with Retry-After.
 */
export function refuseWhileDraining(app: FastifyInstance, node: ClusterNode): void {
  const allowed = new Set(WHILE_DRAINING.map((name) => `${apiRoutes[name].method} ${apiRoutes[name].path}`))
  app.addHook('preHandler', async (request, reply) => {
    if (!node.draining || request.method === 'GET' || request.method === 'HEAD') return
    const route = request.routeOptions.url
    if (!route?.startsWith('/api/threads') || allowed.has(`${request.method} ${route}`)) return
    return replyWith(reply.header('retry-after', '1'), guardOutcomes, { kind: 'closing' }, undefined)
  })
}

/** Steps 1 and 2: refuse new work, then wait (up to `graceMs`) until no run is in flight here. */
export async function drainRuns(registry: ThreadRegistry, node: ClusterNode, graceMs = RUN_GRACE_MS): Promise<void> {
  node.drain()
  const until = Date.now() + graceMs
  while (Date.now() < until && registry.liveThreads().some((thread) => thread.busy)) await new Promise((resolve) => setTimeout(resolve, 50))
}

/**
 * Prometheus metrics at `GET /metrics` (behind the same guard as /api).
 *
 * Everything is counted from outside the code it describes: threads from the registry's list; runs,
 * dialogs and frames from each feed's observations (through the registry's `observeFeeds`); followers
 * and bytes from the follow responses' sockets; prompt admissions and HTTP answers from what the
 * routes answered. The follow stream's own code (follow.ts, event-stream.ts) is not touched, so its
 * fan-out can change freely. Nothing here decides anything, and nothing on the request path waits on it.
 *
 * Followers dropped for lag are counted through the event stream's `onDropped` hook, which the app
 * wires to `onFollowerDropped`.
 *
 * A cluster node (`--cluster`) labels every figure with its node name (`node`) and adds its cluster
 * figures, counted by its engine's wrapper (cluster-metrics.ts). One process alone: neither.
 */
import type { ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
import type { ThreadRegistry } from '../host/thread-registry.js'
import type { Observation } from '../schemas/index.js'
import type { ClusterMetrics } from './cluster-metrics.js'
import { apiRoutes } from '../schemas/api-routes.js'
import { registerRoutes } from './routes/register.js'

export const METRICS_PATH = apiRoutes.metrics.path
const PROMPT_ROUTE = apiRoutes.prompt.path
const FOLLOW_ROUTE = apiRoutes.follow.path

export interface MetricsOptions {
  registry: ThreadRegistry
  /** Node's process metrics (memory, event loop, GC): on in the server, off in tests that build many apps. */
  processMetrics?: boolean
  /** A cluster node's name and counts. */
  cluster?: ClusterMetrics
}

/** What a prompt came to, by the status and body the route answered (docs/api.md, Prompt). */
export type PromptKind = 'admitted' | 'queued' | 'busy' | 'rejected' | 'command' | 'refused' | 'unknown' | 'failed' | 'bad-request'

export function classifyPrompt(status: number, body: { queued?: unknown; reason?: unknown } | undefined): PromptKind {
  if (status === 202) return body?.queued === true ? 'queued' : 'admitted'
  if (status === 200) return 'command'
  if (status === 409) return body?.reason === 'busy' ? 'busy' : 'rejected'
  if (status === 503) return 'rejected'
  if (status === 422) return 'refused'
  if (status === 404) return 'unknown'
  if (status === 502) return 'failed'
  return 'bad-request'
}

/** Adds the metrics hooks to the root app (so they see every route) and serves `GET /metrics`. */
export function installMetrics(
  app: FastifyInstance,
  options: MetricsOptions,
): { register: Registry; onFollowerDropped: (reason: 'lag' | 'buffer-limit') => void; onFollowJoined: (res: ServerResponse) => void } {
  const { registry } = options
  const register = new Registry()
  // Before any metric exists: the default label applies to those registered after it.
  if (options.cluster) register.setDefaultLabels({ node: options.cluster.node })
  if (options.processMetrics) collectDefaultMetrics({ register, prefix: 'threadhost_' })
  const registers = [register]

  new Gauge({
    name: 'threadhost_threads',
    help: 'Known threads: live (a runtime is built) or cold (only the transcript)',
    labelNames: ['state'],
    registers,
    collect() {
      const threads = registry.list()
      const live = threads.filter((t) => t.live).length
      this.set({ state: 'live' }, live)
      this.set({ state: 'cold' }, threads.length - live)
    },
  })

  // The follow responses now open, by thread, each with its socket (kept: a finished response lets
  // go of it), the socket's bytes already counted, and how far into its thread's frames it was charged.
  type Tracked = { socket: Socket | null; counted: number; charged: number }
  const follows = new Map<string, Map<ServerResponse, Tracked>>()
  /** Frames each followed thread's feed appended: one add per frame, however many follow it. */
  const appended = new Map<string, { n: number }>()
  /** Each follow response's thread and tracking, for the moment it joins its feed. */
  const joining = new WeakMap<ServerResponse, { threadId: string; tracked: Tracked }>()
  /** A follow answered with its stream (not a 404 or a refusal), and not yet closed. */
  const streaming = (res: ServerResponse) => res.statusCode === 200 && res.headersSent && !res.destroyed
  const bytesOut = new Counter({
    name: 'threadhost_follow_bytes_out_total',
    help: 'Bytes written to follow streams: headers, snapshots, frames and heartbeats',
    registers,
    collect() {
      for (const streams of follows.values()) for (const tracked of streams.values()) account(tracked)
    },
  })
  const account = (tracked: Tracked) => {
    const written = tracked.socket?.bytesWritten
    if (written === undefined || written <= tracked.counted) return
    bytesOut.inc(written - tracked.counted)
    tracked.counted = written
  }
  new Gauge({
    name: 'threadhost_followers',
    help: 'Open follow streams, over all threads',
    registers,
    collect() {
      let open = 0
      for (const streams of follows.values()) for (const res of streams.keys()) if (streaming(res)) open++
      this.set(open)
    },
  })
  const framesOut = new Counter({
    name: 'threadhost_follow_frames_out_total',
    help: 'Observation frames sent to follow streams (one per stream per frame), counted as the feed appends them; snapshots and resume replays are not included',
    registers,
    collect() {
      for (const [threadId, streams] of follows) for (const [res, tracked] of streams) charge(threadId, res, tracked)
    },
  })
  /** A follow is charged the frames its thread appended since it was last charged, if it was streaming them. */
  const charge = (threadId: string, res: ServerResponse, tracked: Tracked) => {
    const now = appended.get(threadId)?.n ?? 0
    if (now > tracked.charged && res.statusCode === 200 && res.headersSent) framesOut.inc(now - tracked.charged)
    tracked.charged = now
  }
  const runsStarted = new Counter({ name: 'threadhost_runs_started_total', help: 'Runs started (status busy with a new run number)', registers })
  const runsSettled = new Counter({ name: 'threadhost_runs_settled_total', help: 'Runs ended by their settle, aborted or not', registers })
  const runsAborted = new Counter({ name: 'threadhost_runs_aborted_total', help: 'Runs whose settle says aborted', registers })
  const runDuration = new Histogram({
    name: 'threadhost_run_duration_seconds',
    help: 'From a run starting to its settle',
    labelNames: ['aborted'],
    buckets: [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800],
    registers,
  })
  const dialogsOpened = new Counter({
    name: 'threadhost_dialogs_opened_total',
    help: 'Questions asked of a human, by dialog method',
    labelNames: ['method'],
    registers,
  })
  const dialogsSettled = new Counter({
    name: 'threadhost_dialogs_settled_total',
    help: 'Questions settled, by outcome (answered, cancelled, timeout, aborted)',
    labelNames: ['outcome'],
    registers,
  })
  const dialogOpen = new Histogram({
    name: 'threadhost_dialog_open_seconds',
    help: 'How long a question stayed open, by outcome',
    labelNames: ['outcome'],
    buckets: [0.5, 1, 5, 15, 30, 60, 120, 300, 900, 3600],
    registers,
  })
  const prompts = new Counter({
    name: 'threadhost_prompts_total',
    help: 'Prompts by what they came to: admitted (a new run), queued, busy, rejected, command, refused, unknown, failed, bad-request',
    labelNames: ['kind'],
    registers,
  })
  const requests = new Counter({
    name: 'threadhost_http_requests_total',
    help: 'HTTP responses by method, route pattern and status (a follow counts only when the server ends its stream)',
    labelNames: ['method', 'route', 'status'],
    registers,
  })

  // ——— the feeds ———
  const runStarts = new Map<string, { run: number; at?: number }>()
  const dialogStarts = new Map<string, number>()
  let closed = false
  const observe = (threadId: string, o: Observation) => {
    if (closed) return
    const count = appended.get(threadId)
    if (count) count.n++
    switch (o.type) {
      case 'status': {
        const last = runStarts.get(threadId)
        if (o.busy && last?.run !== o.run) {
          runStarts.set(threadId, { run: o.run, at: performance.now() })
          runsStarted.inc()
        }
        break
      }
      case 'settled': {
        runsSettled.inc()
        if (o.aborted) runsAborted.inc()
        const start = runStarts.get(threadId)
        if (start?.run === o.run && start.at !== undefined) {
          runDuration.observe({ aborted: String(o.aborted) }, (performance.now() - start.at) / 1000)
          runStarts.set(threadId, { run: o.run })
        }
        break
      }
      case 'extension-ui-request':
        dialogsOpened.inc({ method: o.dialog.method })
        dialogStarts.set(`${threadId}\n${o.id}`, performance.now())
        break
      case 'dialog-settled': {
        dialogsSettled.inc({ outcome: o.outcome })
        const key = `${threadId}\n${o.id}`
        const at = dialogStarts.get(key)
        dialogStarts.delete(key)
        if (at !== undefined) dialogOpen.observe({ outcome: o.outcome }, (performance.now() - at) / 1000)
        break
      }
    }
  }
  const unwatch = registry.observeFeeds((threadId, _feed, o) => observe(threadId, o))
  app.addHook('onClose', async () => {
    closed = true
    unwatch()
  })

  // ——— the responses ———
  app.addHook('onRequest', async (request, reply) => {
    if (request.routeOptions.url !== FOLLOW_ROUTE) return
    const threadId = (request.params as { id: string }).id
    const res = reply.raw
    const streams = follows.get(threadId) ?? new Map<ServerResponse, Tracked>()
    follows.set(threadId, streams)
    const count = appended.get(threadId) ?? { n: 0 }
    appended.set(threadId, count)
    const tracked = { socket: res.socket, counted: res.socket?.bytesWritten ?? 0, charged: count.n }
    streams.set(res, tracked)
    joining.set(res, { threadId, tracked })
    res.once('close', () => {
      account(tracked)
      charge(threadId, res, tracked)
      streams.delete(res)
      if (streams.size === 0 && follows.get(threadId) === streams) {
        follows.delete(threadId)
        appended.delete(threadId)
      }
    })
  })
  app.addHook('onSend', async (request, reply, payload) => {
    if (request.routeOptions.url !== PROMPT_ROUTE || request.method !== 'POST') return payload
    // A repeat answered from its Idempotency-Key admitted nothing: the first answer was counted.
    if (reply.getHeader('idempotent-replayed')) return payload
    prompts.inc({ kind: classifyPrompt(reply.statusCode, parseBody(payload)) })
    return payload
  })
  app.addHook('onResponse', async (request, reply) => {
    requests.inc({ method: request.method, route: request.routeOptions.url ?? '(unmatched)', status: String(reply.statusCode) })
  })

  registerRoutes(app, {
    metrics: {
      tags: ['meta'],
      summary: 'Prometheus metrics (text exposition format)',
      handler: async (_request, reply) => reply.type(register.contentType).send(await register.metrics()),
    },
  })
  if (options.cluster) clusterFigures(options.cluster, registry, registers)
  const dropped = new Counter({
    name: 'threadhost_followers_dropped_total',
    help: 'Followers closed because they fell behind (sustained lag, or over the buffer limit); their tabs resume',
    labelNames: ['reason'],
    registers,
  })
  return {
    register,
    onFollowerDropped: (reason) => dropped.inc({ reason }),
    // What was appended before the follow joined reached it in its snapshot or resume frames.
    onFollowJoined: (res) => {
      const joined = joining.get(res)
      if (joined) joined.tracked.charged = appended.get(joined.threadId)?.n ?? 0
    },
  }
}

/** A cluster node's own figures: what it owns and mirrors now, and what it appended, passed on, served and took over. */
function clusterFigures(cluster: ClusterMetrics, registry: ThreadRegistry, registers: Registry[]): void {
  const { counts } = cluster
  new Gauge({
    name: 'threadhost_cluster_threads_owned',
    help: 'Threads this node owns now (it runs their commands and writes their logs)',
    registers,
    collect() {
      this.set(registry.list().filter((t) => cluster.owns(t.threadId)).length)
    },
  })
  new Gauge({
    name: 'threadhost_cluster_mirrors',
    help: "Threads whose log this node reads now, to serve its followers (one mirror per thread)",
    registers,
    collect() {
      this.set(counts.mirrors)
    },
  })
  const total = (name: string, help: string, value: () => number) =>
    new Counter({
      name,
      help,
      registers,
      collect() {
        this.reset()
        this.inc(value())
      },
    })
  total('threadhost_cluster_appends_total', "Records this node appended to threads' logs", () => counts.appends)
  total('threadhost_cluster_appends_refused_total', 'Appends refused because another node had written since (this node was fenced for that thread)', () => counts.refused)
  total('threadhost_cluster_takeovers_total', 'Threads this node took over from a node whose lease had lapsed', () => counts.takeovers)
  new Counter({
    name: 'threadhost_cluster_commands_total',
    help: "Commands passed between nodes: `forwarded` by this node to a thread's owner (and answered), `served` here as the owner for another node",
    labelNames: ['way'],
    registers,
    collect() {
      this.reset()
      this.inc({ way: 'forwarded' }, counts.forwarded)
      this.inc({ way: 'served' }, counts.served)
    },
  })
}

function parseBody(payload: unknown): { queued?: unknown; reason?: unknown } | undefined {
  if (typeof payload !== 'string' || !payload.startsWith('{')) return undefined
  try {
    return JSON.parse(payload) as { queued?: unknown; reason?: unknown }
  } catch {
    return undefined
  }
}

/**
 * threadhost's lifecycle as Effect layers: the configuration, the host and the HTTP listener. Each
 * layer acquires one resource and says how to release it, so a stop (SIGINT/SIGTERM, main.ts)
 * releases them in reverse order and a start that fails half-way (a taken port) releases what it
 * had already opened. Effect holds these edges only — acquire, release, how long a release may take
 * (docs/architecture.md, "Effect at the edges"); what the host does is plain async code and machines.
 *
 * The way out, in order: the host drains while the listener still answers (new requests get 503,
 * every run stops with its queued prompts reported, open dialogs settle `aborted`, followers see
 * `live: false` and their streams end, the store is closed), then the listener closes. Each part is
 * bounded, so one that hangs is reported and passed over instead of holding the process.
 */
import { Context, Data, Effect, Layer, type Duration } from 'effect'
import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import { join } from 'node:path'
import type { ClusterNode } from '../host/cluster/cluster-node.js'
import type { ThreadRegistry } from '../host/thread-registry.js'
import { lockDataDir } from '../host/store/data-dir-lock.js'
import { tokenOf } from '../host/cluster/port.js'
import { PushNotifier } from '../host/push/notifier.js'
import { buildApp } from './app.js'
import { clusterHttp } from './cluster-http.js'
import { clusterMetrics } from './cluster-metrics.js'
import { debugRoutes } from './debug-routes.js'
import { drainRuns } from './graceful-stop.js'
import { ConfigError, type Config } from './config.js'
import { createLogger, hostLog, type LogLevel } from './log.js'
import { listenProblem } from './listen-problem.js'
import { openingRegistry } from './opening.js'

/** How long the threads may take to stop before the way out goes on without them. */
const DRAIN_LIMIT: Duration.Input = '15 seconds'
/** How long the listener may take to close once the threads have stopped and every stream has ended. */
const CLOSE_LIMIT: Duration.Input = '5 seconds'
/**
 * The whole way out (main.ts); past it the process exits 1. Its parts' own bounds, at their worst: a
 * cluster node's drain (RUN_GRACE_MS, 10 s), the threads (15 s), leaving the cluster (5 s, and 5 s more
 * where the host's release waits on the same hung leave), the listener (5 s) — 40 s — and a margin.
 */
export const SHUTDOWN_LIMIT: Duration.Input = '50 seconds'

type HostLog = (level: LogLevel, message: string) => void

/** The checked configuration (parsed before Effect loads, so `--help` and a wrong flag answer at once). */
class Settings extends Context.Service<Settings, Config>()('threadhost/Settings') {}

/** The host's edges: its data dir (locked), its notification keys, and the one structured logger the routes share with it. */
class Host extends Context.Service<Host, { push: PushNotifier; logger: Logger; log: HostLog; ownDir: string }>()('threadhost/Host') {}

/** Why threadhost did not start, in one line for the person who started it, and the code it exits with. */
export class StartFailed extends Data.TaggedError('StartFailed')<{ readonly message: string; readonly exitCode: number }> {}

/** Runs `part`, but for at most `limit`: past it, says so and goes on with the rest of the way out. */
const bounded = (part: () => Promise<unknown>, limit: Duration.Input, log: HostLog, what: string) =>
  Effect.promise(part).pipe(
    Effect.timeoutOrElse({ duration: limit, orElse: () => Effect.sync(() => log('warn', `${what} did not finish within ${limit}; going on without it`)) }),
  )

/**
 * Refuse new work, stop every run, settle open dialogs, close followers, close the store
 * (`registry.shutdown`, which is idempotent: the second caller waits on the first).
 */
const drain = (registry: ThreadRegistry, log: HostLog, node?: ClusterNode) =>
  Effect.sync(() => registry.closing || log('info', 'shutting down: stopping runs and closing followers')).pipe(
    // A cluster node drains first (graceful-stop.ts): new runs refused, the runs in flight given time to
    // settle; after the shutdown it releases its threads (not left for a takeover) and its follows end.
    Effect.andThen(node ? bounded(() => drainRuns(registry, node), DRAIN_LIMIT, log, 'letting the runs settle') : Effect.void),
    Effect.andThen(bounded(() => registry.shutdown(), DRAIN_LIMIT, log, 'stopping the threads')),
    Effect.andThen(node ? bounded(() => node.stop(), CLOSE_LIMIT, log, 'leaving the cluster') : Effect.void),
  )

/** A cluster node's own journal and keys: its directory under the shared data dir. */
const nodeDir = (dataDir: string, nodeName: string) => join(dataDir, 'nodes', tokenOf(nodeName))

/** The registry, recovered, and in cluster mode the node (src/server/open-host.ts). */
interface OpenedHost {
  registry: ThreadRegistry
  node?: ClusterNode
}

/**
 * The app on its port; an app that cannot listen is closed before the failure goes on. `host` is a
 * promise while the host opens behind the listener: the routes that read it wait for it (app.ts).
 */
async function listen(config: Config, host: OpenedHost | Promise<OpenedHost>, push: PushNotifier, logger: Logger): Promise<{ app: FastifyInstance; url: string }> {
  const node = host instanceof Promise ? undefined : host.node
  const opening = openingRegistry(host instanceof Promise ? host.then((h) => h.registry) : host.registry)
  const app = await buildApp({
    ...(node ? { cluster: clusterHttp(node, { url: config.cluster?.nodeUrl }), clusterMetrics: clusterMetrics(node) } : {}),
    registry: opening,
    push,
    token: config.token,
    clientDir: config.clientDir,
    loggerInstance: logger,
    processMetrics: true,
    plugins: config.inspector ? [debugRoutes({ registry: opening.registry })] : [],
  })
  try {
    const address = await app.listen({ port: config.port, host: config.host })
    return { app, url: address.replace('[::1]', 'localhost') }
  } catch (error) {
    await app.close()
    throw error
  }
}

/** A failed start said as the person can act on it: a wrong flag exits 2, anything else 1 with its stack. */
const startFailure = (what: string) => (error: unknown) =>
  error instanceof ConfigError
    ? new StartFailed({ message: error.message, exitCode: 2 })
    : new StartFailed({ message: `threadhost could not ${what}: ${error instanceof Error ? error.stack : String(error)}`, exitCode: 1 })

const listenFailure = (config: Config) => (error: unknown) => {
  const problem = listenProblem(config, error)
  return problem === undefined ? startFailure(`listen on ${config.host}:${config.port}`)(error) : new StartFailed({ message: problem, exitCode: 1 })
}

const HostLive = Layer.effect(
  Host,
  Effect.gen(function* () {
    const config = yield* Settings
    const logger = createLogger(config.logLevel)
    const log = hostLog(logger)
    // Before anything reads the data dir or listens: a second server on it would write the same sessions.
    const ownDir = config.cluster ? nodeDir(config.dataDir, config.cluster.nodeName) : config.dataDir
    yield* Effect.acquireRelease(
      Effect.suspend(() => {
        const lock = lockDataDir(ownDir)
        return lock === 'held'
          ? Effect.fail(new StartFailed({ message: `threadhost: another threadhost is already running on ${ownDir}${config.cluster ? ` as node ${config.cluster.nodeName}` : ''}; stop it, or start this one with its own --data-dir${config.cluster ? ' or --node-name' : ''}`, exitCode: 1 }))
          : Effect.succeed(lock)
      }),
      (lock) => Effect.sync(() => lock.release()),
    )
    // Made on the first start and kept in the data dir (src/host/push/vapid.ts).
    const push = yield* Effect.try({ try: () => PushNotifier.open(config.dataDir, log), catch: startFailure('open its notification keys') })
    return { push, logger, log, ownDir }
  }),
)

/**
 * The registry on pi, recovered (its modules are loaded here, once the server listens). Released after
 * the drain (HttpLive), so after a served run this waits on nothing more; after a start that failed
 * past this point (a taken port in cluster mode) it is what stops the threads and closes the store.
 */
const openedHost = (config: Config, log: HostLog, ownDir: string, told?: Told<OpenedHost>) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: () =>
        import('./open-host.js')
          .then(({ openHost }) => openHost(config, log, ownDir))
          .then(
            (host) => (told?.resolve(host), host),
            (error: unknown) => {
              told?.reject(error)
              throw error
            },
          ),
      catch: startFailure('open its host'),
    }),
    ({ registry, node }) =>
      (registry.closing ? Effect.void : bounded(() => registry.shutdown(), DRAIN_LIMIT, log, 'stopping the threads')).pipe(
        Effect.andThen(node ? bounded(() => node.stop(), CLOSE_LIMIT, log, 'leaving the cluster') : Effect.void),
      ),
  )

const HttpLive = Layer.effectDiscard(
  Effect.gen(function* () {
    const config = yield* Settings
    const { push, logger, log, ownDir } = yield* Host
    const listener = (host: OpenedHost | Promise<OpenedHost>) =>
      Effect.acquireRelease(
        Effect.tryPromise({ try: () => listen(config, host, push, logger), catch: listenFailure(config) }),
        ({ app }) => bounded(() => app.close(), CLOSE_LIMIT, log, 'closing the listener'),
      ).pipe(Effect.tap(({ url }) => Effect.sync(() => listening(config, url))))
    let host: OpenedHost
    if (config.cluster) {
      // A node joins its cluster before it listens: its routes pass commands to their owners from the first request.
      host = yield* openedHost(config, log, ownDir)
      yield* listener(host)
    } else {
      // Listening first: the web client and health answer while pi loads and the threads are recovered.
      const told = toldLater<OpenedHost>()
      yield* listener(told.promise)
      host = yield* openedHost(config, log, ownDir, told)
      log('info', 'threads recovered: every route is served')
    }
    const { registry, node } = host
    // Released before the listener closes: during the drain a request is answered 503, not refused,
    // and every follower gets its last frames before its stream ends (which lets the close finish).
    yield* Effect.addFinalizer(() => drain(registry, log, node))
  }),
)

/** A promise and its two ends (Promise.withResolvers, ES2024). */
interface Told<T> {
  promise: Promise<T>
  resolve: (value: T) => void
  reject: (error: unknown) => void
}

function toldLater<T>(): Told<T> {
  let resolve!: (value: T) => void
  let reject!: (error: unknown) => void
  const promise = new Promise<T>((yes, no) => ((resolve = yes), (reject = no)))
  // A failed open is said by the layer's failure; a request held for it is answered 500.
  promise.catch(() => {})
  return { promise, resolve, reject }
}

/** The way in, printed once the server listens. */
function listening(config: Config, url: string): void {
  if (config.tokenGenerated) {
    // Printed once, here only (never logged): the way in for this run.
    console.log(
      `threadhost: no --token given for --host ${config.host}, so this run uses a generated one: ${config.token}\n` +
        `  open ${url}/?token=${config.token} or send Authorization: Bearer <token>; pass --token to choose your own`,
    )
  }
  console.log(`threadhost listening on ${url}`)
}

/** threadhost until interrupted: the layers built in order, then held open; interrupting releases them. */
export const serve = (config: Config): Effect.Effect<never, StartFailed> =>
  Layer.launch(HttpLive.pipe(Layer.provide(HostLive), Layer.provide(Layer.succeed(Settings, config))))

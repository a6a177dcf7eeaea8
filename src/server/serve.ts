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
import { SqliteThreadStore } from '../host/store/sqlite.js'
import { lockDataDir } from '../host/store/data-dir-lock.js'
import { tokenOf } from '../host/cluster/port.js'
import { lostCeiling } from '../host/store/journal.js'
import { PushNotifier } from '../host/push/notifier.js'
import { ThreadRegistry } from '../host/thread-registry.js'
import { initialView } from '../shared/projection.js'
import { Workspaces } from '../host/workspaces.js'
import { createPiRuntimeFactory, describeSurvey, PiModels, surveyAgentDir } from '../runtime/index.js'
import { buildApp } from './app.js'
import { clusterHttp } from './cluster-http.js'
import { clusterMetrics, countedEngine } from './cluster-metrics.js'
import { debugRoutes } from './debug-routes.js'
import { drainRuns } from './graceful-stop.js'
import { ConfigError, type Config } from './config.js'
import { createLogger, hostLog, type LogLevel } from './log.js'
import { listenProblem } from './listen-problem.js'

/** How long the threads may take to stop before the way out goes on without them. */
const DRAIN_LIMIT: Duration.Input = '15 seconds'
/** How long the listener may take to close once the threads have stopped and every stream has ended. */
const CLOSE_LIMIT: Duration.Input = '5 seconds'
/** The whole way out (main.ts): the parts' own bounds (a cluster node's drain first: RUN_GRACE_MS) and a margin; past it the process exits 1. */
export const SHUTDOWN_LIMIT: Duration.Input = '35 seconds'

type HostLog = (level: LogLevel, message: string) => void

/** The checked configuration (parsed before Effect loads, so `--help` and a wrong flag answer at once). */
class Settings extends Context.Service<Settings, Config>()('threadhost/Settings') {}

/** The host: the thread registry on pi, and the one structured logger the routes share with it. */
class Host extends Context.Service<Host, { registry: ThreadRegistry; push: PushNotifier; logger: Logger; log: HostLog; node?: ClusterNode }>()('threadhost/Host') {}

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

/** `--model` must be usable (an unusable flag stops the start with pi's reason); without it, pi's own default or demo. */
async function chooseDefaultModel(config: Config, models: PiModels, cwd: string): Promise<string> {
  if (config.model === undefined) return models.piDefault(config.agentDir, cwd)
  const check = await models.check(config.model)
  if (!check.ok) throw new ConfigError(`--model ${config.model}: ${check.reason}`)
  return config.model
}

/** pi's models, the default model, what the agent dir holds (printed once), then the registry: opened last, so nothing before it needs releasing. */
async function openRegistry(config: Config, log: HostLog): Promise<{ registry: ThreadRegistry; node?: ClusterNode }> {
  const runtimeLog = {
    info: (m: string) => log('info', m),
    warn: (m: string) => log('warn', m),
    error: (m: string) => log('error', m),
  }
  const workspaces = new Workspaces(config.workspaces)
  const models = await PiModels.create({ agentDir: config.agentDir, demoDelayMs: config.demoDelayMs })
  const defaultModel = await chooseDefaultModel(config, models, workspaces.default)
  console.log(describeSurvey(await surveyAgentDir(config.agentDir, workspaces.default, models), defaultModel))
  const runtimes = createPiRuntimeFactory({
      dataDir: config.dataDir,
      agentDir: config.agentDir,
      models,
      trustProjects: config.trustProjects,
      toolPolicy: config.toolPolicy,
      log: runtimeLog,
    })
  const options = { dataDir: config.dataDir, runtimes, models, workspaces, defaultModel, idleMs: config.idleMs, log }
  if (!config.cluster) return { registry: await ThreadRegistry.open(options) }
  return openClusterNode(config.cluster, options, log)
}

/** A cluster node's own journal and keys: its directory under the shared data dir. */
const nodeDir = (dataDir: string, nodeName: string) => join(dataDir, 'nodes', tokenOf(nodeName))

/**
 * Cluster mode: the NATS modules are loaded here and only here. The node's own journal and keys
 * stay in a store of its own under the shared data dir; the session files are shared.
 */
async function openClusterNode(
  cluster: NonNullable<Config['cluster']>,
  options: Parameters<typeof ThreadRegistry.open>[0],
  log: HostLog,
): Promise<{ registry: ThreadRegistry; node: ClusterNode }> {
  const [{ connectNats }, { ClusterNode, clusterStore }] = await Promise.all([import('../host/cluster/nats.js'), import('../host/cluster/cluster-node.js')])
  const connected = await connectNats(cluster.url, cluster.nodeName, log).catch((error: unknown) => {
    throw new ConfigError(`--cluster ${cluster.url}: could not reach NATS JetStream (${error instanceof Error ? error.message : String(error)})`)
  })
  // Counted as the node uses it, for its /metrics.
  const { engine } = countedEngine(connected)
  let node: ClusterNode | undefined
  const own = SqliteThreadStore.open(nodeDir(options.dataDir, cluster.nodeName), { floorSeq: () => lostCeiling() })
  const registry = await ThreadRegistry.open({ ...options, store: clusterStore(own.store, () => node, log) })
  node = new ClusterNode(engine, registry, {
    fileView: async (threadId) => initialView(threadId, await options.runtimes.readTranscript(threadId).catch(() => [])),
    log,
  })
  await node.start()
  log('info', `cluster: node ${cluster.nodeName} joined ${cluster.url}`)
  return { registry, node }
}

/** The app on its port; an app that cannot listen is closed before the failure goes on. */
async function listen(config: Config, registry: ThreadRegistry, push: PushNotifier, logger: Logger, node?: ClusterNode): Promise<{ app: FastifyInstance; url: string }> {
  const app = await buildApp({
    ...(node ? { cluster: clusterHttp(node), clusterMetrics: clusterMetrics(node) } : {}),
    registry,
    push,
    token: config.token,
    clientDir: config.clientDir,
    loggerInstance: logger,
    processMetrics: true,
    plugins: config.inspector ? [debugRoutes({ registry })] : [],
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
    // Before anything reads the data dir: a second server on it would write the same sessions.
    yield* Effect.acquireRelease(
      Effect.suspend(() => {
        const dir = config.cluster ? nodeDir(config.dataDir, config.cluster.nodeName) : config.dataDir
        const lock = lockDataDir(dir)
        return lock === 'held'
          ? Effect.fail(new StartFailed({ message: `threadhost: another threadhost is already running on ${dir}${config.cluster ? ` as node ${config.cluster.nodeName}` : ''}; stop it, or start this one with its own --data-dir${config.cluster ? ' or --node-name' : ''}`, exitCode: 1 }))
          : Effect.succeed(lock)
      }),
      (lock) => Effect.sync(() => lock.release()),
    )
    // Released last. After a served run the drain (HttpLive) has already run or used up its bound, so
    // this waits on nothing more; after a start that failed past this point (a taken port) it is what
    // stops the threads and closes the store.
    const { registry, node } = yield* Effect.acquireRelease(
      Effect.tryPromise({ try: () => openRegistry(config, log), catch: startFailure('open its host') }),
      ({ registry, node }) =>
        (registry.closing ? Effect.void : bounded(() => registry.shutdown(), DRAIN_LIMIT, log, 'stopping the threads')).pipe(
          Effect.andThen(node ? bounded(() => node.stop(), CLOSE_LIMIT, log, 'leaving the cluster') : Effect.void),
        ),
    )
    // Made on the first start and kept in the data dir (src/host/push/vapid.ts).
    const push = yield* Effect.try({ try: () => PushNotifier.open(config.dataDir, log), catch: startFailure('open its notification keys') })
    return { registry, push, logger, log, ...(node ? { node } : {}) }
  }),
)

const HttpLive = Layer.effectDiscard(
  Effect.gen(function* () {
    const config = yield* Settings
    const { registry, push, logger, log, node } = yield* Host
    const { app, url } = yield* Effect.acquireRelease(
      Effect.tryPromise({ try: () => listen(config, registry, push, logger, node), catch: listenFailure(config) }),
      ({ app }) => bounded(() => app.close(), CLOSE_LIMIT, log, 'closing the listener'),
    )
    // Released before the listener closes: during the drain a request is answered 503, not refused,
    // and every follower gets its last frames before its stream ends (which lets the close finish).
    yield* Effect.addFinalizer(() => drain(registry, log, node))
    if (config.tokenGenerated) {
      // Printed once, here only (never logged): the way in for this run.
      console.log(
        `threadhost: no --token given for --host ${config.host}, so this run uses a generated one: ${config.token}\n` +
          `  open ${url}/?token=${config.token} or send Authorization: Bearer <token>; pass --token to choose your own`,
      )
    }
    console.log(`threadhost listening on ${url}`)
  }),
)

/** threadhost until interrupted: the layers built in order, then held open; interrupting releases them. */
export const serve = (config: Config): Effect.Effect<never, StartFailed> =>
  Layer.launch(HttpLive.pipe(Layer.provide(HostLive), Layer.provide(Layer.succeed(Settings, config))))

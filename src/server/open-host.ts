/**
 * The host as serve.ts opens it: pi's models, the default model, what the agent dir holds (printed
 * once), then the registry, recovered. Loaded by serve.ts only once the server listens: this module
 * brings pi, the store and everything a thread needs.
 */
import { join } from 'node:path'
import type { ClusterNode } from '../host/cluster/cluster-node.js'
import { lostCeiling } from '../host/store/journal.js'
import { SqliteThreadStore } from '../host/store/sqlite.js'
import { ThreadRegistry } from '../host/thread-registry.js'
import { Workspaces } from '../host/workspaces.js'
import { createPiRuntimeFactory, describeSurvey, PiModels, surveyAgentDir } from '../runtime/index.js'
import { initialView } from '../shared/projection.js'
import { countedEngine } from './cluster-metrics.js'
import { ConfigError, type Config } from './config.js'
import { requestStop } from './stop-request.js'
import type { LogLevel } from './log.js'

type HostLog = (level: LogLevel, message: string) => void

/** `--model` must be usable (an unusable flag stops the start with pi's reason); without it, pi's own default or demo. */
async function chooseDefaultModel(config: Config, models: PiModels, cwd: string): Promise<string> {
  if (config.model === undefined) return models.piDefault(config.agentDir, cwd)
  const check = await models.check(config.model)
  if (!check.ok) throw new ConfigError(`--model ${config.model}: ${check.reason}`)
  return config.model
}

/**
 * pi's models, the default model, the agent dir's survey, then the registry: opened last, so nothing
 * before it needs releasing. `ownDir`: in cluster mode the node's own directory (its journal and keys).
 */
export async function openHost(config: Config, log: HostLog, ownDir: string): Promise<{ registry: ThreadRegistry; node?: ClusterNode }> {
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
  return openClusterNode(config.cluster, options, ownDir, log)
}

/**
 * Cluster mode: the NATS modules are loaded here and only here. The node's own journal and keys
 * stay in a store of its own under the shared data dir; the session files are shared.
 */
async function openClusterNode(
  cluster: NonNullable<Config['cluster']>,
  options: Parameters<typeof ThreadRegistry.open>[0],
  ownDir: string,
  log: HostLog,
): Promise<{ registry: ThreadRegistry; node: ClusterNode }> {
  const [{ connectNats }, { ClusterNode }, { clusterStore }, { OtherRecordFormat }] = await Promise.all([
    import('../host/cluster/nats.js'),
    import('../host/cluster/cluster-node.js'),
    import('../host/cluster/cluster-store.js'),
    import('../host/cluster/record-format.js'),
  ])
  const connected = await connectNats(cluster.access, cluster.nodeName, log, { spillDir: join(options.dataDir, 'cluster-spill') }).catch((error: unknown) => {
    throw new ConfigError(`--cluster ${cluster.url}: could not join NATS JetStream (${error instanceof Error ? error.message : String(error)})`)
  })
  // Its connection closed for good (the server refused its credentials): it stops, and says why.
  void connected.ended.then((reason) => requestStop(1, `--cluster ${cluster.url}: NATS closed the connection for good (${reason})`))
  // Counted as the node uses it, for its /metrics.
  const { engine } = countedEngine(connected)
  let node: ClusterNode | undefined
  const own = SqliteThreadStore.open(ownDir, { floorSeq: () => lostCeiling(), logged: true })
  const registry = await ThreadRegistry.open({ ...options, store: clusterStore(own.store, () => node, log) })
  node = new ClusterNode(engine, registry, {
    fileView: async (threadId) => initialView(threadId, await options.runtimes.readTranscript(threadId).catch(() => [])),
    log,
    // Back from a lost lease among nodes of another record format: it stops as a graceful stop does, and
    // exits 2 as a start beside them does (1 when the engine's answer was an error).
    onMustStop: (error) => requestStop(error instanceof OtherRecordFormat ? 2 : 1, error.message),
  })
  await node.start().catch(async (error: unknown) => {
    await registry.shutdown()
    await connected.close().catch(() => {})
    throw error instanceof OtherRecordFormat ? new ConfigError(`--cluster ${cluster.url}: ${error.message}`) : error
  })
  log('info', `cluster: node ${cluster.nodeName} joined ${cluster.url}`)
  return { registry, node }
}

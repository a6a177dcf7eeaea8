/**
 * Cluster nodes in this process on the in-process engine (memory.ts): each its own registry, store
 * and app over one shared data dir, wired as serve.ts wires a `--cluster` node.
 */
import type { FastifyInstance } from 'fastify'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, expect } from 'vitest'
import { ClusterNode } from '../../src/host/cluster/cluster-node.js'
import { clusterStore } from '../../src/host/cluster/cluster-store.js'
import type { MemoryCluster } from '../../src/host/cluster/memory.js'
import { Fenced, type ClusterEngine, type ThreadRecord } from '../../src/host/cluster/port.js'
import type { RuntimeFactory } from '../../src/runtime/port.js'
import { lostCeiling } from '../../src/host/store/journal.js'
import { SqliteThreadStore } from '../../src/host/store/sqlite.js'
import { ThreadRegistry } from '../../src/host/thread-registry.js'
import { buildApp } from '../../src/server/app.js'
import { clusterHttp } from '../../src/server/cluster-http.js'
import { clusterMetrics, countedEngine } from '../../src/server/cluster-metrics.js'
import { initialView } from '../../src/shared/projection.js'
import { api, is, piHost, SseClient } from './harness.js'

export interface InProcessNode {
  url: string
  node: ClusterNode
  registry: ThreadRegistry
  close(): Promise<void>
}

export async function startNode(
  cluster: MemoryCluster,
  name: string,
  dataDir: string,
  extra: {
    idleMs?: number
    demoDelayMs?: number
    engine?: (engine: ClusterEngine) => ClusterEngine
    /** A test's seam between the registry and its runtimes (a removal that fails, say). */
    runtimes?: (runtimes: RuntimeFactory) => RuntimeFactory
    clock?: () => number
    nodeUrl?: string
    format?: number
    checkpointFormat?: number
    checkpointEvery?: number
    onMustStop?: (error: Error) => void
  } = {},
): Promise<InProcessNode> {
  const { engine: seam = (e) => e, runtimes: runtimeSeam = (r) => r, demoDelayMs = 2, clock, nodeUrl, format, checkpointFormat, checkpointEvery, onMustStop, ...rest } = extra
  const host = await piHost(dataDir, { demoDelayMs })
  const options = { ...host, runtimes: runtimeSeam(host.runtimes), ...rest }
  // `engine`: a test's seam between the node and the engine (a write that never lands, say).
  const { engine } = countedEngine(seam(cluster.engine(name, format, checkpointFormat)))
  let node: ClusterNode | undefined
  const own = SqliteThreadStore.open(join(dataDir, 'nodes', name), { floorSeq: () => lostCeiling(), logged: true })
  const registry = await ThreadRegistry.open({ ...options, store: clusterStore(own.store, () => node) })
  node = new ClusterNode(engine, registry, { fileView: async (id) => initialView(id, await options.runtimes.readTranscript(id).catch(() => [])), ...(clock ? { clock } : {}), ...(checkpointEvery ? { checkpointEvery } : {}), ...(onMustStop ? { onMustStop } : {}) })
  // As open-host.ts: a node that does not join leaves nothing open.
  await node.start().catch(async (error: unknown) => {
    await registry.shutdown()
    throw error
  })
  const started = node
  const app: FastifyInstance = await buildApp({ registry, cluster: clusterHttp(started, nodeUrl === undefined ? {} : { url: nodeUrl }), clusterMetrics: clusterMetrics(started) })
  const url = await app.listen({ port: 0, host: '127.0.0.1' })
  return {
    url,
    node: started,
    registry,
    async close() {
      await registry.shutdown()
      await started.stop()
      await app.close()
    },
  }
}

/**
 * For a describe block: nodes started on one temp data dir (`node`), and the tabs a test opens
 * (`tabs`), all closed — the data dir removed — after each test.
 */
export function inProcessNodes(prefix: string) {
  let dataDir: string | undefined
  const nodes: InProcessNode[] = []
  const tabs: SseClient[] = []
  afterEach(async () => {
    for (const tab of tabs.splice(0)) tab.close()
    for (const node of nodes.splice(0).reverse()) await node.close()
    if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true })
    dataDir = undefined
  })
  return {
    tabs,
    async node(cluster: MemoryCluster, name: string, extra: Parameters<typeof startNode>[3] = {}): Promise<InProcessNode> {
      dataDir ??= await mkdtemp(join(tmpdir(), `threadhost-${prefix}-`))
      const started = await startNode(cluster, name, dataDir, extra)
      nodes.push(started)
      return started
    },
  }
}

/** Whether an append carries a prompt's `accepted` record (alone or in a batch): where a test's seam refuses one. */
export const carriesAccepted = (record: ThreadRecord): boolean =>
  record.kind === 'batch' ? record.records.some(carriesAccepted) : record.kind === 'prompt' && record.op === 'accepted'

/**
 * A thread made through `via` and its first run of `message` there, waited for to its end: the tab that
 * followed it (in `tabs`, closed after the test) and the prompt's messageId.
 */
export async function threadRanOnce(via: { url: string }, id: string, message: string, tabs: SseClient[]): Promise<{ tab: SseClient; prompt: string }> {
  expect((await api(via.url, 'POST', '/api/threads', { id })).status).toBe(201)
  const tab = await SseClient.open(`${via.url}/api/threads/${id}/follow`)
  tabs.push(tab)
  expect((await api(via.url, 'POST', `/api/threads/${id}/prompt`, { message })).status).toBe(202)
  const prompt = (await tab.waitFor(is('user-message'))).data.messageId as string
  await tab.waitFor(is('settled', { run: 1 }))
  return { tab, prompt }
}

/** An engine seam: the thread's `deleted` record is refused once — another node appended first, having done `meanwhile` in the engine. */
export function fencedAtDeleted(meanwhile: (engine: ClusterEngine, threadId: string) => Promise<unknown>): (engine: ClusterEngine) => ClusterEngine {
  let refused = false
  return (engine) => ({
    ...engine,
    logs: {
      ...engine.logs,
      append: async (threadId, record, expected, id) => {
        if (record.kind !== 'deleted' || refused) return engine.logs.append(threadId, record, expected, id)
        refused = true
        await meanwhile(engine, threadId)
        throw new Fenced(threadId, 'another node appended first')
      },
    },
  })
}

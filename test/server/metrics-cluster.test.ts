/**
 * GET /metrics on a cluster node: every figure names the node, and the node's cluster figures move
 * with what it does. Two nodes in this process on the in-process engine (memory.ts), each its own
 * registry and app over one shared data dir, wired as serve.ts wires a `--cluster` node.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ClusterNode, clusterStore } from '../../src/host/cluster/cluster-node.js'
import { MemoryCluster } from '../../src/host/cluster/memory.js'
import { lostCeiling } from '../../src/host/store/journal.js'
import { SqliteThreadStore } from '../../src/host/store/sqlite.js'
import { ThreadRegistry } from '../../src/host/thread-registry.js'
import { buildApp } from '../../src/server/app.js'
import { clusterHttp } from '../../src/server/cluster-http.js'
import { clusterMetrics, countedEngine } from '../../src/server/cluster-metrics.js'
import { initialView } from '../../src/shared/projection.js'
import { api, is, piHost, SseClient } from './harness.js'

interface InProcessNode {
  url: string
  node: ClusterNode
  close(): Promise<void>
}

async function startNode(cluster: MemoryCluster, name: string, dataDir: string): Promise<InProcessNode> {
  const options = await piHost(dataDir, { demoDelayMs: 2 })
  const { engine } = countedEngine(cluster.engine(name))
  let node: ClusterNode | undefined
  const own = SqliteThreadStore.open(join(dataDir, 'nodes', name), { floorSeq: () => lostCeiling() })
  const registry = await ThreadRegistry.open({ ...options, store: clusterStore(own.store, () => node) })
  node = new ClusterNode(engine, registry, { fileView: async (id) => initialView(id, await options.runtimes.readTranscript(id).catch(() => [])) })
  await node.start()
  const started = node
  const app: FastifyInstance = await buildApp({ registry, cluster: clusterHttp(started), clusterMetrics: clusterMetrics(started) })
  const url = await app.listen({ port: 0, host: '127.0.0.1' })
  return {
    url,
    node: started,
    async close() {
      await registry.shutdown()
      await started.stop()
      await app.close()
    },
  }
}

/** The scrape's samples as `name` → [labels, value]. */
async function scrape(url: string): Promise<Array<{ name: string; labels: string; value: number }>> {
  const text = await (await fetch(`${url}/metrics`)).text()
  return text
    .split('\n')
    .map((line) => /^([a-z_]+)(?:\{([^}]*)\})? (\S+)$/.exec(line))
    .filter((m) => m !== null)
    .map((m) => ({ name: m[1], labels: m[2] ?? '', value: Number(m[3]) }))
}
const value = (samples: Awaited<ReturnType<typeof scrape>>, name: string, label = '') =>
  samples.find((s) => s.name === name && s.labels.includes(label))?.value

describe('metrics: a cluster node', () => {
  let dataDir: string
  let a: InProcessNode
  let b: InProcessNode
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'threadhost-metrics-cluster-'))
    const cluster = new MemoryCluster()
    a = await startNode(cluster, 'na', dataDir)
    b = await startNode(cluster, 'nb', dataDir)
  })
  afterAll(async () => {
    await b?.close()
    await a?.close()
    await rm(dataDir, { recursive: true, force: true })
  })

  it("a cluster node's /metrics names its node on every figure and counts the commands it forwarded to the owner and served for others", async () => {
    expect((await api(a.url, 'POST', '/api/threads', { id: 'm1' })).status).toBe(201)
    const tab = await SseClient.open(`${b.url}/api/threads/m1/follow`)
    try {
      await tab.waitFor(is('snapshot'))
      // Sent to na first: nobody owns m1, so na takes it and runs the prompt.
      expect((await api(a.url, 'POST', '/api/threads/m1/prompt', { message: 'hello' })).status).toBe(202)
      await tab.waitFor(is('settled', { run: 1 }))
      // Sent to nb: passed on to na, the owner.
      expect((await api(b.url, 'POST', '/api/threads/m1/prompt', { message: 'again' })).status).toBe(202)
      await tab.waitFor(is('settled', { run: 2 }))

      const [onA, onB] = [await scrape(a.url), await scrape(b.url)]
      for (const [samples, node] of [
        [onA, 'na'],
        [onB, 'nb'],
      ] as const) {
        expect(samples.length).toBeGreaterThan(10)
        expect(samples.filter((s) => !s.labels.includes(`node="${node}"`))).toEqual([])
      }
      expect(value(onB, 'threadhost_cluster_commands_total', 'way="forwarded"')).toBe(1)
      expect(value(onA, 'threadhost_cluster_commands_total', 'way="served"')).toBe(1)
      expect(value(onA, 'threadhost_cluster_commands_total', 'way="forwarded"')).toBe(0)
      expect(value(onA, 'threadhost_cluster_threads_owned')).toBe(1)
      expect(value(onB, 'threadhost_cluster_threads_owned')).toBe(0)
      expect(value(onA, 'threadhost_cluster_appends_total')).toBeGreaterThan(0)
      expect(value(onB, 'threadhost_cluster_appends_total')).toBe(0)
      expect(value(onA, 'threadhost_cluster_appends_refused_total')).toBe(0)
      expect(value(onB, 'threadhost_cluster_mirrors')).toBe(1)
      expect(value(onA, 'threadhost_cluster_takeovers_total')).toBe(0)
    } finally {
      tab.close()
    }
  })
})

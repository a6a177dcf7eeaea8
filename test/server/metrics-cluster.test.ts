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
import { MemoryCluster } from '../../src/host/cluster/memory.js'
import { api, is, SseClient } from './harness.js'
import { startNode, type InProcessNode } from './in-process-cluster.js'

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
      // Sent to nb: passed on to na, the owner — by the bus, then straight to na's port (owner-link.ts).
      expect((await api(b.url, 'POST', '/api/threads/m1/prompt', { message: 'again' })).status).toBe(202)
      await tab.waitFor(is('settled', { run: 2 }))
      expect((await api(b.url, 'POST', '/api/threads/m1/prompt', { message: 'and again' })).status).toBe(202)
      await tab.waitFor(is('settled', { run: 3 }))

      const [onA, onB] = [await scrape(a.url), await scrape(b.url)]
      for (const [samples, node] of [
        [onA, 'na'],
        [onB, 'nb'],
      ] as const) {
        expect(samples.length).toBeGreaterThan(10)
        expect(samples.filter((s) => !s.labels.includes(`node="${node}"`))).toEqual([])
      }
      expect(value(onB, 'threadhost_cluster_commands_total', 'way="forwarded"')).toBe(2)
      expect(value(onA, 'threadhost_cluster_commands_total', 'way="served"')).toBe(2)
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

/**
 * A graceful stop of a cluster node (SIGTERM, a deploy; docs/flows/cluster.md, failure matrix): the
 * node drains — a new prompt is refused `503` with `Retry-After`, the run in flight goes on and
 * settles (its queued follow-up too), nothing is aborted — then gives its threads back (no owner
 * record left) and exits 0; another node serves the thread, and the tabs that followed on the
 * stopping node resume elsewhere with exactly the frames after their last. On a real
 * `nats-server -js`, 3 nodes; skipped, saying why, where nats-server is not installed.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { natsMissing, startNats, type NatsServer } from '../support/nats-server.js'
import { spawnedServers } from '../support/spawn-server.js'
import { api, Follower, nodePid, settledRun, startCluster as startClusterOf, type Frame } from './harness.js'

/** A command answered 503 (the owner is draining, or gone and not yet replaced) is sent again, as a client does. */
async function untilServed(send: () => ReturnType<typeof api>): ReturnType<typeof api> {
  for (let attempt = 0; ; attempt++) {
    const answer = await send()
    if (answer.status !== 503 || attempt >= 80) return answer
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
}

/** A figure of a node's /metrics (summed over its labels). */
async function metric(base: string, name: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text()
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0)
}

/** Every seq once, in order, with no gap from the first frame on; and the one snapshot it started with. */
function exact(follower: Follower): void {
  expect(follower.snapshots).toHaveLength(1)
  const ids = follower.frames.map((f) => f.id)
  expect(ids[0]).toBe(follower.snapshots[0].id + 1)
  expect(ids).toEqual(ids.map((_, i) => ids[0] + i))
}

describe.skipIf(natsMissing !== undefined)(`a graceful stop of a node${natsMissing ? ` (${natsMissing})` : ''}`, () => {
  const servers = spawnedServers('graceful-stop')
  // One engine per test: a node left over from the test before must not be taken over in this one's counts.
  let nats: NatsServer
  beforeEach(async () => {
    nats = await startNats()
  })
  afterEach(() => nats?.stop())

  it('an owner sent SIGTERM mid-run drains: a new prompt is refused 503 with Retry-After, the run and its queued follow-up settle, nothing is aborted; then its thread is released, served by another node, and its tabs resume elsewhere exactly', async () => {
    const cluster = await startClusterOf(servers, nats, ['s1', 's2', 's3'])
    const [a] = cluster.urls()
    expect((await api(a, 'POST', '/api/threads', { id: 'deploy' })).status).toBe(201)
    // One tab on the node that will own the thread (the one the prompt goes through), one on another.
    const onOwner = new Follower(cluster.urls, 'deploy', 0)
    const elsewhere = new Follower(cluster.urls, 'deploy', 1)
    await expect.poll(() => onOwner.snapshots.length + elsewhere.snapshots.length, { timeout: 10_000 }).toBe(2)

    // About 1.2 s of streaming (60 words, 20 ms each), and a follow-up queued into the same run.
    expect((await api(a, 'POST', '/api/threads/deploy/prompt', { message: 'slow 60' })).status).toBe(202)
    expect((await api(a, 'GET', '/api/threads/deploy')).body?.node).toBe('s1')
    await expect.poll(() => elsewhere.has((f) => f.event === 'assistant-delta'), { timeout: 10_000 }).toBe(true)
    const queued = await api(a, 'POST', '/api/threads/deploy/prompt', { message: 'queued before the stop', deliverAs: 'followUp' })
    expect(queued).toMatchObject({ status: 202, body: { run: 1, queued: true } })

    const owner = cluster.nodes.get('s1')!
    process.kill(nodePid(owner.server), 'SIGTERM')
    cluster.nodes.delete('s1')
    const [b, c] = cluster.urls()
    // Draining: a new prompt, sent straight to it or through another node, is refused and may be retried.
    const refused = await fetch(`${b}/api/threads/deploy/prompt`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message: 'during the drain' }) })
    expect(refused.status).toBe(503)
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/)
    await refused.text()

    expect(await owner.server.exit).toBe(0)
    // Both tabs saw the run end on its own, the follow-up run in it, and no abort.
    for (const tab of [onOwner, elsewhere]) {
      await expect.poll(() => tab.has(settledRun(1, false)), { timeout: 15_000 }).toBe(true)
      expect(tab.has((f) => f.event === 'settled' && f.data.aborted === true)).toBe(false)
      expect(tab.has((f) => f.event === 'prompt-rejected')).toBe(false)
      expect(tab.frames.filter((f) => f.event === 'user-message').map((f) => f.data.text)).toEqual(['slow 60', 'queued before the stop'])
    }

    // Released, not taken over: the next prompt, through any node, runs there at once.
    const next = await untilServed(() => api(c, 'POST', '/api/threads/deploy/prompt', { message: 'after the deploy' }))
    expect(next).toMatchObject({ status: 202, body: { run: 2 } })
    const newOwner = (await api(b, 'GET', '/api/threads/deploy')).body?.node
    expect(['s2', 's3']).toContain(newOwner)
    // Released, so taken anew (no takeover of a dead node's record) by whichever node got the prompt.
    for (const base of [b, c]) expect(await metric(base, 'threadhost_cluster_takeovers_total')).toBe(0)
    for (const tab of [onOwner, elsewhere]) await expect.poll(() => tab.has(settledRun(2, false)), { timeout: 15_000 }).toBe(true)

    // The tab on the stopped node moved on with its last seq: no frame lost or doubled, no new snapshot;
    // both tabs hold the same bytes for every seq.
    for (const tab of [onOwner, elsewhere]) exact(tab)
    const bytes = (tab: Follower) => new Map(tab.frames.map((f: Frame) => [f.id, f.bytes]))
    expect(bytes(onOwner)).toEqual(bytes(elsewhere))
    onOwner.close()
    elsewhere.close()
  })

  it('a run still going when the drain ends is stopped by the stopping node: settled aborted and its queued prompt handed back, each exactly once on every tab; the thread is released and the next prompt runs on another node', async () => {
    const cluster = await startClusterOf(servers, nats, ['l1', 'l2', 'l3'])
    const [a] = cluster.urls()
    expect((await api(a, 'POST', '/api/threads', { id: 'long' })).status).toBe(201)
    const tabs = [new Follower(cluster.urls, 'long', 0), new Follower(cluster.urls, 'long', 1)]
    await expect.poll(() => tabs.reduce((n, tab) => n + tab.snapshots.length, 0), { timeout: 10_000 }).toBe(2)
    // 1000 words, 20 ms each: far longer than the drain gives it.
    expect((await api(a, 'POST', '/api/threads/long/prompt', { message: 'slow 1000' })).status).toBe(202)
    await expect.poll(() => tabs[1].has((f) => f.event === 'assistant-delta'), { timeout: 10_000 }).toBe(true)
    const queued = await api(a, 'POST', '/api/threads/long/prompt', { message: 'queued behind it', deliverAs: 'followUp' })
    expect(queued).toMatchObject({ status: 202, body: { queued: true } })

    const owner = cluster.nodes.get('l1')!
    process.kill(nodePid(owner.server), 'SIGTERM')
    cluster.nodes.delete('l1')
    expect(await owner.server.exit).toBe(0)
    const [b, c] = cluster.urls()
    const next = await untilServed(() => api(b, 'POST', '/api/threads/long/prompt', { message: 'after the deploy' }))
    expect(next).toMatchObject({ status: 202, body: { run: 2 } })
    for (const tab of tabs) {
      await expect.poll(() => tab.has(settledRun(2, false)), { timeout: 15_000 }).toBe(true)
      expect(tab.frames.filter(settledRun(1, true))).toHaveLength(1)
      expect(tab.frames.filter((f) => f.event === 'prompt-rejected').map((f) => [f.data.messageId, f.data.text])).toEqual([[queued.body?.messageId, 'queued behind it']])
      exact(tab)
    }
    for (const base of [b, c]) expect(await metric(base, 'threadhost_cluster_takeovers_total')).toBe(0)
    for (const tab of tabs) tab.close()
  })
})

/**
 * threadhost as a cluster of processes on a real `nats-server -js` (docs/flows/cluster.md): three
 * nodes on loopback sharing one data dir, each in its own PID namespace where the test runs as root
 * (`unshare --pid --fork --kill-child`), so a node killed with -9 takes its tool processes with it.
 * Skipped, saying why, where nats-server is not installed.
 */
import { request as httpRequest } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { natsMissing, startNats, type NatsServer } from '../support/nats-server.js'
import { spawnedServers } from '../support/spawn-server.js'
import { api, Follower, settledRun, startCluster as startClusterOf } from './harness.js'

describe.skipIf(natsMissing !== undefined)(`a cluster of threadhost nodes on NATS JetStream${natsMissing ? ` (${natsMissing})` : ''}`, () => {
  const servers = spawnedServers('cluster')
  const startCluster = (names: string[]) => startClusterOf(servers, nats, names)
  let nats: NatsServer
  beforeAll(async () => {
    nats = await startNats()
  })
  afterAll(() => nats?.stop())

  it('any node answers for any thread: commands reach the owner, every node sends the same bytes for each seq, a search through any node finds what was said, and a tab resumes on another node', async () => {
    const { nodes, urls } = await startCluster(['n1', 'n2', 'n3'])
    const [a, b, c] = urls()
    await expect.poll(async () => (await api(a, 'GET', '/api/health')).body?.cluster, { timeout: 10_000 }).toEqual({ mode: 'nats', nodes: ['n1', 'n2', 'n3'] })
    expect((await api(b, 'GET', '/api/health')).body?.node).toBe('n2')

    expect((await api(a, 'POST', '/api/threads', { id: 'shared' })).status).toBe(201)
    await expect.poll(async () => (await api(c, 'GET', '/api/threads')).body?.threads as unknown[], { timeout: 10_000 }).toHaveLength(1)

    const followers = [new Follower(urls, 'shared', 0), new Follower(urls, 'shared', 1), new Follower(urls, 'shared', 2)]
    await expect.poll(() => followers.every((f) => f.snapshots.length > 0), { timeout: 10_000 }).toBe(true)

    // Sent to n2; whoever owns the thread runs it, once.
    const first = await api(b, 'POST', '/api/threads/shared/prompt', { message: 'hello' }, { 'idempotency-key': 'k-hello' })
    expect(first.status).toBe(202)
    const again = await api(c, 'POST', '/api/threads/shared/prompt', { message: 'hello' }, { 'idempotency-key': 'k-hello' })
    expect(again).toEqual(first)
    await expect.poll(() => followers.every((f) => f.has(settledRun(1, false))), { timeout: 15_000 }).toBe(true)

    // The same seq is the same bytes on every node.
    const bySeq = (f: Follower) => new Map(f.frames.map((x) => [x.id, x.bytes]))
    const [f1, f2, f3] = followers.map(bySeq)
    expect(f1.size).toBeGreaterThan(3)
    expect([...f2]).toEqual([...f1])
    expect([...f3]).toEqual([...f1])
    expect(followers.every((f) => f.frames.filter((x) => x.event === 'user-message').length === 1)).toBe(true)

    const owner = (await api(c, 'GET', '/api/threads/shared')).body?.node as string
    expect(['n1', 'n2', 'n3']).toContain(owner)
    // What was said is found through every node, not only through the one that ran it.
    for (const url of [a, b, c]) await expect.poll(async () => ((await api(url, 'GET', '/api/search?q=hello')).body?.results as Array<{ threadId: string }>)?.map((hit) => hit.threadId), { timeout: 10_000 }).toEqual(['shared'])

    // Resume on another node from the middle: exactly the frames after it.
    const ids = [...f1.keys()]
    const middle = ids[Math.floor(ids.length / 2)]
    const resumed = await new Promise<string>((resolve, reject) => {
      const req = httpRequest(`${c}/api/threads/shared/follow`, { headers: { accept: 'text/event-stream', 'last-event-id': String(middle) } })
      req.on('response', (response) => {
        let text = ''
        response.setEncoding('utf8')
        response.on('data', (chunk: string) => {
          text += chunk
          if (text.includes(`id: ${ids.at(-1)}\n`) && text.endsWith('\n\n')) {
            response.destroy()
            resolve(text)
          }
        })
      })
      req.on('error', reject)
      req.end()
    })
    const expected = ids.filter((id) => id > middle).map((id) => f1.get(id)).join('')
    expect(resumed.slice(resumed.indexOf('id: '))).toBe(expected)
    for (const f of followers) f.close()
    void nodes
  })

  it('an owner killed with -9 mid-run: a survivor takes its thread over within 5 s, the run ends aborted and the queued prompt comes back owner-lost, each once; seq never reused; a new prompt runs', async () => {
    const cluster = await startCluster(['k1', 'k2', 'k3'])
    const [a] = cluster.urls()
    expect((await api(a, 'POST', '/api/threads', { id: 'victim' })).status).toBe(201)
    expect((await api(a, 'POST', '/api/threads/victim/prompt', { message: 'slow 400' })).status).toBe(202)
    const ownerName = (await api(a, 'GET', '/api/threads/victim')).body?.node as string
    const owner = cluster.nodes.get(ownerName)!
    const queued = await api(a, 'POST', '/api/threads/victim/prompt', { message: 'after the slow one', deliverAs: 'followUp' })
    expect(queued.status).toBe(202)
    const survivors = [...cluster.nodes].filter(([name]) => name !== ownerName).map(([, n]) => n.url)
    const followers = survivors.map((_, i) => new Follower(() => survivors, 'victim', i))
    await expect.poll(() => followers.every((f) => f.has((x) => x.event === 'assistant-delta')), { timeout: 10_000 }).toBe(true)

    const killedAt = Date.now()
    owner.server.child.kill('SIGKILL')
    await owner.server.exit
    cluster.nodes.delete(ownerName)
    await expect.poll(() => followers.every((f) => f.has(settledRun(1, true))), { timeout: 10_000, interval: 50 }).toBe(true)
    const takeoverMs = Date.now() - killedAt
    console.log(`[cluster] takeover: kill -9 of the owner → settled {aborted} at the survivors' followers in ${takeoverMs} ms`)
    expect(takeoverMs).toBeLessThanOrEqual(5000)

    const messageId = queued.body?.messageId
    await expect.poll(() => followers.every((f) => f.has((x) => x.event === 'prompt-rejected' && x.data.messageId === messageId)), { timeout: 5000 }).toBe(true)
    for (const f of followers) {
      expect(f.frames.filter((x) => x.event === 'prompt-rejected' && x.data.messageId === messageId && x.data.reason === 'owner-lost')).toHaveLength(1)
      expect(f.frames.filter(settledRun(1, true))).toHaveLength(1)
      const ids = f.frames.map((x) => x.id)
      expect(ids).toEqual([...ids].sort((x, y) => x - y))
      expect(new Set(ids).size).toBe(ids.length)
    }

    // A new prompt through a survivor runs, numbered on from the log.
    expect((await api(survivors[0], 'POST', '/api/threads/victim/prompt', { message: 'hello again' })).status).toBe(202)
    await expect.poll(() => followers.every((f) => f.has(settledRun(2, false))), { timeout: 15_000 }).toBe(true)
    expect((await api(survivors[1], 'GET', '/api/threads/victim')).body?.node).not.toBe(ownerName)
    for (const f of followers) f.close()
  })
})

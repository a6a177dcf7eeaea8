/**
 * `Idempotency-Key`s and routed commands across the nodes of a cluster (docs/flows/cluster.md), on a
 * real `nats-server -js`: a key is claimed in the engine, so the same key sent to two nodes — or to a
 * survivor after its owner died — gets the same answer and the request runs once. Skipped, saying
 * why, where nats-server is not installed.
 */
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connect } from '@nats-io/transport-node'
import { Kvm } from '@nats-io/kv'
import { tokenOf } from '../../src/host/cluster/port.js'
import { natsMissing, startNats, type NatsServer } from '../support/nats-server.js'
import { spawnedServers } from '../support/spawn-server.js'
import { api, Follower, settledRun, startCluster as startClusterOf } from './harness.js'

/** A command answered 503 (its owner died and the lease has not lapsed yet) is sent again, as a client does. */
async function untilServed(send: () => ReturnType<typeof api>): ReturnType<typeof api> {
  for (let attempt = 0; ; attempt++) {
    const answer = await send()
    if (answer.status !== 503 || attempt >= 40) return answer
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
}

/**
 * The window a kill -9 can hit between a keyed prompt's admission and its answer's write to the engine's
 * keys, made deterministic: the key's record in `th_idem` is put back to the bare claim (no answer).
 */
async function unanswer(natsUrl: string, key: string): Promise<void> {
  const nc = await connect({ servers: natsUrl })
  try {
    const kv = await new Kvm(nc).open('th_idem')
    const entry = await kv.get(tokenOf(key))
    if (!entry || entry.operation !== 'PUT') throw new Error(`no record of key ${key}`)
    const { answer, ...claim } = JSON.parse(entry.string()) as { answer?: unknown }
    if (!answer) throw new Error(`key ${key} had no answer yet`)
    await kv.put(tokenOf(key), JSON.stringify(claim))
  } finally {
    await nc.close()
  }
}

describe.skipIf(natsMissing !== undefined)(`keys and routed commands across nodes${natsMissing ? ` (${natsMissing})` : ''}`, () => {
  const servers = spawnedServers('keys')
  const startCluster = (names: string[], extra: string[] = []) => startClusterOf(servers, nats, names, extra)
  let nats: NatsServer
  beforeAll(async () => {
    nats = await startNats()
  })
  afterAll(() => nats?.stop())

  it('the same create Idempotency-Key sent to two nodes at once makes one thread, and both get the same answer', async () => {
    const { urls } = await startCluster(['c1', 'c2'])
    const [a, b] = urls()
    const key = { 'idempotency-key': 'create-once' }
    const [x, y] = await Promise.all([api(a, 'POST', '/api/threads', { title: 'once' }, key), api(b, 'POST', '/api/threads', { title: 'once' }, key)])
    expect(x.status).toBe(201)
    expect(y).toEqual(x)
    const threadId = x.body?.threadId as string
    // Each node lists what it created itself at once: a second thread would be in one of the lists.
    for (const base of [a, b]) {
      await expect.poll(async () => ((await api(base, 'GET', '/api/threads')).body?.threads as { threadId: string }[]).map((t) => t.threadId), { timeout: 10_000 }).toEqual([threadId])
    }
    // The same key with another request is refused on either node.
    expect((await api(b, 'POST', '/api/threads', { title: 'another' }, key)).status).toBe(422)
  })

  it('a keyed prompt answered, then its owner killed -9: the same key sent to a survivor gets the same answer and the prompt ran once', async () => {
    const cluster = await startCluster(['p1', 'p2', 'p3'])
    const [a] = cluster.urls()
    expect((await api(a, 'POST', '/api/threads', { id: 'keyed' })).status).toBe(201)
    // A tab that moves on to the next node when its node dies: it sees every frame from the first.
    const follower = new Follower(cluster.urls, 'keyed', 0)
    await expect.poll(() => follower.snapshots.length, { timeout: 10_000 }).toBe(1)
    const key = { 'idempotency-key': 'prompt-once' }
    const first = await api(a, 'POST', '/api/threads/keyed/prompt', { message: 'run me once' }, key)
    expect(first.status).toBe(202)
    const ownerName = (await api(a, 'GET', '/api/threads/keyed')).body?.node as string
    const survivors = [...cluster.nodes].filter(([name]) => name !== ownerName).map(([, n]) => n.url)
    await expect.poll(() => follower.has(settledRun(1, false)), { timeout: 15_000 }).toBe(true)

    const owner = cluster.nodes.get(ownerName)!
    owner.server.child.kill('SIGKILL')
    await owner.server.exit
    cluster.nodes.delete(ownerName)

    const again = await untilServed(() => api(survivors[1], 'POST', '/api/threads/keyed/prompt', { message: 'run me once' }, key))
    expect(again).toEqual(first)
    // A prompt after it: had the repeat run the first again, its run would come before this one's.
    expect((await untilServed(() => api(survivors[0], 'POST', '/api/threads/keyed/prompt', { message: 'and then me' }))).status).toBe(202)
    await expect.poll(() => follower.has((f) => f.event === 'settled' && f.data.aborted === false && f.data.run !== 1), { timeout: 15_000 }).toBe(true)
    const texts = follower.frames.filter((f) => f.event === 'user-message').map((f) => JSON.stringify(f.data))
    expect(texts.filter((t) => t.includes('run me once'))).toHaveLength(1)
    expect(texts.filter((t) => t.includes('and then me'))).toHaveLength(1)
    follower.close()
  })

  it('a keyed prompt whose answer never reached the engine before its owner was killed -9: the same key through a survivor gets the same answer from the thread log, and the prompt ran once', async () => {
    const cluster = await startCluster(['w1', 'w2', 'w3'])
    const [a] = cluster.urls()
    expect((await api(a, 'POST', '/api/threads', { id: 'window' })).status).toBe(201)
    const follower = new Follower(cluster.urls, 'window', 0)
    await expect.poll(() => follower.snapshots.length, { timeout: 10_000 }).toBe(1)
    const key = { 'idempotency-key': 'window-once' }
    const first = await api(a, 'POST', '/api/threads/window/prompt', { message: 'run me once' }, key)
    expect(first.status).toBe(202)
    await expect.poll(() => follower.has(settledRun(1, false)), { timeout: 15_000 }).toBe(true)
    await unanswer(nats.url, 'window-once')

    const ownerName = (await api(a, 'GET', '/api/threads/window')).body?.node as string
    const owner = cluster.nodes.get(ownerName)!
    owner.server.child.kill('SIGKILL')
    await owner.server.exit
    cluster.nodes.delete(ownerName)
    const survivors = cluster.urls()

    const again = await untilServed(() => api(survivors[0], 'POST', '/api/threads/window/prompt', { message: 'run me once' }, key))
    expect(again).toEqual(first)
    expect((await untilServed(() => api(survivors[1], 'POST', '/api/threads/window/prompt', { message: 'and then me' }))).body).toMatchObject({ run: 2 })
    await expect.poll(() => follower.has(settledRun(2, false)), { timeout: 15_000 }).toBe(true)
    const texts = follower.frames.filter((f) => f.event === 'user-message').map((f) => f.data.text)
    expect(texts).toEqual(['run me once', 'and then me'])
    follower.close()
  })

  it('a revert sent to a node that does not own the thread runs on the owner: the file the run made is gone, every follower hears it once, and the owner stays', async () => {
    const policy = join(await servers.tempDataDir(), 'policy.json')
    writeFileSync(policy, JSON.stringify({ tools: { write: 'allow' } }))
    const cluster = await startCluster(['r1', 'r2', 'r3'], ['--tools-policy', policy])
    const [a] = cluster.urls()
    expect((await api(a, 'POST', '/api/threads', { id: 'changes' })).status).toBe(201)
    const follower = new Follower(cluster.urls, 'changes', 1)
    await expect.poll(() => follower.snapshots.length, { timeout: 10_000 }).toBe(1)
    const write = `call write ${JSON.stringify({ path: 'made.txt', content: 'by run 1\n' })}`
    expect((await api(a, 'POST', '/api/threads/changes/prompt', { message: write })).status).toBe(202)
    await expect.poll(() => follower.has((f) => f.event === 'run-changes' && f.data.run === 1), { timeout: 15_000 }).toBe(true)
    await expect.poll(() => follower.has(settledRun(1, false)), { timeout: 15_000 }).toBe(true)
    expect(existsSync(join(cluster.workspace, 'made.txt'))).toBe(true)

    const ownerName = (await api(a, 'GET', '/api/threads/changes')).body?.node as string
    const other = [...cluster.nodes].find(([name]) => name !== ownerName)![1].url
    const reverted = await api(other, 'POST', '/api/threads/changes/revert', { toRun: 1 })
    expect(reverted).toMatchObject({ status: 200, body: { action: 'revert', runs: [1], files: ['made.txt'] } })
    expect(existsSync(join(cluster.workspace, 'made.txt'))).toBe(false)
    await expect.poll(() => follower.frames.filter((f) => f.event === 'workspace-restored').length, { timeout: 10_000 }).toBe(1)
    expect((await api(other, 'GET', '/api/threads/changes')).body?.node).toBe(ownerName)
    follower.close()
  })
})

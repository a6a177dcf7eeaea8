/**
 * A command through a node that does not own its thread goes by the command bus once; the answer
 * names the owner's HTTP address, and the next goes straight there (server/owner-link.ts). What a
 * client gets is the same either way. The address is a hint: an owner that stopped is passed over
 * for the bus, one that took a command and never answered is a 503 and is not tried again, and a node
 * that no longer owns the thread answers 421 with nothing run, so the command goes by the bus.
 */
import { createServer, type IncomingMessage, type RequestListener } from 'node:http'
import { connect, type AddressInfo, type Socket } from 'node:net'
import { describe, expect, it } from 'vitest'
import { MemoryCluster } from '../../src/host/cluster/memory.js'
import type { ClusterEngine } from '../../src/host/cluster/port.js'
import { clusterMetrics } from '../../src/server/cluster-metrics.js'
import { api, is, SseClient } from './harness.js'
import { inProcessNodes, type InProcessNode } from './in-process-cluster.js'

/** A node's engine, counting the commands it sends by the bus (and keeping what each answer said of the node that ran it). */
function countingBus(sent: string[], ranOn: string[] = []) {
  return (engine: ClusterEngine): ClusterEngine => ({
    ...engine,
    commands: {
      ...engine.commands,
      send: async (threadId, request, timeoutMs) => {
        sent.push(request.url)
        const reply = await engine.commands.send(threadId, request, timeoutMs)
        if (typeof reply === 'object' && reply.headers['x-threadhost-ran-on']) ranOn.push(reply.headers['x-threadhost-ran-on'])
        return reply
      },
    },
  })
}

const served = (node: InProcessNode) => clusterMetrics(node.node)!.counts.served

/** A plain HTTP server standing at an owner's address in its place (frozen, or not threadhost). */
async function standIn(handler: RequestListener): Promise<{ url: string; close(): void }> {
  const server = createServer(handler)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => void server.close() }
}

/**
 * A prompt sent straight to the node an answer named (`ranOn`, `<pass> <address>`), as a node sends
 * it, over a socket the test holds: `headers` added, the body cut to `sentBytes` if given.
 */
async function straightTo(ranOn: string, threadId: string, body: string, headers: string, sentBytes = body.length): Promise<Socket> {
  const [pass, address] = ranOn.split(' ')
  const { hostname, port } = new URL(address)
  const socket = connect(Number(port), hostname)
  await new Promise((resolve) => socket.once('connect', resolve))
  socket.write(
    `POST /api/threads/${threadId}/prompt HTTP/1.1\r\nhost: ${hostname}:${port}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n` +
      `x-threadhost-passed-on: ${pass}\r\n${headers}\r\n${body.slice(0, sentBytes)}`,
  )
  return socket
}

describe('a command passed on straight to its owner', () => {
  const { node, tabs } = inProcessNodes('direct')

  /** Thread `id` created and run once on `owner`, followed there. */
  async function ownedBy(owner: InProcessNode, id: string): Promise<SseClient> {
    expect((await api(owner.url, 'POST', '/api/threads', { id })).status).toBe(201)
    const tab = await SseClient.open(`${owner.url}/api/threads/${id}/follow`)
    tabs.push(tab)
    expect(await api(owner.url, 'POST', `/api/threads/${id}/prompt`, { message: 'take it' })).toMatchObject({ status: 202, body: { run: 1 } })
    await tab.waitFor(is('settled', { run: 1 }))
    return tab
  }

  /** Thread `id` owned by a, whose answers name `nodeUrl` as its address, and b, counting what it sends by the bus. */
  async function ownerNamed(nodeUrl: string, id: string) {
    const cluster = new MemoryCluster()
    const sent: string[] = []
    const a = await node(cluster, 'na', { nodeUrl })
    const b = await node(cluster, 'nb', { engine: countingBus(sent) })
    return { sent, b, tab: await ownedBy(a, id) }
  }

  it('after one answer by the bus, goes straight to the owner: the same answers, refusals included, and the owner is never named to the client', async () => {
    const cluster = new MemoryCluster()
    const sent: string[] = []
    const a = await node(cluster, 'na')
    const b = await node(cluster, 'nb', { engine: countingBus(sent) })
    const tab = await ownedBy(a, 'd1')

    for (const run of [2, 3, 4]) {
      const answer = await api(b.url, 'POST', '/api/threads/d1/prompt', { message: `through b ${run}: ünïcödé ✓ 日本` })
      expect(answer).toMatchObject({ status: 202, body: { run, queued: false } })
      expect(answer.headers.get('x-threadhost-ran-on')).toBeNull()
      expect(answer.headers.get('content-security-policy')).toContain("frame-ancestors 'none'")
      await tab.waitFor(is('settled', { run }))
    }
    expect(sent).toEqual(['/api/threads/d1/prompt'])
    expect(served(a)).toBe(3)
    expect(tab.frames.filter((f) => f.event === 'user-message').map((f) => f.data.text)).toEqual(['take it', ...[2, 3, 4].map((run) => `through b ${run}: ünïcödé ✓ 日本`)])
    // A refusal only the owner can give, straight from it: as the owner gives it.
    const refused = await api(b.url, 'POST', '/api/threads/d1/dialog', { id: 'q-none', value: true })
    expect(refused.status).toBeGreaterThanOrEqual(400)
    expect({ status: refused.status, body: refused.body }).toEqual(await api(a.url, 'POST', '/api/threads/d1/dialog', { id: 'q-none', value: true }).then((r) => ({ status: r.status, body: r.body })))
    expect(sent).toHaveLength(1)
    expect(b.node.owns('d1')).toBe(false)
  })

  it('whose owner stopped: the next command goes by the bus, finds no owner, and runs on the node it reached', async () => {
    const cluster = new MemoryCluster()
    const sent: string[] = []
    const a = await node(cluster, 'na')
    const b = await node(cluster, 'nb', { engine: countingBus(sent) })
    await ownedBy(a, 'd2')
    expect((await api(b.url, 'POST', '/api/threads/d2/prompt', { message: 'learn a' })).status).toBe(202)
    await a.close()

    const tab = await SseClient.open(`${b.url}/api/threads/d2/follow`)
    tabs.push(tab)
    const answer = await api(b.url, 'POST', '/api/threads/d2/prompt', { message: 'after a stopped' })
    expect(answer).toMatchObject({ status: 202, body: { run: 3 } })
    expect(sent).toHaveLength(2)
    expect(b.node.owns('d2')).toBe(true)
    await tab.waitFor(is('settled', { run: 3 }))
  })

  it('whose owner took it and never answered: 503 with Retry-After, sent once, and the next command goes by the bus', async () => {
    // An owner whose port takes requests and never answers them (frozen, say).
    const taken: IncomingMessage[] = []
    const frozen = await standIn((request) => void taken.push(request))
    try {
      const { sent, b, tab } = await ownerNamed(frozen.url, 'd3')
      expect((await api(b.url, 'POST', '/api/threads/d3/prompt', { message: 'learn a' })).status).toBe(202)
      await tab.waitFor(is('settled', { run: 2 }))

      const lost = await api(b.url, 'POST', '/api/threads/d3/prompt', { message: 'into the void' })
      expect({ status: lost.status, retryAfter: lost.headers.get('retry-after'), code: lost.body.code }).toEqual({ status: 503, retryAfter: '1', code: 'OWNER_UNREACHABLE' })
      expect(taken).toHaveLength(1)
      expect(sent).toHaveLength(1)

      // The bus's answer names the same address; it is not taken up again for a while.
      for (const run of [3, 4]) {
        expect(await api(b.url, 'POST', '/api/threads/d3/prompt', { message: `by the bus ${run}` })).toMatchObject({ status: 202, body: { run } })
        await tab.waitFor(is('settled', { run }))
      }
      expect(sent).toHaveLength(3)
      expect(taken).toHaveLength(1)
    } finally {
      for (const request of taken) request.socket.destroy()
      frozen.close()
    }
  }, 15_000)

  it('whose address something else answers: the command goes by the bus, and that address is not taken up again for a while', async () => {
    // Not threadhost at the owner's address (a proxy, the port reused): it answers everything 404.
    const taken: string[] = []
    const other = await standIn((request, response) => {
      taken.push(request.url ?? '')
      response.writeHead(404, { 'content-type': 'text/plain' }).end('no such page')
    })
    try {
      const { sent, b, tab } = await ownerNamed(other.url, 'd9')
      for (const run of [2, 3, 4]) {
        expect(await api(b.url, 'POST', '/api/threads/d9/prompt', { message: `run ${run}` })).toMatchObject({ status: 202, body: { run } })
        await tab.waitFor(is('settled', { run }))
      }
      expect(taken).toEqual(['/api/threads/d9/prompt'])
      expect(sent).toHaveLength(3)
    } finally {
      other.close()
    }
  })

  it('to a node that no longer owns the thread: refused there with nothing run, sent by the bus, and the answer names the owner, where the next one goes', async () => {
    const cluster = new MemoryCluster()
    const sent: string[] = []
    const a = await node(cluster, 'na', { idleMs: 300 })
    const b = await node(cluster, 'nb', { engine: countingBus(sent) })
    const c = await node(cluster, 'nc')
    const tab = await ownedBy(a, 'd4')
    expect((await api(b.url, 'POST', '/api/threads/d4/prompt', { message: 'learn a' })).status).toBe(202)
    await tab.waitFor(is('settled', { run: 2 }))
    expect((await api(b.url, 'POST', '/api/threads/d4/prompt', { message: 'straight to a' })).status).toBe(202)
    await tab.waitFor(is('settled', { run: 3 }))
    expect(served(a)).toBe(2)
    // a's runtime goes cold and, its commands over, it gives the thread back; c takes it with the next prompt.
    await expect.poll(() => cluster.owners.has('d4'), { timeout: 10_000 }).toBe(false)
    expect(await api(c.url, 'POST', '/api/threads/d4/prompt', { message: 'c takes it' })).toMatchObject({ status: 202, body: { run: 4 } })
    await tab.waitFor(is('settled', { run: 4 }))
    expect(c.node.owns('d4')).toBe(true)

    const [servedByA, sentByB] = [served(a), sent.length]
    // b still knows a: a refuses it, b sends it by the bus to c, and c's answer names c.
    expect(await api(b.url, 'POST', '/api/threads/d4/prompt', { message: 'via the bus' })).toMatchObject({ status: 202, body: { run: 5 } })
    await tab.waitFor(is('settled', { run: 5 }))
    expect(sent.length).toBe(sentByB + 1)
    expect(await api(b.url, 'POST', '/api/threads/d4/prompt', { message: 'straight to c' })).toMatchObject({ status: 202, body: { run: 6 } })
    await tab.waitFor(is('settled', { run: 6 }))
    expect(sent.length).toBe(sentByB + 1)
    expect(served(a)).toBe(servedByA)
    expect(served(c)).toBe(2)
    expect(a.node.owns('d4')).toBe(false)
    // Each prompt ran once.
    expect(tab.frames.filter((f) => f.event === 'user-message').map((f) => f.data.text)).toEqual(['take it', 'learn a', 'straight to a', 'c takes it', 'via the bus', 'straight to c'])
  })

  it('is known only by the pass nodes learn from each other: a request marked with another pass is refused with nothing run, and learns nothing', async () => {
    const cluster = new MemoryCluster()
    const a = await node(cluster, 'na')
    const b = await node(cluster, 'nb')
    const tab = await ownedBy(a, 'd5')
    const before = served(a)
    for (const via of [a, b]) {
      const forged = await api(via.url, 'POST', '/api/threads/d5/prompt', { message: 'forged' }, { 'x-threadhost-passed-on': 'guess', 'x-threadhost-fingerprint': 'f' })
      expect({ status: forged.status, code: forged.body.code }).toEqual({ status: 421, code: 'NOT_OWNER' })
      expect(forged.headers.get('x-threadhost-ran-on')).toBeNull()
    }
    expect(served(a)).toBe(before)
    expect(await api(b.url, 'POST', '/api/threads/d5/prompt', { message: 'unmarked' })).toMatchObject({ status: 202, body: { run: 2 } })
    await tab.waitFor(is('settled', { run: 2 }))
    expect(tab.frames.filter((f) => f.event === 'user-message').map((f) => f.data.text)).toEqual(['take it', 'unmarked'])
  })

  it('is counted on its owner until it is over, when its sender went after it reached its route: the thread is not given back under it', async () => {
    const cluster = new MemoryCluster()
    const ranOn: string[] = []
    let open: () => void = () => {}
    const gate = new Promise<void>((resolve) => (open = resolve))
    // The key's claim on a waits until the test opens the gate: the command is held in its write guard.
    const gated = (engine: ClusterEngine): ClusterEngine => ({
      ...engine,
      keys: { ...engine.keys, claim: async (key, ...rest) => (key === 'held' && (await gate), engine.keys.claim(key, ...rest)) },
    })
    const a = await node(cluster, 'na', { idleMs: 300, engine: gated })
    const b = await node(cluster, 'nb', { engine: countingBus([], ranOn) })
    const tab = await ownedBy(a, 'd8')
    expect((await api(b.url, 'POST', '/api/threads/d8/prompt', { message: 'learn a' })).status).toBe(202)
    await tab.waitFor(is('settled', { run: 2 }))
    const socket = await straightTo(ranOn[0], 'd8', JSON.stringify({ message: 'held' }), 'idempotency-key: held\r\n')
    await new Promise((resolve) => setTimeout(resolve, 100))
    socket.destroy()
    // Past a's idle time: the command still runs there, so the thread stays a's.
    await new Promise((resolve) => setTimeout(resolve, 1000))
    expect(cluster.owners.get('d8')?.record.name).toBe('na')
    open()
    await tab.waitFor(is('settled', { run: 3 }))
    await expect.poll(() => cluster.owners.has('d8'), { timeout: 10_000 }).toBe(false)
  })

  it('keyed, whose sender went before its body was all there: the claim made as it arrived is let go, and a retry runs it once', async () => {
    const cluster = new MemoryCluster()
    const ranOn: string[] = []
    const a = await node(cluster, 'na')
    const b = await node(cluster, 'nb', { engine: countingBus([], ranOn) })
    const tab = await ownedBy(a, 'd7')
    expect((await api(b.url, 'POST', '/api/threads/d7/prompt', { message: 'learn a' })).status).toBe(202)
    await tab.waitFor(is('settled', { run: 2 }))
    // Sent straight to a as b learned it, cut off mid-body.
    const socket = await straightTo(ranOn[0], 'd7', JSON.stringify({ message: 'cut off' }), 'idempotency-key: cut-off\r\nx-threadhost-fingerprint: f\r\n', 11)
    await expect.poll(() => cluster.keys.has('cut-off')).toBe(true)
    socket.destroy()
    await expect.poll(() => cluster.keys.has('cut-off')).toBe(false)

    const retried = await api(b.url, 'POST', '/api/threads/d7/prompt', { message: 'cut off' }, { 'idempotency-key': 'cut-off' })
    expect(retried).toMatchObject({ status: 202, body: { run: 3 } })
    await tab.waitFor(is('settled', { run: 3 }))
    expect(tab.frames.filter((f) => f.event === 'user-message' && f.data.text === 'cut off')).toHaveLength(1)
  })

  it('keyed, is claimed in the engine once and runs once; its repeat through either node gets the same answer', async () => {
    const cluster = new MemoryCluster()
    const claims: string[] = []
    const counting = (engine: ClusterEngine): ClusterEngine => ({ ...engine, keys: { ...engine.keys, claim: (key, ...rest) => (claims.push(key), engine.keys.claim(key, ...rest)) } })
    const a = await node(cluster, 'na', { engine: counting })
    const b = await node(cluster, 'nb', { engine: counting })
    const tab = await ownedBy(a, 'd6')
    expect((await api(b.url, 'POST', '/api/threads/d6/prompt', { message: 'learn a' })).status).toBe(202)
    await tab.waitFor(is('settled', { run: 2 }))
    const before = served(a)
    const key = { 'idempotency-key': 'straight-1' }
    const first = await api(b.url, 'POST', '/api/threads/d6/prompt', { message: 'once' }, key)
    expect(first).toMatchObject({ status: 202, body: { run: 3 } })
    expect(served(a)).toBe(before + 1)
    expect(claims.filter((k) => k === 'straight-1')).toHaveLength(1)
    await tab.waitFor(is('settled', { run: 3 }))
    for (const via of [b, a]) {
      const again = await api(via.url, 'POST', '/api/threads/d6/prompt', { message: 'once' }, key)
      expect({ status: again.status, body: again.body, replayed: again.headers.get('idempotent-replayed') }).toEqual({ status: 202, body: first.body, replayed: 'true' })
    }
    expect(tab.frames.filter((f) => f.event === 'user-message' && f.data.text === 'once')).toHaveLength(1)
  })
})

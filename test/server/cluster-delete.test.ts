/**
 * A thread deleted in a cluster is deleted on every node (docs/flows/cluster.md, "Deleting"): its owner
 * ends the thread's log with a `deleted` record, every node's tabs on it are closed, and once that record
 * is in, what the thread wrote before it (records and checkpoint) is removed from the engine. A thread
 * made again under the id starts empty on every node, with seqs after the deleted one's.
 */
import { describe, expect, it } from 'vitest'
import { MemoryCluster } from '../../src/host/cluster/memory.js'
import { Fenced, type ClusterEngine, type ThreadRecord } from '../../src/host/cluster/port.js'
import type { RuntimeFactory } from '../../src/runtime/port.js'
import { api, is, SseClient } from './harness.js'
import { fencedAtDeleted, inProcessNodes, threadRanOnce, type InProcessNode } from './in-process-cluster.js'

const textOf = (records: ThreadRecord[] | undefined) => JSON.stringify(records ?? [])

/** Every append the node makes, as it makes it. */
function appendsOf(appends: ThreadRecord[]) {
  return (engine: ClusterEngine): ClusterEngine => ({
    ...engine,
    logs: { ...engine.logs, append: (threadId, record, expected, id) => (appends.push(record), engine.logs.append(threadId, record, expected, id)) },
  })
}

/** Notes each thread whose files the node removes, and removes them. */
function removals(removed: string[]) {
  return (runtimes: RuntimeFactory): RuntimeFactory =>
    new Proxy(runtimes, { get: (target, property, receiver) => (property === 'remove' ? async (threadId: string) => (removed.push(threadId), target.remove(threadId)) : Reflect.get(target, property, receiver)) })
}

describe('a thread deleted on a cluster', () => {
  const { node, tabs } = inProcessNodes('delete')

  it('leaves nothing of itself in the engine, and a thread made again under its id shows nothing of it on any node', async () => {
    const cluster = new MemoryCluster()
    // A checkpoint every few records: the deleted thread has one when it goes.
    const a = await node(cluster, 'na', { checkpointEvery: 3 })
    const b = await node(cluster, 'nb', { checkpointEvery: 3 })
    expect((await api(a.url, 'POST', '/api/threads', { id: 'd1' })).status).toBe(201)
    const onA = await SseClient.open(`${a.url}/api/threads/d1/follow`)
    tabs.push(onA)
    expect((await api(a.url, 'POST', '/api/threads/d1/prompt', { message: 'secret words' })).status).toBe(202)
    await onA.waitFor(is('settled', { run: 1 }))
    const onB = await SseClient.open(`${b.url}/api/threads/d1/follow`)
    tabs.push(onB)
    expect(JSON.stringify((await onB.waitFor(is('snapshot'))).data.transcript)).toContain('secret words')
    const lastSeq = Number(onA.frames.at(-1)!.id)
    await expect.poll(() => cluster.checkpoints.get('d1')).toBeDefined()

    // Through the node that does not own it: passed on to the owner, as every command on a thread.
    expect((await api(b.url, 'DELETE', '/api/threads/d1')).status).toBe(204)
    await expect.poll(() => onA.ended && onB.ended).toBe(true)
    await expect.poll(() => textOf(cluster.logs.get('d1'))).not.toContain('secret')
    expect(cluster.logs.get('d1')).toEqual([{ kind: 'deleted', seq: expect.any(Number) }])
    // A checkpoint kept since is of the empty thread the record leaves.
    expect(textOf(cluster.logs.get('d1')) + JSON.stringify(cluster.checkpoints.get('d1') ?? {})).not.toContain('secret')

    // Made again under the id, through either node: empty everywhere, its seqs after the deleted one's.
    expect((await api(b.url, 'POST', '/api/threads', { id: 'd1' })).status).toBe(201)
    for (const url of [a.url, b.url]) {
      const tab = await SseClient.open(`${url}/api/threads/d1/follow`)
      tabs.push(tab)
      const snapshot = (await tab.waitFor(is('snapshot'))).data
      expect(snapshot.transcript).toEqual([])
      expect(snapshot.seq).toBeGreaterThanOrEqual(lastSeq)
    }
    const tab = tabs.at(-1)!
    expect(await api(b.url, 'POST', '/api/threads/d1/prompt', { message: 'fresh start' })).toMatchObject({ status: 202, body: { run: 1 } })
    await tab.waitFor(is('settled', { run: 1 }))
    expect(tab.frames.filter((f) => f.event !== 'snapshot').every((f) => Number(f.id) > lastSeq)).toBe(true)
    const again = await SseClient.open(`${a.url}/api/threads/d1/follow`)
    tabs.push(again)
    const transcript = (await again.waitFor(is('snapshot'))).data.transcript as Array<{ text?: string }>
    expect(JSON.stringify(transcript)).toContain('fresh start')
    expect(JSON.stringify(transcript)).not.toContain('secret')
  })

  it("deleted on another node than the one that ran it before: that node's search does not find its words in a thread made again under its id", async () => {
    const cluster = new MemoryCluster()
    // A thread at rest is given back at once: the next prompt through another node makes that node its owner.
    const a = await node(cluster, 'na', { idleMs: 50 })
    const b = await node(cluster, 'nb', { idleMs: 50 })
    const found = async (url: string) => ((await api(url, 'GET', '/api/search?q=secret')).body.results as Array<{ threadId: string }>).map((h) => h.threadId)
    await threadRanOnce(a, 'd7', 'secret words', tabs).then(({ tab }) => tab.close())
    expect(await found(a.url)).toEqual(['d7'])
    await expect.poll(() => a.node.owns('d7')).toBe(false)
    expect((await api(b.url, 'POST', '/api/threads/d7/prompt', { message: 'on the other node' })).status).toBe(202)
    await expect.poll(() => b.node.owns('d7')).toBe(true)
    expect((await api(b.url, 'DELETE', '/api/threads/d7')).status).toBe(204)
    await expect.poll(async () => (await api(a.url, 'GET', '/api/threads/d7')).status).toBe(404)
    expect((await api(b.url, 'POST', '/api/threads', { id: 'd7' })).status).toBe(201)
    await expect.poll(async () => (await api(a.url, 'GET', '/api/threads/d7')).status).toBe(200)
    expect(await found(a.url)).toEqual([])
  })

  it('mid-run with a prompt queued: the stopped run and the prompt handed back are written before the one deleted record, and forgotten with the rest', async () => {
    const cluster = new MemoryCluster()
    const appends: ThreadRecord[] = []
    const a = await node(cluster, 'na', { engine: appendsOf(appends) })
    expect((await api(a.url, 'POST', '/api/threads', { id: 'd2' })).status).toBe(201)
    const tab = await SseClient.open(`${a.url}/api/threads/d2/follow`)
    tabs.push(tab)
    expect((await api(a.url, 'POST', '/api/threads/d2/prompt', { message: 'slow 400' })).status).toBe(202)
    await tab.waitFor(is('assistant-delta'))
    expect(await api(a.url, 'POST', '/api/threads/d2/prompt', { message: 'queued secret', deliverAs: 'followUp' })).toMatchObject({ status: 202, body: { queued: true } })
    expect((await api(a.url, 'DELETE', '/api/threads/d2')).status).toBe(204)
    await expect.poll(() => textOf(cluster.logs.get('d2'))).not.toContain('queued secret')
    expect(cluster.logs.get('d2')).toEqual([{ kind: 'deleted', seq: expect.any(Number) }])
    // The one deleted record went in an append of its own, after the dispose's frames.
    const deleted = appends.filter((r) => r.kind === 'deleted')
    expect(deleted).toHaveLength(1)
    const before = textOf(appends.slice(0, appends.indexOf(deleted[0])))
    expect(before).toContain('event: prompt-rejected')
    expect(before).toContain('event: settled')
  })

  it('whose files could not be removed is deleted in the log all the same: its tabs closed, its history gone from the engine and from the view of a thread made again', async () => {
    const cluster = new MemoryCluster()
    let failRemoval = false
    const removalFails = (runtimes: RuntimeFactory): RuntimeFactory =>
      new Proxy(runtimes, { get: (target, property, receiver) => (property === 'remove' && failRemoval ? async () => Promise.reject(new Error('EBUSY: resource busy')) : Reflect.get(target, property, receiver)) })
    const a = await node(cluster, 'na', { runtimes: removalFails })
    const b = await node(cluster, 'nb', { runtimes: removalFails })
    expect((await api(a.url, 'POST', '/api/threads', { id: 'd3' })).status).toBe(201)
    const onA = await SseClient.open(`${a.url}/api/threads/d3/follow`)
    tabs.push(onA)
    expect((await api(a.url, 'POST', '/api/threads/d3/prompt', { message: 'secret words' })).status).toBe(202)
    await onA.waitFor(is('settled', { run: 1 }))
    failRemoval = true
    expect((await api(b.url, 'DELETE', '/api/threads/d3')).status).toBeGreaterThanOrEqual(500)
    failRemoval = false
    await expect.poll(() => onA.ended).toBe(true)
    await expect.poll(() => cluster.logs.get('d3')).toEqual([{ kind: 'deleted', seq: expect.any(Number) }])
    expect((await api(b.url, 'POST', '/api/threads', { id: 'd3' })).status).toBe(201)
    const tab = await SseClient.open(`${b.url}/api/threads/d3/follow`)
    tabs.push(tab)
    expect(JSON.stringify((await tab.waitFor(is('snapshot'))).data.transcript)).not.toContain('secret')
  })

  it('on another node than the one that ran it before is not listed by that node after it restarts', async () => {
    const cluster = new MemoryCluster()
    const a = await node(cluster, 'na', { idleMs: 50 })
    const b = await node(cluster, 'nb', { idleMs: 50 })
    await threadRanOnce(a, 'd9', 'hello', tabs).then(({ tab }) => tab.close())
    await expect.poll(() => a.node.owns('d9')).toBe(false)
    expect((await api(b.url, 'DELETE', '/api/threads/d9')).status).toBe(204)
    await expect.poll(async () => (await api(a.url, 'GET', '/api/threads/d9')).status).toBe(404)
    await a.close()
    const again = await node(cluster, 'na')
    expect((await api(again.url, 'GET', '/api/threads/d9')).status).toBe(404)
    expect(JSON.stringify((await api(again.url, 'GET', '/api/threads')).body)).not.toContain('"threadId":"d9"')
  })

  it('while a node that ran it before was down is not listed by that node once it is back', async () => {
    const cluster = new MemoryCluster()
    const a = await node(cluster, 'na')
    const b = await node(cluster, 'nb')
    for (const id of ['d10', 'd11']) await threadRanOnce(a, id, 'hello', tabs).then(({ tab }) => tab.close())
    await a.close()
    expect((await api(b.url, 'DELETE', '/api/threads/d10')).status).toBe(204)
    const again = await node(cluster, 'na')
    await expect.poll(async () => (await api(again.url, 'GET', '/api/threads/d10')).status).toBe(404)
    expect(JSON.stringify((await api(again.url, 'GET', '/api/threads')).body)).not.toContain('"threadId":"d10"')
    // The thread not deleted stays, as every node lists it.
    expect(await api(again.url, 'GET', '/api/threads/d11')).toMatchObject({ status: 200, body: { run: 1 } })
  })

  it('and made again while a node that ran it before was down: that node lists the new thread once it is back, nothing of the old', async () => {
    const cluster = new MemoryCluster()
    const a = await node(cluster, 'na')
    const b = await node(cluster, 'nb')
    await threadRanOnce(a, 'd12', 'secret words', tabs).then(({ tab }) => tab.close())
    await a.close()
    expect((await api(b.url, 'DELETE', '/api/threads/d12')).status).toBe(204)
    expect((await api(b.url, 'POST', '/api/threads', { id: 'd12', title: 'made again' })).status).toBe(201)
    const again = await node(cluster, 'na')
    await expect.poll(async () => (await api(again.url, 'GET', '/api/threads/d12')).body).toMatchObject({ title: 'made again', run: 0 })
    expect((await api(again.url, 'GET', '/api/threads/d12')).body.preview).toBeUndefined()
    expect((await api(again.url, 'GET', '/api/search?q=secret')).body.results).toEqual([])
  })

  it('and made again on a node whose clock is behind, while a node that listed it was away: that node lists the new thread, as the index gives it', async () => {
    const cluster = new MemoryCluster()
    const a = await node(cluster, 'na')
    const b = await node(cluster, 'nb')
    await threadRanOnce(a, 'd13', 'secret words', tabs).then(({ tab }) => tab.close())
    const old = cluster.rows.get('d13')!
    await a.close()
    expect((await api(b.url, 'DELETE', '/api/threads/d13')).status).toBe(204)
    // Made again on a node whose clock is a minute behind: the new thread reads as made before the old.
    await cluster.engine('behind').index.put({ ...old, title: 'made again', run: 0, seq: 0, facts: undefined, createdAt: old.createdAt - 60_000, updatedAt: old.createdAt - 60_000 })
    const again = await node(cluster, 'na')
    expect(await api(again.url, 'GET', '/api/threads/d13')).toMatchObject({ status: 200, body: { title: 'made again', run: 0 } })
    expect((await api(again.url, 'GET', '/api/search?q=secret')).body.results).toEqual([])
  })

  it('and made again on the node that deleted it, before the index gave it back the old rows and the delete: the node keeps the new thread', async () => {
    const cluster = new MemoryCluster()
    // Armed below: the index's notices reach this node only once released (its watch lags, as on NATS).
    let held: Array<() => void> | undefined
    const lagging = (engine: ClusterEngine): ClusterEngine => ({
      ...engine,
      index: {
        ...engine.index,
        watch: (onPut, onDelete) =>
          engine.index.watch(
            (row, revision) => (held ? held.push(() => onPut(row, revision)) : onPut(row, revision)),
            (threadId, revision) => (held ? held.push(() => onDelete(threadId, revision)) : onDelete(threadId, revision)),
          ),
      },
    })
    const a = await node(cluster, 'na', { engine: lagging })
    await threadRanOnce(a, 'd14', 'secret words', tabs).then(({ tab }) => tab.close())
    held = []
    expect((await api(a.url, 'PATCH', '/api/threads/d14', { title: 'renamed before the delete' })).status).toBe(200)
    expect((await api(a.url, 'DELETE', '/api/threads/d14')).status).toBe(204)
    const beforeTheCreate = held.splice(0)
    expect((await api(a.url, 'POST', '/api/threads', { id: 'd14', title: 'made again' })).status).toBe(201)
    // The old thread's row and its delete heard now, the new thread's row not yet: they are the old one's.
    expect(beforeTheCreate.length).toBeGreaterThanOrEqual(2)
    for (const notice of beforeTheCreate) notice()
    const stillMadeAgain = () => {
      expect(a.registry.store.threads().find((row) => row.threadId === 'd14')).toMatchObject({ title: 'made again' })
    }
    expect(await api(a.url, 'GET', '/api/threads/d14')).toMatchObject({ status: 200, body: { title: 'made again', run: 0 } })
    stillMadeAgain()
    const rest = held
    held = undefined
    for (const notice of rest) notice()
    expect(await api(a.url, 'GET', '/api/threads/d14')).toMatchObject({ status: 200, body: { title: 'made again', run: 0 } })
    stillMadeAgain()
  })

  it('whose owner is fenced as its deleted record goes in is answered 503 OWNER_CHANGED, not 204, keeps the thread and its files, and its retry deletes it', async () => {
    const cluster = new MemoryCluster()
    // Another node appended first, as this one's deleted record went in: that append is refused, once.
    // That node renamed the thread meanwhile: its row in the index is newer than the one this node held.
    const fencedAtTheRecord = fencedAtDeleted((engine, threadId) => engine.index.put({ ...cluster.rows.get(threadId)!, title: 'renamed on its next owner' }))
    const removed: string[] = []
    const a = await node(cluster, 'na', { engine: fencedAtTheRecord, runtimes: removals(removed) })
    const b = await node(cluster, 'nb')
    expect((await api(a.url, 'POST', '/api/threads', { id: 'd4' })).status).toBe(201)
    const onA = await SseClient.open(`${a.url}/api/threads/d4/follow`)
    tabs.push(onA)
    expect((await api(a.url, 'POST', '/api/threads/d4/prompt', { message: 'secret words' })).status).toBe(202)
    await onA.waitFor(is('settled', { run: 1 }))
    const answer = await api(a.url, 'DELETE', '/api/threads/d4')
    expect(answer.status).toBe(503)
    expect(answer.body).toMatchObject({ code: 'OWNER_CHANGED' })
    expect(answer.headers.get('retry-after')).toBe('1')
    expect(removed).toEqual([])
    expect(textOf(cluster.logs.get('d4'))).not.toContain('"kind":"deleted"')
    // Still there on every node, as it stood: its run, and what was said in it.
    for (const url of [a.url, b.url]) expect(await api(url, 'GET', '/api/threads/d4')).toMatchObject({ status: 200, body: { run: 1 } })
    expect(JSON.stringify((await api(b.url, 'GET', '/api/threads')).body)).toContain('"threadId":"d4"')
    // The row it kept is this node's own: the index keeps the next owner's newer one, and both nodes list that.
    expect(cluster.rows.get('d4')?.title).toBe('renamed on its next owner')
    for (const url of [a.url, b.url]) await expect.poll(async () => (await api(url, 'GET', '/api/threads/d4')).body?.title).toBe('renamed on its next owner')

    expect((await api(a.url, 'DELETE', '/api/threads/d4')).status).toBe(204)
    expect(removed).toEqual(['d4'])
    await expect.poll(() => cluster.logs.get('d4')).toEqual([{ kind: 'deleted', seq: expect.any(Number) }])
    for (const url of [a.url, b.url]) await expect.poll(async () => (await api(url, 'GET', '/api/threads/d4')).status).toBe(404)
  })

  it('whose owner is fenced as its deleted record goes in, because its next owner deleted it meanwhile, is not brought back on any node', async () => {
    const cluster = new MemoryCluster()
    // Another node took the thread and deleted it as this one's deleted record went in: that append is refused.
    const a = await node(cluster, 'na', { engine: fencedAtDeleted((engine, threadId) => engine.index.delete(threadId)) })
    const b = await node(cluster, 'nb')
    await threadRanOnce(a, 'd6', 'secret words', tabs)
    await expect.poll(async () => (await api(b.url, 'GET', '/api/threads/d6')).status).toBe(200)
    expect(await api(a.url, 'DELETE', '/api/threads/d6')).toMatchObject({ status: 503, body: { code: 'OWNER_CHANGED' } })
    for (const url of [a.url, b.url]) {
      expect((await api(url, 'GET', '/api/threads/d6')).status).toBe(404)
      expect(JSON.stringify((await api(url, 'GET', '/api/threads')).body)).not.toContain('"threadId":"d6"')
      expect((await api(url, 'GET', '/api/search?q=secret')).body.results).toEqual([])
    }
    expect((await api(a.url, 'DELETE', '/api/threads/d6')).status).toBe(404)
  })

  it('whose owner is fenced as its deleted record goes in, because its next owner deleted it and made it again meanwhile, lists the thread made again', async () => {
    const cluster = new MemoryCluster()
    const madeAgain = fencedAtDeleted(async (engine, threadId) => {
      const old = cluster.rows.get(threadId)!
      await engine.index.delete(threadId)
      await engine.index.put({ ...old, title: 'made again', run: 0, createdAt: old.createdAt + 1, facts: undefined })
    })
    const a = await node(cluster, 'na', { engine: madeAgain })
    await threadRanOnce(a, 'd8', 'secret words', tabs)
    expect(await api(a.url, 'DELETE', '/api/threads/d8')).toMatchObject({ status: 503, body: { code: 'OWNER_CHANGED' } })
    expect(await api(a.url, 'GET', '/api/threads/d8')).toMatchObject({ status: 200, body: { title: 'made again', run: 0 } })
  })

  it('and made again on another node while its runtime here is still up: this node lists the thread made again once that runtime stopped, with nothing of the old', async () => {
    const cluster = new MemoryCluster()
    let engine: ClusterEngine | undefined
    const a = await node(cluster, 'na', { engine: (e) => (engine = e) })
    await threadRanOnce(a, 'd10', 'secret words', tabs)
    // The runtime here is up (idle, not yet released) as the index says another node deleted the thread and made it again.
    const old = cluster.rows.get('d10')!
    await engine!.index.delete('d10')
    await engine!.index.put({ ...old, title: 'made again', run: 0, createdAt: old.createdAt + 1, facts: undefined })
    // Until it stops, the slot is still the old thread's: nothing of the new one is merged into it.
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(await api(a.url, 'GET', '/api/threads/d10')).toMatchObject({ status: 200, body: { title: 'secret words', run: 1 } })
    // This node's lease ends (the other node had taken the thread as it lapsed): the runtime stops.
    cluster.expire(a.node.self.id)
    await expect.poll(async () => (await api(a.url, 'GET', '/api/threads/d10')).body).toMatchObject({ title: 'made again', run: 0 })
    expect((await api(a.url, 'GET', '/api/search?q=secret')).body.results).toEqual([])
  })

  it('whose node loses its lease as the delete runs is answered 503 OWNER_CHANGED, not 204, keeps the thread and its files, and its retry deletes it', async () => {
    const cluster = new MemoryCluster()
    const removed: string[] = []
    let a: InProcessNode | undefined
    let expired = false
    // The lease ends as the thread's runtime is disposed for the delete (the node hears it at once): before the record is written.
    const leaseEndsAtDispose = (runtimes: RuntimeFactory): RuntimeFactory => {
      const create: RuntimeFactory['create'] = async (options) => {
        const runtime = await runtimes.create(options)
        const dispose = runtime.dispose.bind(runtime)
        return Object.assign(runtime, {
          dispose: async () => {
            if (!expired) cluster.expire(a!.node.self.id)
            expired = true
            return dispose()
          },
        })
      }
      return new Proxy(removals(removed)(runtimes), { get: (target, property, receiver) => (property === 'create' ? create : Reflect.get(target, property, receiver)) })
    }
    a = await node(cluster, 'na', { runtimes: leaseEndsAtDispose })
    expect((await api(a.url, 'POST', '/api/threads', { id: 'd5' })).status).toBe(201)
    expect((await api(a.url, 'POST', '/api/threads/d5/prompt', { message: 'slow 400' })).status).toBe(202)
    const answer = await api(a.url, 'DELETE', '/api/threads/d5')
    expect(answer.status).toBe(503)
    expect(answer.body).toMatchObject({ code: 'OWNER_CHANGED' })
    expect(removed).toEqual([])
    expect(textOf(cluster.logs.get('d5'))).not.toContain('"kind":"deleted"')

    // The node's next life takes the thread, and deletes it.
    await expect.poll(async () => (await api(a!.url, 'DELETE', '/api/threads/d5')).status, { timeout: 10_000 }).toBe(204)
    expect(removed).toEqual(['d5'])
  })
})

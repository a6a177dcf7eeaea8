/**
 * `Idempotency-Key`s across nodes (src/host/cluster/cluster-keys.ts), on the in-process adapter: who
 * runs a keyed request, what a repeat gets while it runs and after, and what happens to a claim
 * whose node died before it answered.
 */
import { describe, expect, it } from 'vitest'
import { ClusterKeys } from '../../src/host/cluster/cluster-keys.js'
import { MemoryCluster } from '../../src/host/cluster/memory.js'
import { ThreadMirror } from '../../src/host/cluster/thread-mirror.js'
import { initialView } from '../../src/shared/projection.js'

async function twoNodes() {
  const cluster = new MemoryCluster()
  const a = cluster.engine('a')
  const b = cluster.engine('b')
  await a.membership.join()
  await b.membership.join()
  return { cluster, a, b, keysA: new ClusterKeys(a), keysB: new ClusterKeys(b) }
}

const answer = (key: string, status: number, body: string) => ({ key, fingerprint: 'fp', status, body, at: Date.now() })

describe('Idempotency-Keys across nodes', () => {
  it('a repeat on another node while the first claimer runs waits for its answer, and gets it', async () => {
    const { keysA, keysB } = await twoNodes()
    const first = await keysA.claim('k', 'fp')
    expect(first.kind).toBe('run')
    const repeat = keysB.claim('k', 'fp')
    if (first.kind === 'run') await keysA.settle(first.revision, answer('k', 202, '{"messageId":"m"}'))
    expect(await repeat).toMatchObject({ kind: 'answer', answer: { status: 202, body: '{"messageId":"m"}', fingerprint: 'fp' } })
  })

  it('another request with the same key gets the first request\'s fingerprint back (the key was reused), without waiting for it to end', async () => {
    const { keysA, keysB } = await twoNodes()
    expect((await keysA.claim('k', 'fp')).kind).toBe('run')
    expect(await keysB.claim('k', 'other')).toMatchObject({ kind: 'answer', answer: { fingerprint: 'fp' } })
  })

  it('a claim whose node died before it answered is taken over: the repeat runs on the node that took it', async () => {
    const { cluster, a, keysA, keysB } = await twoNodes()
    const first = await keysA.claim('k', 'fp')
    cluster.expire(a.membership.self.id)
    const taken = await keysB.claim('k', 'fp')
    expect(taken.kind).toBe('run')
    // A late answer of the dead node is not the key's any more: the taker's is.
    if (first.kind === 'run') await keysA.settle(first.revision, answer('k', 202, 'late'))
    if (taken.kind === 'run') await keysB.settle(taken.revision, answer('k', 202, 'taker'))
    expect(await keysB.claim('k', 'fp')).toMatchObject({ kind: 'answer', answer: { body: 'taker' } })
  })

  it('a claim whose node died before it answered, on a thread whose log shows the prompt admitted under it, is answered from the log: nothing runs', async () => {
    const { cluster, a, b } = await twoNodes()
    const admission = { messageId: 'm', fingerprint: 'fp', run: 3, queued: true }
    const keysB = new ClusterKeys(b, 10_000, (threadId, key) => (threadId === 't' && key === 'k' ? admission : undefined))
    expect((await new ClusterKeys(a).claim('k', 'fp', 't')).kind).toBe('run')
    cluster.expire(a.membership.self.id)
    const taken = await keysB.claim('k', 'fp', 't')
    expect(taken).toMatchObject({ kind: 'admitted', admission })
    // The key is this node's now: the answer it builds from the log is the one every repeat gets.
    if (taken.kind === 'admitted') await keysB.settle(taken.revision, answer('k', 202, '{"messageId":"m"}'))
    expect(await new ClusterKeys(a).claim('k', 'fp', 't')).toMatchObject({ kind: 'answer', answer: { body: '{"messageId":"m"}' } })
    // A key the log knows nothing of, taken over the same way, runs.
    expect((await new ClusterKeys(a).claim('k2', 'fp', 't')).kind).toBe('run')
    cluster.expire(a.membership.self.id)
    expect((await keysB.claim('k2', 'fp', 't')).kind).toBe('run')
  })

  it('a thread log tells which keys its prompts were admitted under, with the receipt their 202 carried; a withdrawn prompt leaves its key free', async () => {
    const { a } = await twoNodes()
    let at = 0
    const append = async (record: Parameters<typeof a.logs.append>[1]) => (at = await a.logs.append('t', record, at))
    await append({ kind: 'prompt', op: 'accepted', messageId: 'm1', text: 'one', key: { key: 'k1', fingerprint: 'f1', run: 0 } })
    await append({ kind: 'prompt', op: 'admitted', messageId: 'm1', run: 1, queued: false })
    await append({ kind: 'prompt', op: 'accepted', messageId: 'm2', text: 'two', key: { key: 'k2', fingerprint: 'f2', run: 1 } })
    await append({ kind: 'prompt', op: 'accepted', messageId: 'm3', text: 'three', key: { key: 'k3', fingerprint: 'f3', run: 1 } })
    await append({ kind: 'prompt', op: 'settled', messageId: 'm3', withdrawn: true })
    await append({ kind: 'prompt', op: 'settled', messageId: 'm1' })
    const mirror = new ThreadMirror('t', a.logs, async () => initialView('t', []))
    mirror.start()
    await mirror.ready()
    // m1 ran (its fate is known) and keeps its receipt; m2 was admitted, its answer never logged: the receipt at its admission.
    expect(Object.fromEntries(mirror.keyed)).toEqual({
      k1: { messageId: 'm1', fingerprint: 'f1', run: 1, queued: false },
      k2: { messageId: 'm2', fingerprint: 'f2', run: 1, queued: false },
    })
    mirror.stop()
  })

  it('a 5xx answer releases the claim: the retry runs; a repeat still running past the wait is told to retry (busy)', async () => {
    const { keysA, b } = await twoNodes()
    const first = await keysA.claim('k', 'fp')
    if (first.kind === 'run') await keysA.settle(first.revision, answer('k', 503, ''))
    expect((await keysA.claim('k', 'fp')).kind).toBe('run')
    expect(await new ClusterKeys(b, 0).claim('k', 'fp')).toEqual({ kind: 'busy' })
  })

  it('an answer the engine refused (it was down) is written again once it takes writes: the other nodes then replay it', async () => {
    const { a, b, keysB } = await twoNodes()
    let down = true
    const flaky = { ...a, keys: { ...a.keys, record: (...args: Parameters<typeof a.keys.record>) => (down ? Promise.reject(new Error('engine down')) : a.keys.record(...args)) } }
    const keysA = new ClusterKeys(flaky)
    const first = await keysA.claim('k', 'fp')
    if (first.kind !== 'run') throw new Error('the key was free')
    await expect(keysA.settle(first.revision, answer('k', 201, 'made'))).rejects.toThrow('engine down')
    down = false
    await expect.poll(async () => (await new ClusterKeys(b, 0).claim('k', 'fp')).kind, { timeout: 5000 }).toBe('answer')
    expect(await keysB.claim('k', 'fp')).toMatchObject({ kind: 'answer', answer: { status: 201, body: 'made' } })
  })
  describe('a claim started as a passed-on command arrives (early)', () => {
    /** Node a's keys, counting the claims it sends to the engine. */
    const counted = (engine: Awaited<ReturnType<typeof twoNodes>>['a']) => {
      const sent = { claims: 0 }
      const keys = new ClusterKeys({ ...engine, keys: { ...engine.keys, claim: (...args: Parameters<typeof engine.keys.claim>) => (sent.claims++, engine.keys.claim(...args)) } })
      return { keys, sent }
    }

    it('is taken up by the guard\'s claim of the same key and request: one claim in the engine, and the request runs', async () => {
      const { a, keysB } = await twoNodes()
      const { keys, sent } = counted(a)
      const over = keys.early('k', 'fp')
      const claim = await keys.claim('k', 'fp', 't')
      expect(claim.kind).toBe('run')
      expect(sent.claims).toBe(1)
      // The command's end leaves a claim taken up alone: a repeat still waits for its answer.
      over()
      if (claim.kind === 'run') await keys.settle(claim.revision, answer('k', 202, 'once'))
      expect(await keysB.claim('k', 'fp')).toMatchObject({ kind: 'answer', answer: { body: 'once' } })
    })

    it('nobody took up (the command was refused before its guard) lets the key go once the command is over: the retry runs', async () => {
      const { a, b } = await twoNodes()
      const { keys } = counted(a)
      const over = keys.early('k', 'fp')
      over()
      expect((await new ClusterKeys(b).claim('k', 'fp')).kind).toBe('run')
    })

    it('made for the same key with another request is let go before the claim: the guard does not wait on it', async () => {
      const { a, keysB } = await twoNodes()
      const { keys } = counted(a)
      keys.early('k', 'digested elsewhere')
      const claim = await keys.claim('k', 'fp', 't')
      expect(claim.kind).toBe('run')
      if (claim.kind === 'run') await keys.settle(claim.revision, { ...answer('k', 202, 'mine'), fingerprint: 'fp' })
      expect(await keysB.claim('k', 'fp')).toMatchObject({ kind: 'answer', answer: { body: 'mine', fingerprint: 'fp' } })
    })

    it('is not made while a claim of the key is under way here (it would never be taken up): that claim goes on and gets the answer', async () => {
      const { a, keysB } = await twoNodes()
      const running = await keysB.claim('k', 'fp')
      const { keys, sent } = counted(a)
      const waiting = keys.claim('k', 'fp')
      await new Promise((resolve) => setTimeout(resolve, 10))
      const before = sent.claims
      const over = keys.early('k', 'fp')
      expect(sent.claims).toBe(before)
      if (running.kind === 'run') await keysB.settle(running.revision, answer('k', 202, 'first'))
      expect(await waiting).toMatchObject({ kind: 'answer', answer: { body: 'first' } })
      over()
    })

    it('nobody took up, whose release the engine did not take, is released again until it does: the key does not stay running', async () => {
      const { a, b } = await twoNodes()
      let down = true
      const flaky = { ...a, keys: { ...a.keys, release: (...args: Parameters<typeof a.keys.release>) => (down ? Promise.reject(new Error('engine down')) : a.keys.release(...args)) } }
      const keys = new ClusterKeys(flaky)
      const over = keys.early('k', 'fp')
      await new Promise((resolve) => setTimeout(resolve, 10))
      over()
      await new Promise((resolve) => setTimeout(resolve, 10))
      down = false
      await expect.poll(async () => (await new ClusterKeys(b, 0).claim('k', 'fp')).kind, { timeout: 5000 }).toBe('run')
    })

    it('for a key already answered finds the answer, as the claim does', async () => {
      const { a, keysB } = await twoNodes()
      const first = await keysB.claim('k', 'fp')
      if (first.kind === 'run') await keysB.settle(first.revision, answer('k', 201, 'made'))
      const { keys } = counted(a)
      const over = keys.early('k', 'fp')
      expect(await keys.claim('k', 'fp')).toMatchObject({ kind: 'answer', answer: { status: 201, body: 'made' } })
      over()
      expect(await keysB.claim('k', 'fp')).toMatchObject({ kind: 'answer', answer: { body: 'made' } })
    })
  })
})

/**
 * The cluster ports' contract (src/host/cluster/port.ts), held against every adapter: the in-process
 * one, one process on its SQLite store (embedded), and NATS JetStream (a real nats-server; skipped
 * with a message where it is not installed).
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { EmbeddedCluster } from '../../src/host/cluster/embedded.js'
import { MemoryCluster } from '../../src/host/cluster/memory.js'
import { SqliteThreadStore } from '../../src/host/store/sqlite.js'
import { Fenced, RECORD_FORMAT, type ClusterEngine, type ThreadRecord } from '../../src/host/cluster/port.js'
import { CHECKPOINT_FORMAT } from '../../src/host/cluster/mirror-state.js'
import { natsMissing, startNats, type NatsServer } from '../support/nats-server.js'

interface Adapter {
  name: string
  skip?: string
  setup(): Promise<void>
  /** Two nodes of one cluster. */
  pair(): Promise<[ClusterEngine, ClusterEngine]>
  /** Ends the node's lease from outside, as a lapse does. */
  expire(engine: ClusterEngine): Promise<void>
  teardown(): Promise<void>
}

const memory: Adapter = (() => {
  let cluster = new MemoryCluster()
  return {
    name: 'memory',
    setup: async () => void (cluster = new MemoryCluster()),
    pair: async () => [cluster.engine('a'), cluster.engine('b')],
    expire: async (engine) => cluster.expire(engine.membership.self.id),
    teardown: async () => {},
  }
})()

const embedded: Adapter = (() => {
  let dir = ''
  let store: SqliteThreadStore | undefined
  let cluster: EmbeddedCluster | undefined
  return {
    name: 'embedded (SQLite)',
    setup: async () => {
      dir = mkdtempSync(join(tmpdir(), 'threadhost-embedded-'))
      store = SqliteThreadStore.open(dir).store
    },
    // Two nodes of one process on one store: the contract's races are between them.
    pair: async () => {
      cluster = new EmbeddedCluster(store!)
      return [cluster.engine('a'), cluster.engine('b')]
    },
    expire: async (engine) => cluster!.members.expire(engine.membership.self.id),
    teardown: async () => {
      store?.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
})()

const spillDir = join(tmpdir(), `threadhost-spill-${process.pid}`)

/**
 * The engine's adapter on a real nats-server; `restricted`: as a user allowed only NODE_SUBJECTS (the
 * README's list), the server's other user (unrestricted) playing the lease's TTL.
 */
function natsAdapter(restricted: boolean): Adapter {
  let server: NatsServer | undefined
  let dir: string | undefined
  const engines: ClusterEngine[] = []
  const node = { user: 'node', pass: 'node-pass' }
  const admin = { user: 'admin', pass: 'admin-pass' }
  return {
    name: restricted ? 'nats, a user allowed only the subjects a node needs' : 'nats',
    skip: natsMissing,
    setup: async () => {
      if (!restricted) return void (server = await startNats())
      const { NODE_SUBJECTS } = await import('../../src/host/cluster/nats.js')
      dir = mkdtempSync(join(tmpdir(), 'threadhost-nats-users-'))
      const allowed = JSON.stringify(NODE_SUBJECTS)
      const conf = join(dir, 'users.conf')
      writeFileSync(conf, `authorization { users = [ { user: ${node.user}, password: ${node.pass}, permissions: { publish: ${allowed}, subscribe: ${allowed} } }, { user: ${admin.user}, password: ${admin.pass} } ] }\n`)
      server = await startNats({ args: ['-c', conf] })
    },
    pair: async () => {
      const { connectNats } = await import('../../src/host/cluster/nats.js')
      const access = { servers: [server!.url], ...(restricted ? { auth: node } : {}) }
      // One spill dir for both, as the nodes of a cluster share their data dir.
      const pair = [await connectNats(access, 'a', undefined, { spillDir }), await connectNats(access, 'b', undefined, { spillDir })] as [ClusterEngine, ClusterEngine]
      engines.push(...pair)
      return pair
    },
    expire: async (engine) => {
      const [{ connect }, { Kvm }] = await Promise.all([import('@nats-io/transport-node'), import('@nats-io/kv')])
      const nc = await connect({ servers: server!.url, ...(restricted ? admin : {}) })
      await (await new Kvm(nc).open('th_nodes')).delete(engine.membership.self.id)
      await nc.close()
    },
    teardown: async () => {
      for (const engine of engines) await engine.close().catch(() => {})
      await server?.stop()
      rmSync(spillDir, { recursive: true, force: true })
      if (dir) rmSync(dir, { recursive: true, force: true })
    },
  }
}

let unique = 0
const threadId = () => `t.${++unique} x`

for (const adapter of [memory, embedded, natsAdapter(false), natsAdapter(true)]) {
  describe.skipIf(adapter.skip !== undefined)(`cluster ports on ${adapter.name}${adapter.skip ? ` (${adapter.skip})` : ''}`, () => {
    let a: ClusterEngine
    let b: ClusterEngine
    beforeAll(async () => {
      await adapter.setup()
      ;[a, b] = await adapter.pair()
      await a.membership.join()
      await b.membership.join()
    })
    afterAll(() => adapter.teardown())

    it('membership lists every joined node, by id, name and the record and checkpoint formats it writes', async () => {
      const live = await a.membership.live()
      expect(live.sort((x, y) => x.name.localeCompare(y.name))).toEqual([
        { id: a.membership.self.id, name: 'a', format: RECORD_FORMAT, checkpointFormat: CHECKPOINT_FORMAT },
        { id: b.membership.self.id, name: 'b', format: RECORD_FORMAT, checkpointFormat: CHECKPOINT_FORMAT },
      ])
      expect(await b.membership.isLive(a.membership.self.id)).toBe(true)
      expect(await b.membership.isLive('nobody')).toBe(false)
    })

    it('one of two nodes acquiring a free thread wins; the other is refused', async () => {
      const id = threadId()
      const [x, y] = await Promise.all([
        a.owners.acquire(id, { node: a.membership.self.id, name: 'a' }),
        b.owners.acquire(id, { node: b.membership.self.id, name: 'b' }),
      ])
      expect([x, y].filter(Boolean)).toHaveLength(1)
      const owner = await a.owners.owner(id)
      expect(owner?.revision).toBe((x ?? y)!.revision)
    })

    it('an ownership is taken over only by compare-and-set at the revision read', async () => {
      const id = threadId()
      const first = (await a.owners.acquire(id, { node: a.membership.self.id, name: 'a' }))!
      expect(await b.owners.acquire(id, { node: b.membership.self.id, name: 'b' }, first.revision + 100)).toBeUndefined()
      const taken = await b.owners.acquire(id, { node: b.membership.self.id, name: 'b' }, first.revision)
      expect(taken).toBeDefined()
      // The old owner's revision no longer names the record.
      expect(await a.owners.acquire(id, { node: a.membership.self.id, name: 'a' }, first.revision)).toBeUndefined()
      expect((await a.owners.owner(id))?.record.name).toBe('b')
      expect((await a.owners.list()).get(id)?.record.name).toBe('b')
    })

    it('a release gives the thread up only while the record is still the releaser\'s: the next node then takes it afresh; a release after a takeover leaves the new owner\'s record', async () => {
      const id = threadId()
      const first = (await a.owners.acquire(id, { node: a.membership.self.id, name: 'a' }))!
      await a.owners.release(first)
      expect(await b.owners.owner(id)).toBeUndefined()
      expect((await b.owners.list()).has(id)).toBe(false)
      // Free again: taken as a free thread is, by the first to ask.
      const second = (await b.owners.acquire(id, { node: b.membership.self.id, name: 'b' }))!
      expect(second).toBeDefined()
      // A stale release (a's revision, or b's first after it was taken over) is refused without a throw and moves nothing.
      await a.owners.release(first)
      const taken = (await a.owners.acquire(id, { node: a.membership.self.id, name: 'a' }, second.revision))!
      await b.owners.release(second)
      expect(await b.owners.owner(id)).toEqual({ record: { node: a.membership.self.id, name: 'a' }, revision: taken.revision })
    })

    it('an append names the last position: a stale writer is refused (fenced), and readers see every record in order', async () => {
      const id = threadId()
      expect(await a.logs.last(id)).toBe(0)
      const p1 = await a.logs.append(id, { kind: 'frames', frames: ['one'] }, 0)
      const p2 = await b.logs.append(id, { kind: 'frames', frames: ['two'] }, p1)
      await expect(a.logs.append(id, { kind: 'frames', frames: ['late'] }, p1)).rejects.toBeInstanceOf(Fenced)
      expect(await b.logs.last(id)).toBe(p2)
      const seen: string[] = []
      const caughtUp = new Promise<void>((resolve) => {
        const reader = b.logs.read(id, (r) => r.kind === 'frames' && seen.push(...r.frames), () => {
          resolve()
          void reader
        })
      })
      await caughtUp
      expect(seen).toEqual(['one', 'two'])
    })

    it('a reader from a position gets the records after it, then each new one; a checkpoint kept is the thread\'s newest, read by every node', async () => {
      const id = threadId()
      const p1 = await a.logs.append(id, { kind: 'frames', frames: ['one'] }, 0)
      const p2 = await a.logs.append(id, { kind: 'frames', frames: ['two'] }, p1)
      const p3 = await a.logs.append(id, { kind: 'frames', frames: ['three'] }, p2)
      expect(await b.logs.checkpoint(id)).toBeUndefined()
      await a.logs.keepCheckpoint(id, { position: p1, state: 'folded to one' })
      // A transcript outgrows one message of the engine: a checkpoint of any size is kept whole.
      const big = `folded to two ${'é'.repeat(3 * 1024 * 1024)}`
      await a.logs.keepCheckpoint(id, { position: p2, state: big })
      expect(await b.logs.checkpoint(id)).toEqual({ position: p2, state: big })
      expect(await b.logs.checkpoint(threadId())).toBeUndefined()
      const seen: string[] = []
      let reader: { stop(): void } | undefined
      await new Promise<void>((resolve) => (reader = b.logs.read(id, (r) => r.kind === 'frames' && seen.push(...r.frames), resolve, p2)))
      expect(seen).toEqual(['three'])
      await a.logs.append(id, { kind: 'frames', frames: ['four'] }, p3)
      await expect.poll(() => seen).toEqual(['three', 'four'])
      reader!.stop()
    })

    it('a deleted thread\'s records before its deleted record and its checkpoint are forgotten on every node; what comes after, a new checkpoint included, stays', async () => {
      const id = threadId()
      const p1 = await a.logs.append(id, { kind: 'frames', frames: ['secret'] }, 0)
      const p2 = await a.logs.append(id, { kind: 'frames', frames: ['more'] }, p1)
      await a.logs.keepCheckpoint(id, { position: p2, state: 'folded to more' })
      const p3 = await a.logs.append(id, { kind: 'deleted', seq: 2 }, p2)
      await a.logs.forget(id, p3)
      /** What a reader on b gets of the log as it is now. */
      const records = async () => {
        const seen: Array<[ThreadRecord, number]> = []
        let caughtUp!: () => void
        const done = new Promise<void>((resolve) => (caughtUp = resolve))
        const reader = b.logs.read(id, (record, position) => void seen.push([record, position]), caughtUp)
        await done
        reader.stop()
        return seen
      }
      expect(await records()).toEqual([[{ kind: 'deleted', seq: 2 }, p3]])
      expect(await b.logs.checkpoint(id)).toBeUndefined()
      expect(await b.logs.last(id)).toBe(p3)
      // A stale writer is refused as ever; the next thread under the id appends after the deleted record.
      await expect(a.logs.append(id, { kind: 'frames', frames: ['stale'] }, p2)).rejects.toBeInstanceOf(Fenced)
      const p4 = await b.logs.append(id, { kind: 'frames', frames: ['new'] }, p3)
      await b.logs.keepCheckpoint(id, { position: p4, state: 'folded to new' })
      // The same forget again (a retry that had not been answered) leaves the new thread's all as it was.
      await a.logs.forget(id, p3)
      expect(await records()).toEqual([
        [{ kind: 'deleted', seq: 2 }, p3],
        [{ kind: 'frames', frames: ['new'] }, p4],
      ])
      expect(await a.logs.checkpoint(id)).toEqual({ position: p4, state: 'folded to new' })
    })

    it('a checkpoint kept trims the log up to the one it replaced: a reader from either gets every record after it, one from before them sees by the first record\'s previous that records are missing; one at or before the newest is not kept', async () => {
      const id = threadId()
      const at = [0]
      for (const word of ['one', 'two', 'three', 'four', 'five']) at.push(await a.logs.append(id, { kind: 'frames', frames: [word] }, at.at(-1)!))
      /** What a reader on b from `after` gets of the log as it is now: each record's first frame, position and previous. */
      const records = async (after: number) => {
        const seen: Array<[string, number, number | undefined]> = []
        let caughtUp!: () => void
        const done = new Promise<void>((resolve) => (caughtUp = resolve))
        const reader = b.logs.read(id, (record, position, previous) => void seen.push([record.kind === 'frames' ? record.frames[0] : record.kind, position, previous]), caughtUp, after)
        await done
        reader.stop()
        return seen
      }
      const [, p1, p2, p3, p4, p5] = at
      await a.logs.keepCheckpoint(id, { position: p2, state: 'folded to two' })
      // The first checkpoint replaces none: nothing is trimmed, and each record names the one before it.
      expect(await records(0)).toEqual([['one', p1, 0], ['two', p2, p1], ['three', p3, p2], ['four', p4, p3], ['five', p5, p4]])
      await a.logs.keepCheckpoint(id, { position: p4, state: 'folded to four' })
      expect(await records(p2)).toEqual([['three', p3, p2], ['four', p4, p3], ['five', p5, p4]])
      expect(await records(p4)).toEqual([['five', p5, p4]])
      // From before the checkpoint it replaced: the first record kept names a previous past where the reader started.
      expect(await records(0)).toEqual([['three', p3, p2], ['four', p4, p3], ['five', p5, p4]])
      // One at or before the newest (a stale owner's, or the same one twice) is not kept, and trims nothing.
      await b.logs.keepCheckpoint(id, { position: p3, state: 'folded to three' })
      await b.logs.keepCheckpoint(id, { position: p4, state: 'folded to four, again' })
      expect(await b.logs.checkpoint(id)).toEqual({ position: p4, state: 'folded to four' })
      expect(await records(0)).toEqual([['three', p3, p2], ['four', p4, p3], ['five', p5, p4]])
      // At the log's last record: the newest checkpoint's own record and the log's end stay, and the writer goes on.
      await a.logs.keepCheckpoint(id, { position: p5, state: 'folded to five' })
      await b.logs.keepCheckpoint(id, { position: p5, state: 'folded to five, again' })
      expect(await b.logs.last(id)).toBe(p5)
      expect(await records(p4)).toEqual([['five', p5, p4]])
      const p6 = await a.logs.append(id, { kind: 'frames', frames: ['six'] }, p5)
      expect(await records(p5)).toEqual([['six', p6, p5]])
    })

    it('a checkpoint read while newer ones are kept gets one of them whole, never waiting on it', async () => {
      const id = threadId()
      const state = (n: number) => `${n} ${String(n).repeat(1_100_000)}`
      await a.logs.keepCheckpoint(id, { position: 1, state: state(1) })
      for (let n = 2; n <= 41; n++) {
        const keeping = a.logs.keepCheckpoint(id, { position: n, state: state(n) })
        // Each read starts at another point of the write before it.
        await new Promise((resolve) => setTimeout(resolve, (n * 13) % 60))
        const read = await b.logs.checkpoint(id)
        expect([n - 1, n]).toContain(read?.position)
        expect(read?.state).toBe(state(read!.position))
        await keeping
      }
      expect((await b.logs.checkpoint(id))?.position).toBe(41)
    }, 30_000)

    it('a command reaches the node serving the thread; with none serving, the sender hears no-owner', async () => {
      const id = threadId()
      const request = { method: 'POST', url: `/api/threads/${id}/abort`, headers: {}, body: '{}' }
      expect(await b.commands.send(id, request, 2000)).toBe('no-owner')
      const stop = await a.commands.serve(id, async (r) => ({ status: 200, headers: {}, body: `${r.method} ${r.url}` }))
      expect(await b.commands.send(id, request, 2000)).toEqual({ status: 200, headers: {}, body: `POST /api/threads/${id}/abort` })
      stop()
    })

    it('a command larger than one message of the engine reaches the owner whole, and leaves nothing behind', async () => {
      const id = threadId()
      const body = JSON.stringify({ message: 'with images', images: [{ mimeType: 'image/png', data: 'A'.repeat(3 * 1024 * 1024) }] })
      const stop = await a.commands.serve(id, async (r) => ({ status: 202, headers: {}, body: String(r.body === body) }))
      expect(await b.commands.send(id, { method: 'POST', url: `/api/threads/${id}/prompt`, headers: {}, body }, 5000)).toEqual({ status: 202, headers: {}, body: 'true' })
      stop()
      expect(existsSync(spillDir) ? readdirSync(spillDir) : []).toEqual([])
    })

    it('an append retried under the same id after it landed resolves the same position and writes nothing twice', async () => {
      const id = threadId()
      const p1 = await a.logs.append(id, { kind: 'frames', frames: ['one'] }, 0, 'append-1')
      // The answer was lost; the writer sends the same record again, still naming the position it knew.
      expect(await a.logs.append(id, { kind: 'frames', frames: ['one'] }, 0, 'append-1')).toBe(p1)
      expect(await a.logs.last(id)).toBe(p1)
      const p2 = await a.logs.append(id, { kind: 'frames', frames: ['two'] }, p1, 'append-2')
      await expect(a.logs.append(id, { kind: 'frames', frames: ['three'] }, p1, 'append-3')).rejects.toBeInstanceOf(Fenced)
      expect(await b.logs.last(id)).toBe(p2)
      // Asked at a position no log is at (a stopped writer's question, LogWriter): an id that landed is
      // answered with its position; one that never did is refused, and nothing is written.
      expect(await a.logs.append(id, { kind: 'frames', frames: [] }, Number.MAX_SAFE_INTEGER, 'append-1')).toBe(p1)
      await expect(a.logs.append(id, { kind: 'frames', frames: [] }, Number.MAX_SAFE_INTEGER, 'append-never')).rejects.toBeInstanceOf(Fenced)
      expect(await b.logs.last(id)).toBe(p2)
    })

    it('a question to every node is answered by each node that serves it and has an answer; one that stopped serving, or has none, leaves the asker with the answers that came', async () => {
      const topic = `question-${++unique}`
      const stopA = await a.commands.serveAll(topic, async (body) => `a heard ${body}`)
      // b answers only what is not its own question.
      const stopB = await b.commands.serveAll(topic, async (body) => (body.startsWith('b:') ? undefined : `b heard ${body}`))
      expect((await a.commands.askAll(topic, 'x', 2, 5000)).sort()).toEqual(['a heard x', 'b heard x'])
      expect(await b.commands.askAll(topic, 'b:y', 1, 5000)).toEqual(['a heard b:y'])
      expect(await b.commands.askAll(topic, 'b:y', 2, 300)).toEqual(['a heard b:y'])
      expect(await a.commands.askAll(topic, 'x', 0, 5000)).toEqual([])
      stopB()
      expect(await a.commands.askAll(topic, 'z', 2, 300)).toEqual(['a heard z'])
      stopA()
      expect(await a.commands.askAll(topic, 'w', 2, 300)).toEqual([])
    })

    it('the index shows every node the same rows, puts and deletes, each at a revision past the one before: the one its put resolved; a row asked for by id is the one it has now', async () => {
      const id = threadId()
      const seen = new Map<string, string>()
      const revisions: Array<[string, number]> = []
      const watch = await b.index.watch(
        (row, revision) => void (seen.set(row.threadId, row.title), row.threadId === id && revisions.push(['put', revision])),
        (gone, revision) => void (seen.delete(gone), gone === id && revisions.push(['delete', revision])),
      )
      const first = await a.index.put({ threadId: id, title: 'hello', model: 'demo', createdAt: 1, updatedAt: 1, run: 0, seq: 0 })
      await expect.poll(() => seen.get(id)).toBe('hello')
      const second = await b.index.put({ threadId: id, title: 'renamed', model: 'demo', createdAt: 1, updatedAt: 2, run: 0, seq: 0 })
      await expect.poll(() => seen.get(id)).toBe('renamed')
      // Asked for by id (a node that has not heard the row yet): the row as it stands, at its revision.
      expect(await a.index.get(id)).toEqual({ row: expect.objectContaining({ threadId: id, title: 'renamed' }), revision: second })
      await a.index.delete(id)
      await expect.poll(() => seen.has(id)).toBe(false)
      expect(await b.index.get(id)).toBeUndefined()
      expect(await b.index.get(threadId())).toBeUndefined()
      expect(typeof first).toBe('number')
      expect(second).toBeGreaterThan(first!)
      expect(revisions.slice(0, 2)).toEqual([
        ['put', first],
        ['put', second],
      ])
      expect(revisions[2]?.[0]).toBe('delete')
      expect(revisions[2]![1]).toBeGreaterThan(second!)
      // A node that starts watching now is given each row with the revision it is at.
      const later = threadId()
      const at = await a.index.put({ threadId: later, title: 'listed', model: 'demo', createdAt: 1, updatedAt: 1, run: 0, seq: 0 })
      const listed = new Map<string, number>()
      const listing = await a.index.watch((row, revision) => void listed.set(row.threadId, revision), () => {})
      await expect.poll(() => listed.get(later)).toBe(at)
      listing.stop()
      watch.stop()
    })

    it('the index drops a row its writer no longer stands by when the write comes, and writes one it does', async () => {
      const id = threadId()
      const later = threadId()
      const seen = new Map<string, string>()
      const watch = await b.index.watch(
        (row) => void seen.set(row.threadId, row.title),
        (gone) => void seen.delete(gone),
      )
      const row = { threadId: id, model: 'demo', createdAt: 1, updatedAt: 1, run: 0, seq: 0 }
      expect(await a.index.put({ ...row, title: 'the next owner' }, () => true)).toBeGreaterThan(0)
      expect(await a.index.put({ ...row, title: 'an owner that lost it' }, () => false)).toBeUndefined()
      // The index keeps one order: once a later row is seen, a row written before it would have been.
      await a.index.put({ ...row, threadId: later, title: 'later' })
      await expect.poll(() => seen.get(later)).toBe('later')
      expect(seen.get(id)).toBe('the next owner')
      watch.stop()
    })

    it('an Idempotency-Key is claimed by one node of two; the other sees the claim running, then the recorded answer', async () => {
      const key = `key ${++unique}, with: any visible ASCII`
      const [x, y] = await Promise.all([a.keys.claim(key, 'fp', 'node-a'), b.keys.claim(key, 'fp', 'node-b')])
      expect([x, y].filter((c) => c.claimed)).toHaveLength(1)
      const [winner, other] = x.claimed ? [a, b] : [b, a]
      const claim = (x.claimed ? x : y) as { claimed: true; revision: number }
      const running = await other.keys.claim(key, 'fp', 'node-c')
      expect(running).toMatchObject({ claimed: false, record: { fingerprint: 'fp', node: x.claimed ? 'node-a' : 'node-b' } })
      expect(running.claimed === false && running.record.answer).toBeUndefined()
      const record = { fingerprint: 'fp', node: 'winner', answer: { status: 201, body: '{"threadId":"t"}' }, at: Date.now() }
      await winner.keys.record(key, claim.revision, record)
      const later = await other.keys.claim(key, 'fp', 'node-c')
      expect(later).toMatchObject({ claimed: false, record: { answer: { status: 201, body: '{"threadId":"t"}' } } })
    })

    it('a claim released lets the next claimer run; a running claim is taken over only at the revision read, and a stale record or release of it is refused', async () => {
      const key = `key-${++unique}`
      const first = await a.keys.claim(key, 'fp', 'node-a')
      expect(first.claimed).toBe(true)
      await a.keys.release(key, first.revision)
      const second = await b.keys.claim(key, 'fp', 'node-b')
      expect(second.claimed).toBe(true)
      // The claimer is gone: two nodes try to take the key over at the revision they read; one wins.
      const seen = await a.keys.claim(key, 'fp', 'node-a')
      expect(seen.claimed).toBe(false)
      const [x, y] = await Promise.all([a.keys.claim(key, 'fp', 'node-a', seen.revision), b.keys.claim(key, 'fp', 'node-c', seen.revision)])
      expect([x, y].filter((c) => c.claimed)).toHaveLength(1)
      // The first claimer's record under its old revision is refused: the key stays the new claimer's.
      await b.keys.record(key, second.revision, { fingerprint: 'fp', node: 'node-b', answer: { status: 202, body: 'stale' }, at: Date.now() })
      // So is its release, without a throw (a throw says the engine did not answer: the caller tries again).
      await b.keys.release(key, second.revision)
      const now = await a.keys.claim(key, 'fp', 'node-d')
      expect(now.claimed === false && now.record.answer).toBeUndefined()
      expect(now.claimed === false && now.record.node).toBe((x.claimed ? 'node-a' : 'node-c'))
    })

    it('a node whose lease lapsed hears it, and rejoins under a new id with the same name while its old life stays dead', async () => {
      let lost = 0
      a.membership.onLost(() => void lost++)
      const old = a.membership.self
      expect(a.membership.current()).toBe(true)
      await adapter.expire(a)
      await expect.poll(() => lost, { timeout: 5000 }).toBe(1)
      expect(a.membership.current()).toBe(false)
      await a.membership.rejoin()
      expect(a.membership.current()).toBe(true)
      const life = a.membership.self
      expect(life.name).toBe(old.name)
      expect(life.id).not.toBe(old.id)
      expect(await b.membership.isLive(life.id)).toBe(true)
      expect(await b.membership.isLive(old.id)).toBe(false)
      expect((await b.membership.live()).map((n) => n.id).sort()).toEqual([life.id, b.membership.self.id].sort())
      // The new life's lease is kept, and lost again like the first.
      await new Promise((resolve) => setTimeout(resolve, adapter.name.startsWith('nats') ? 1500 : 0))
      expect(await b.membership.isLive(life.id)).toBe(true)
      expect(lost).toBe(1)
      await adapter.expire(a)
      await expect.poll(() => lost, { timeout: 5000 }).toBe(2)
    })
  })
}

describe('the embedded adapter on the SQLite store', () => {
  it('keeps its thread logs, their checkpoints, index and keys in the store: a reopened store has them, and the store replays a key answered through the ports', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'threadhost-embedded-'))
    try {
      const first = SqliteThreadStore.open(dir).store
      const engine = new EmbeddedCluster(first).engine()
      await engine.membership.join()
      expect((await engine.membership.live()).map((n) => n.name)).toEqual(['local'])
      const p1 = await engine.logs.append('t', { kind: 'frames', frames: ['one'] }, 0)
      await engine.logs.append('t', { kind: 'prompt', op: 'accepted', messageId: 'm', text: 'hi' }, p1)
      await engine.logs.keepCheckpoint('t', { position: p1, state: 'folded' })
      await engine.index.put({ threadId: 't', title: 'kept', model: 'demo', createdAt: 1, updatedAt: 1, run: 0, seq: 0 })
      const claim = await engine.keys.claim('k', 'fp', engine.membership.self.id)
      // A running claim is no answer to the store's own lookup.
      expect(first.idempotent('k', 0)).toBeUndefined()
      if (!claim.claimed) throw new Error('the key was free')
      await engine.keys.record('k', claim.revision, { fingerprint: 'fp', node: engine.membership.self.id, answer: { status: 201, body: '{"threadId":"t"}' }, at: Date.now() })
      first.close()

      const again = SqliteThreadStore.open(dir).store
      const reopened = new EmbeddedCluster(again).engine()
      expect(await reopened.logs.last('t')).toBe(2)
      expect(await reopened.logs.checkpoint('t')).toEqual({ position: 1, state: 'folded' })
      const records: unknown[] = []
      reopened.logs.read('t', (r) => records.push(r), () => {}).stop()
      expect(records).toEqual([
        { kind: 'frames', frames: ['one'] },
        { kind: 'prompt', op: 'accepted', messageId: 'm', text: 'hi' },
      ])
      expect(again.threads().map((r) => r.title)).toEqual(['kept'])
      expect(again.idempotent('k', 0)).toMatchObject({ fingerprint: 'fp', status: 201, body: '{"threadId":"t"}' })
      expect(await reopened.keys.claim('k', 'fp', 'other')).toMatchObject({ claimed: false, record: { answer: { status: 201 } } })
      again.close()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe.skipIf(natsMissing !== undefined)(`a NATS lease written before record formats were numbered${natsMissing ? ` (${natsMissing})` : ''}`, () => {
  it('is listed as format 1, the format that version wrote', async () => {
    const server = await startNats()
    const { connectNats } = await import('../../src/host/cluster/nats.js')
    const engine = await connectNats({ servers: [server.url] }, 'new')
    const [{ connect }, { Kvm }] = await Promise.all([import('@nats-io/transport-node'), import('@nats-io/kv')])
    const nc = await connect({ servers: server.url })
    try {
      await engine.membership.join()
      // What a node of the version before wrote to join: its name alone.
      await (await new Kvm(nc).open('th_nodes')).create('old-0001', JSON.stringify({ name: 'old' }))
      const live = await engine.membership.live()
      expect(live.find((n) => n.name === 'old')).toEqual({ id: 'old-0001', name: 'old', format: 1, checkpointFormat: 1 })
    } finally {
      await nc.close()
      await engine.close()
      await server.stop()
    }
  })
})

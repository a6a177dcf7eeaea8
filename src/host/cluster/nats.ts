/**
 * The ports of port.ts on NATS JetStream (docs/flows/cluster.md, ../shared/reference/scale-out.md):
 *
 *   th_nodes    KV, TTL 3 s   node id → {name, format, checkpoint}; created to join, renewed every 250 ms by compare-and-set
 *   th_owners   KV            thread token → {node, name}; changed only by compare-and-set
 *   th_threads  KV            thread token → its row (the list every node shows)
 *   th_idem     KV, TTL 24 h  Idempotency-Key token → {fingerprint, node, answer?}; `create` claims
 *   THREADS     stream th.*   one subject per thread; every append names the subject's last sequence
 *   th_checkpoint KV + th_checkpoints objects   a thread log's newest checkpoint (nats-checkpoints.ts)
 *   cmd.<token> core subject  request/reply to the thread's owner; "no responders" = no owner (nats-commands.ts)
 *
 * While the connection is down (the engine restarting), every request fails at once with `EngineAway`
 * and so does one in flight when it drops: nats.js sends nothing queued during an outage, and an
 * answer due on the old connection never comes, so waiting for a timeout would only stall the retry.
 *
 * Loaded only by a dynamic import in cluster mode: the embedded default never loads a NATS module.
 * Everything used exists in nats-server 2.9 (Debian 12's), the version CI installs.
 */
import { randomUUID } from 'node:crypto'
import { connect } from '@nats-io/transport-node'
import { jetstream, jetstreamManager } from '@nats-io/jetstream'
import { Kvm, KvWatchInclude, type KV } from '@nats-io/kv'
import type { Log } from '../store/journal.js'
import { commandsOn } from './nats-commands.js'
import { connectionOptions, json, Link, parse, refused, RETRY_MS, sleep, type NatsAccess } from './nats-link.js'
import { logsOn } from './nats-logs.js'
import {
  EngineAway,
  KEY_TTL_MS,
  RECORD_FORMAT,
  threadOfToken,
  tokenOf,
  type ClusterEngine,
  type IndexRow,
  type IdempotencyKeys,
  type KeyRecord,
  type Membership,
  type NodeInfo,
  type OwnerDirectory,
  type OwnerRecord,
  type ThreadIndex,
} from './port.js'
import { CHECKPOINT_FORMAT } from './mirror-state.js'

/** A node's lease: gone this long after its last renewal. */
export const LEASE_TTL_MS = 3000
/**
 * Renewed this often; once one fails, at every tick. Often, so that an engine restart of about 1.5 s
 * fits in the self-fence margin whenever it starts (the lease's age when it does is at most this).
 */
const RENEW_EVERY_MS = 250
const TICK_MS = 100
/**
 * A node whose last acknowledged renewal was sent this long ago stops owning anything, before anyone
 * may take over at the TTL (counted from the send: the engine stamped the lease after that).
 */
export const SELF_FENCE_MS = 2000
/** How long a connection attempt waits for the server's answer. */
const CONNECT_TIMEOUT_MS = 5000
/** How long a renewal waits for the engine's answer before it is tried again. */
const RENEW_TIMEOUT_MS = 1000

/**
 * Every subject a node publishes or subscribes to: what its NATS user must be allowed where the server
 * restricts subjects (README, Cluster) — JetStream's API, the buckets' and the object store's subjects,
 * the thread logs, the command bus and the replies.
 */
export const NODE_SUBJECTS = ['$JS.API.>', '$JS.FC.>', '$KV.th_nodes.>', '$KV.th_owners.>', '$KV.th_threads.>', '$KV.th_idem.>', '$KV.th_checkpoint.>', '$O.th_checkpoints.>', 'th.>', 'cmd.>', 'all.>', '_INBOX.>']

/** The engine on NATS: also what ended its connection for good when `close` did not (see connectNats). */
export type NatsEngine = ClusterEngine & { readonly ended: Promise<string> }

/**
 * `spillDir`: a directory on the mount every node shares (the data dir's): where a command too large
 * for one message travels (nats-commands.ts). Without it such a command is refused (413).
 *
 * The connection is retried for ever, except when the server refuses to sign the node in twice in a row
 * (its credentials expired or revoked): nats.js then closes it for good, and `ended` says why — the node
 * can do nothing more, and stops rather than serve on without an engine.
 */
export async function connectNats(access: NatsAccess, name: string, log?: Log, options: { spillDir?: string } = {}): Promise<NatsEngine> {
  // Reconnection attempts every ~60 ms (a refused one costs nothing): each one saved is lease margin.
  // No async traces: by default every request (a command, each append, each key-value write) builds two
  // Error objects, their stacks taken, in case it fails; what fails here is told apart by its kind and code.
  // An attempt unanswered for 5 s is given up: one whose TLS handshake the server refused after the client
  // had ended it (a client certificate missing) gets no answer (nats.js waits its 20 s default), and the start says so.
  const nc = await connect({ ...connectionOptions(access), name: `threadhost-${name}`, maxReconnectAttempts: -1, reconnectTimeWait: 50, reconnectJitter: 20, noAsyncTraces: true, timeout: CONNECT_TIMEOUT_MS })
  let closing = false
  // The server's last word says why (nats.js closes with its own last error: a refused reconnection, say).
  let said: string | undefined
  const ended = nc.closed().then((error) => (closing ? new Promise<string>(() => {}) : (said ?? error?.message ?? 'the connection closed')))
  try {
    const jsm = await jetstreamManager(nc)
    const js = jetstream(nc)
    const link = new Link(nc, (error) => {
      said = error.message
      log?.('warn', `cluster: NATS says: ${said}`)
    })
    const kvm = new Kvm(nc)
    const logs = await logsOn(nc, js, jsm, link, log)
    const nodes = await kvm.create('th_nodes', { ttl: LEASE_TTL_MS, history: 1 })
    const owners = await kvm.create('th_owners', { history: 1 })
    const threads = await kvm.create('th_threads', { history: 1 })
    const idem = await kvm.create('th_idem', { ttl: KEY_TTL_MS, history: 1 })
    const membership = new NatsMembership(nodes, link, name, log)
    return {
      mode: 'nats',
      membership,
      owners: ownersOn(owners, link),
      logs,
      commands: commandsOn(nc, link, options.spillDir),
      index: indexOn(threads, link, log),
      keys: keysOn(idem),
      ended,
      close: async () => {
        closing = true
        await membership.leave().catch(() => {})
        await nc.drain().catch(() => nc.close())
      },
    }
  } catch (error) {
    // An account without JetStream, or without the right to make the buckets: nothing is left open.
    closing = true
    await nc.close().catch(() => {})
    throw error
  }
}


class NatsMembership implements Membership {
  #self: NodeInfo
  #revision = 0
  /** When the last renewal the engine acknowledged was sent. */
  #renewedAt = 0
  #renewing = false
  /** A renewal failed since the last one that went through. */
  #failed = false
  #timer?: ReturnType<typeof setInterval>
  #lost = false
  #left = false
  readonly #listeners: (() => void)[] = []

  constructor(
    private readonly kv: KV,
    private readonly link: Link,
    readonly name: string,
    private readonly log?: Log,
  ) {
    this.#self = this.#newLife()
  }

  get self(): NodeInfo {
    return this.#self
  }

  #newLife(): NodeInfo {
    return { id: `${tokenOf(this.name)}-${randomUUID().slice(0, 8)}`, name: this.name, format: RECORD_FORMAT, checkpointFormat: CHECKPOINT_FORMAT }
  }

  /** What the lease holds: the node's name and the formats it writes. */
  #record(): string {
    return json({ name: this.name, format: RECORD_FORMAT, checkpoint: CHECKPOINT_FORMAT })
  }

  async join(): Promise<void> {
    const sentAt = Date.now()
    const value = this.#record()
    this.#revision = await this.link.call(() => this.kv.create(this.#self.id, value)).catch(async (error: unknown) => {
      // A create whose answer was lost may have landed: the id is this life's alone, so a lease under it is ours.
      const entry = refused(error) ? await this.link.call(() => this.kv.get(this.#self.id)) : null
      if (entry?.operation === 'PUT') return entry.revision
      throw error
    })
    this.#renewedAt = sentAt
    this.#lost = false
    if (!this.#timer) {
      this.#timer = setInterval(() => void this.#tick(), TICK_MS)
      this.#timer.unref()
      // Back from an outage, the lease is renewed at once rather than at the next tick.
      this.link.onReconnect(() => void this.#tick())
    }
  }

  async #tick(): Promise<void> {
    if (this.#lost || this.#left) return
    const age = Date.now() - this.#renewedAt
    if (age > SELF_FENCE_MS) return this.#lose(`not renewed for ${age} ms`)
    if (age < RENEW_EVERY_MS || this.#renewing) return
    this.#renewing = true
    const sentAt = Date.now()
    const life = this.#self.id
    try {
      const revision = await this.link.call(() => this.kv.update(life, this.#record(), this.#revision, RENEW_TIMEOUT_MS))
      if (life !== this.#self.id || this.#lost) return
      this.#revision = revision
      if (this.#failed) this.log?.('warn', `cluster: node ${life} renewed its lease again; it was ${sentAt - this.#renewedAt} ms old (self-fence at ${SELF_FENCE_MS} ms)`)
      this.#failed = false
      this.#renewedAt = sentAt
    } catch (error) {
      this.#failed = true
      if (!refused(error) || life !== this.#self.id) return
      // Refused: the lease lapsed, or a renewal whose answer was lost did land (then the key is still ours).
      const entry = await this.link.call(() => this.kv.get(life)).catch(() => undefined)
      if (entry === undefined || life !== this.#self.id) return
      if (entry?.operation === 'PUT') this.#revision = entry.revision
      else this.#lose('renewal refused: the lease had lapsed')
    } finally {
      this.#renewing = false
    }
  }

  #lose(why: string): void {
    if (this.#lost) return
    this.#lost = true
    this.log?.('error', `cluster: node ${this.#self.id} lost its lease (${why}); it stops owning threads and rejoins`)
    for (const listener of this.#listeners) listener()
  }

  onLost(listener: () => void): void {
    this.#listeners.push(listener)
  }

  current(): boolean {
    return !this.#lost && this.#renewedAt > 0 && Date.now() - this.#renewedAt <= SELF_FENCE_MS
  }

  async rejoin(): Promise<void> {
    const old = this.#self.id
    this.#self = this.#newLife()
    while (!this.#left) {
      try {
        await this.join()
        break
      } catch {
        await sleep(RETRY_MS)
      }
    }
    // The old life's lease, if it is still there, ends now: its threads need not wait for the TTL. (Its
    // key is this node's alone, and a renewal of it still in flight is refused after this.)
    await this.link.call(() => this.kv.delete(old)).catch(() => {})
    this.log?.('warn', `cluster: node ${this.name} rejoined as ${this.#self.id} (was ${old})`)
  }

  async live(): Promise<NodeInfo[]> {
    return this.link.call(async () => {
      const out: NodeInfo[] = []
      for await (const id of await this.kv.keys()) {
        const entry = await this.kv.get(id)
        if (entry?.operation !== 'PUT') continue
        // A lease written before formats were numbered is format 1's.
        const { name, format = 1, checkpoint = 1 } = parse<{ name: string; format?: number; checkpoint?: number }>(entry.value)
        out.push({ id, name, format, checkpointFormat: checkpoint })
      }
      return out
    })
  }

  async isLive(nodeId: string): Promise<boolean> {
    const entry = await this.link.call(() => this.kv.get(nodeId))
    return entry !== null && entry.operation === 'PUT'
  }

  async leave(): Promise<void> {
    this.#left = true
    clearInterval(this.#timer)
    if (!this.#lost) await this.link.call(() => this.kv.delete(this.#self.id)).catch(() => {})
    this.#lost = true
  }
}

function ownersOn(kv: KV, link: Link): OwnerDirectory {
  return {
    async owner(threadId) {
      const entry = await link.call(() => kv.get(tokenOf(threadId)))
      return entry && entry.operation === 'PUT' ? { record: parse<OwnerRecord>(entry.value), revision: entry.revision } : undefined
    },
    async acquire(threadId, record, expected) {
      const key = tokenOf(threadId)
      try {
        // A released record is a delete marker: taking it back is an update at the marker's revision.
        const revision = await link.call(() => (expected === undefined ? kv.create(key, json(record)) : kv.update(key, json(record), expected)))
        return { threadId, revision }
      } catch (error) {
        if (refused(error)) return undefined
        throw error
      }
    },
    async release({ threadId, revision }) {
      try {
        await link.call(() => kv.delete(tokenOf(threadId), { previousSeq: revision }))
      } catch (error) {
        // Refused: the record is another node's now, nothing of this node's is left to give back.
        // Anything else (a timeout, the engine away) leaves it in place: the caller hears of it.
        if (!refused(error)) throw error
      }
    },
    list: () =>
      link.call(async () => {
        const out = new Map<string, { record: OwnerRecord; revision: number }>()
        for await (const key of await kv.keys()) {
          const entry = await kv.get(key)
          if (entry && entry.operation === 'PUT') out.set(threadOfToken(key), { record: parse<OwnerRecord>(entry.value), revision: entry.revision })
        }
        return out
      }),
  }
}

function indexOn(kv: KV, link: Link, log?: Log): ThreadIndex {
  // A row written while the engine is away is kept and written once it is back (not dropped: the other
  // nodes would show the old one until the thread's next change). Per thread only the newest change
  // waits, so a retried older row can never land over a newer one — and none whose writer has lost the
  // thread since (`still`): the next owner's row is newer than it.
  // `done` is told the revision the change was written at (a newer row written in its place: that one's), or
  // undefined (dropped, or a delete went in its place: KV deletes answer no revision).
  type Change = { change: IndexRow | 'delete'; done: ((revision?: number) => void)[]; still?: () => boolean }
  const waiting = new Map<string, Change>()
  /** Threads whose writer loop runs. */
  const busy = new Set<string>()
  const write = async (key: string) => {
    for (let failing = false; ; ) {
      const next = waiting.get(key)
      if (!next) return void busy.delete(key)
      waiting.delete(key)
      if (next.still?.() === false) {
        for (const done of next.done) done()
        continue
      }
      try {
        const { change } = next
        const revision = await link.call(async () => (change === 'delete' ? void (await kv.delete(key)) : await kv.put(key, json(change))))
        for (const done of next.done) done(revision)
        failing = false
      } catch (error) {
        if (link.closed) {
          for (const done of next.done) done()
          continue
        }
        if (!failing && !(error instanceof EngineAway)) log?.('warn', `cluster: index write failed (${String(error)}); retrying`)
        failing = true
        // A newer change that came meanwhile replaces this one and answers its callers too.
        const newer = waiting.get(key)
        waiting.set(key, newer ? { ...newer, done: [...next.done, ...newer.done] } : next)
        await sleep(RETRY_MS)
      }
    }
  }
  const change = (threadId: string, value: IndexRow | 'delete', still?: () => boolean) =>
    new Promise<number | undefined>((resolve) => {
      const key = tokenOf(threadId)
      const pending = waiting.get(key)
      waiting.set(key, { change: value, done: [...(pending?.done ?? []), resolve], still })
      if (busy.has(key)) return
      busy.add(key)
      // Written from the next turn: the request that changed the row (a prompt's admission) answers first,
      // not after the engine's client has encoded and sent the row — and changes made in one turn go as one.
      setImmediate(() => void write(key))
    })
  return {
    put: (row: IndexRow, still?: () => boolean) => change(row.threadId, row, still),
    delete: async (threadId) => void (await change(threadId, 'delete')),
    async get(threadId) {
      const entry = await link.call(() => kv.get(tokenOf(threadId)))
      return entry?.operation === 'PUT' ? { row: parse<IndexRow>(entry.value), revision: entry.revision } : undefined
    },
    async watch(onPut, onDelete) {
      let stopped = false
      let watcher: { stop(): void } | undefined
      const follow = async (include: KvWatchInclude) => {
        const entries = await kv.watch({ include })
        watcher = entries
        if (stopped) return entries.stop()
        void (async () => {
          for await (const e of entries) {
            if (e.operation === 'PUT') onPut(parse<IndexRow>(e.value), e.revision)
            else onDelete(threadOfToken(e.key), e.revision)
          }
        })()
      }
      await follow(KvWatchInclude.UpdatesOnly)
      for await (const key of await kv.keys()) {
        const entry = await kv.get(key)
        if (entry && entry.operation === 'PUT') onPut(parse<IndexRow>(entry.value), entry.revision)
      }
      // As the thread log's reader: a watcher of the old connection may stall, so each reconnection
      // watches anew from every key's last value (a delete's marker included), which catches up on the outage.
      const unhook = link.onReconnect(() => {
        watcher?.stop()
        void (async () => {
          while (!stopped) {
            try {
              return await follow(KvWatchInclude.LastValue)
            } catch (error) {
              if (!(error instanceof EngineAway)) log?.('warn', `cluster: watching the threads index failed (${String(error)}); retrying`)
              await sleep(RETRY_MS)
            }
          }
        })()
      })
      return {
        stop: () => {
          stopped = true
          unhook()
          watcher?.stop()
        },
      }
    },
  }
}

function keysOn(kv: KV): IdempotencyKeys {
  return {
    async claim(key, fingerprint, node, expected) {
      const token = tokenOf(key)
      const value = json({ fingerprint, node, at: Date.now() } satisfies KeyRecord)
      // A record gone between the refusal and the read (released, or past its TTL) is claimed afresh.
      for (let attempt = 0; ; attempt++) {
        try {
          const revision = expected === undefined ? await kv.create(token, value) : await kv.update(token, value, expected)
          return { claimed: true, revision }
        } catch (error) {
          if (!refused(error) || attempt >= 10) throw error
        }
        const entry = await kv.get(token)
        if (entry && entry.operation === 'PUT') return { claimed: false, record: parse<KeyRecord>(entry.value), revision: entry.revision }
        expected = undefined
      }
    },
    async record(key, revision, record) {
      await kv.update(tokenOf(key), json(record), revision).catch((error: unknown) => {
        if (!refused(error)) throw error
      })
    },
    async release(key, revision) {
      // Refused: the key moved on (recorded, or taken over), nothing of this claim is left to give up.
      await kv.delete(tokenOf(key), { previousSeq: revision }).catch((error: unknown) => {
        if (!refused(error)) throw error
      })
    },
  }
}

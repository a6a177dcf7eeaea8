/**
 * The ports of port.ts on NATS JetStream (docs/flows/cluster.md, ../shared/reference/scale-out.md):
 *
 *   th_nodes    KV, TTL 3 s   node id → {name}; created to join, renewed every second by compare-and-set
 *   th_owners   KV            thread token → {node, name}; changed only by compare-and-set
 *   th_threads  KV            thread token → its row (the list every node shows)
 *   th_idem     KV, TTL 24 h  Idempotency-Key token → {fingerprint, node, answer?}; `create` claims
 *   THREADS     stream th.*   one subject per thread; every append names the subject's last sequence
 *   cmd.<token> core subject  request/reply to the thread's owner; "no responders" = no owner
 *
 * Loaded only by a dynamic import in cluster mode: the embedded default never loads a NATS module.
 * Everything used exists in nats-server 2.9 (Debian 12's), the version CI installs.
 */
import { randomUUID } from 'node:crypto'
import { connect, type NatsConnection, type Subscription } from '@nats-io/transport-node'
import { DeliverPolicy, jetstream, jetstreamManager, JetStreamApiError, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream'
import { Kvm, KvWatchInclude, type KV } from '@nats-io/kv'
import type { Log } from '../store/journal.js'
import type { ThreadRow } from '../store/port.js'
import {
  Fenced,
  KEY_TTL_MS,
  threadOfToken,
  tokenOf,
  type ClusterEngine,
  type CommandBus,
  type CommandReply,
  type IdempotencyKeys,
  type KeyRecord,
  type Membership,
  type NodeInfo,
  type OwnerDirectory,
  type OwnerRecord,
  type ThreadIndex,
  type ThreadLogs,
  type ThreadRecord,
} from './port.js'

/** A node's lease: gone this long after its last renewal. */
export const LEASE_TTL_MS = 3000
const RENEW_EVERY_MS = 1000
/** A node that could not renew for this long stops owning anything, before anyone may take over at the TTL. */
export const SELF_FENCE_MS = 2000
const STREAM = 'THREADS'
/** JetStream's "wrong last sequence". */
const WRONG_LAST_SEQUENCE = 10071

const json = (value: unknown) => JSON.stringify(value)
const parse = <T>(bytes: Uint8Array): T => JSON.parse(new TextDecoder().decode(bytes)) as T

export async function connectNats(url: string, name: string, log?: Log): Promise<ClusterEngine> {
  const nc = await connect({ servers: url, name: `threadhost-${name}`, maxReconnectAttempts: -1, reconnectTimeWait: 100 })
  const jsm = await jetstreamManager(nc)
  const js = jetstream(nc)
  try {
    await jsm.streams.info(STREAM)
  } catch {
    await jsm.streams.add({ name: STREAM, subjects: ['th.>'], allow_direct: true }).catch(async (error: unknown) => {
      // Another node made it first.
      if (!(await jsm.streams.info(STREAM).catch(() => undefined))) throw error
    })
  }
  const kvm = new Kvm(nc)
  const nodes = await kvm.create('th_nodes', { ttl: LEASE_TTL_MS, history: 1 })
  const owners = await kvm.create('th_owners', { history: 1 })
  const threads = await kvm.create('th_threads', { history: 1 })
  const idem = await kvm.create('th_idem', { ttl: KEY_TTL_MS, history: 1 })
  const membership = new NatsMembership(nodes, { id: `${tokenOf(name)}-${randomUUID().slice(0, 8)}`, name }, log)
  return {
    mode: 'nats',
    membership,
    owners: ownersOn(owners),
    logs: logsOn(js, jsm),
    commands: commandsOn(nc),
    index: indexOn(threads),
    keys: keysOn(idem),
    close: async () => {
      await membership.leave().catch(() => {})
      await nc.drain().catch(() => nc.close())
    },
  }
}

class NatsMembership implements Membership {
  #revision = 0
  #timer?: ReturnType<typeof setInterval>
  #lastRenewed = 0
  #lost = false
  readonly #listeners: (() => void)[] = []

  constructor(
    private readonly kv: KV,
    readonly self: NodeInfo,
    private readonly log?: Log,
  ) {}

  async join(): Promise<void> {
    this.#revision = await this.kv.create(this.self.id, json({ name: this.self.name }))
    this.#lastRenewed = Date.now()
    this.#timer = setInterval(() => void this.#renew(), RENEW_EVERY_MS / 4)
    this.#timer.unref()
  }

  /** Renewed every second; a failed renewal is tried again at the next tick; refused or late past SELF_FENCE_MS, the lease is lost. */
  async #renew(): Promise<void> {
    if (this.#lost) return
    const now = Date.now()
    if (now - this.#lastRenewed > SELF_FENCE_MS) return this.#lose(`not renewed for ${now - this.#lastRenewed} ms`)
    if (now - this.#lastRenewed < RENEW_EVERY_MS) return
    try {
      this.#revision = await this.kv.update(this.self.id, json({ name: this.self.name }), this.#revision)
      this.#lastRenewed = Date.now()
    } catch (error) {
      if (error instanceof JetStreamApiError && error.code === WRONG_LAST_SEQUENCE) this.#lose('renewal refused: the lease had lapsed')
    }
  }

  #lose(why: string): void {
    if (this.#lost) return
    this.#lost = true
    clearInterval(this.#timer)
    this.log?.('error', `cluster: node ${this.self.id} lost its lease (${why}); it stops owning threads`)
    for (const listener of this.#listeners) listener()
  }

  onLost(listener: () => void): void {
    this.#listeners.push(listener)
  }

  current(): boolean {
    return !this.#lost && this.#lastRenewed > 0 && Date.now() - this.#lastRenewed <= SELF_FENCE_MS
  }

  async live(): Promise<NodeInfo[]> {
    const out: NodeInfo[] = []
    for await (const id of await this.kv.keys()) {
      const entry = await this.kv.get(id)
      if (entry && entry.operation === 'PUT') out.push({ id, name: parse<{ name: string }>(entry.value).name })
    }
    return out
  }

  async isLive(nodeId: string): Promise<boolean> {
    const entry = await this.kv.get(nodeId)
    return entry !== null && entry.operation === 'PUT'
  }

  async leave(): Promise<void> {
    clearInterval(this.#timer)
    if (!this.#lost) await this.kv.delete(this.self.id).catch(() => {})
    this.#lost = true
  }
}

function ownersOn(kv: KV): OwnerDirectory {
  const conflict = (error: unknown) => error instanceof JetStreamApiError && error.code === WRONG_LAST_SEQUENCE
  return {
    async owner(threadId) {
      const entry = await kv.get(tokenOf(threadId))
      return entry && entry.operation === 'PUT' ? { record: parse<OwnerRecord>(entry.value), revision: entry.revision } : undefined
    },
    async acquire(threadId, record, expected) {
      const key = tokenOf(threadId)
      try {
        // A released record is a delete marker: taking it back is an update at the marker's revision.
        const revision = expected === undefined ? await kv.create(key, json(record)) : await kv.update(key, json(record), expected)
        return { threadId, revision }
      } catch (error) {
        if (conflict(error)) return undefined
        throw error
      }
    },
    async release({ threadId, revision }) {
      await kv.delete(tokenOf(threadId), { previousSeq: revision }).catch(() => {})
    },
    async list() {
      const out = new Map<string, { record: OwnerRecord; revision: number }>()
      for await (const key of await kv.keys()) {
        const entry = await kv.get(key)
        if (entry && entry.operation === 'PUT') out.set(threadOfToken(key), { record: parse<OwnerRecord>(entry.value), revision: entry.revision })
      }
      return out
    },
  }
}

function logsOn(js: JetStreamClient, jsm: JetStreamManager): ThreadLogs {
  const subject = (threadId: string) => `th.${tokenOf(threadId)}`
  const last = async (threadId: string) => (await jsm.direct.getMessage(STREAM, { last_by_subj: subject(threadId) }))?.seq ?? 0
  return {
    last,
    async append(threadId, record, expected) {
      try {
        const ack = await js.publish(subject(threadId), json(record), { expect: { lastSubjectSequence: expected } })
        return ack.seq
      } catch (error) {
        if (error instanceof JetStreamApiError && error.code === WRONG_LAST_SEQUENCE) throw new Fenced(threadId, error.message)
        throw error
      }
    },
    read(threadId, onRecord, caughtUp) {
      let stopped = false
      let stop = () => {}
      void (async () => {
        const end = await last(threadId)
        let reported = false
        const report = () => {
          if (!reported) (reported = true), caughtUp()
        }
        if (end === 0) report()
        const consumer = await js.consumers.get(STREAM, { filter_subjects: subject(threadId), deliver_policy: DeliverPolicy.All })
        const messages = await consumer.consume()
        stop = () => void messages.stop()
        if (stopped) return stop()
        for await (const m of messages) {
          onRecord(parse<ThreadRecord>(m.data), m.seq)
          if (m.seq >= end) report()
        }
      })()
      return {
        stop: () => {
          stopped = true
          stop()
        },
      }
    },
  }
}

function commandsOn(nc: NatsConnection): CommandBus {
  const subject = (threadId: string) => `cmd.${tokenOf(threadId)}`
  return {
    async serve(threadId, handler) {
      const sub: Subscription = nc.subscribe(subject(threadId), {
        callback: (error, msg) => {
          if (error) return
          void handler(parse(msg.data)).then(
            (reply) => msg.respond(json(reply)),
            (failure: unknown) => msg.respond(json({ status: 500, headers: {}, body: json({ error: String(failure) }) } satisfies CommandReply)),
          )
        },
      })
      // The subscription reaches the server asynchronously: until it has, a request finds no responders.
      await nc.flush()
      return () => sub.unsubscribe()
    },
    async send(threadId, request, timeoutMs) {
      try {
        const reply = await nc.request(subject(threadId), json(request), { timeout: timeoutMs })
        return parse<CommandReply>(reply.data)
      } catch (error) {
        const e = error as { isNoResponders?: () => boolean; name?: string; message?: string }
        if (e.isNoResponders?.() || /no responders/i.test(e.message ?? '')) return 'no-owner'
        return 'timeout'
      }
    },
  }
}

function indexOn(kv: KV): ThreadIndex {
  return {
    put: async (row: ThreadRow) => void (await kv.put(tokenOf(row.threadId), json(row))),
    delete: async (threadId) => void (await kv.delete(tokenOf(threadId))),
    async watch(onPut, onDelete) {
      const watcher = await kv.watch({ include: KvWatchInclude.UpdatesOnly })
      void (async () => {
        for await (const e of watcher) {
          if (e.operation === 'PUT') onPut(parse<ThreadRow>(e.value))
          else onDelete(threadOfToken(e.key))
        }
      })()
      for await (const key of await kv.keys()) {
        const entry = await kv.get(key)
        if (entry && entry.operation === 'PUT') onPut(parse<ThreadRow>(entry.value))
      }
      return { stop: () => watcher.stop() }
    },
  }
}

function keysOn(kv: KV): IdempotencyKeys {
  const conflict = (error: unknown) => error instanceof JetStreamApiError && error.code === WRONG_LAST_SEQUENCE
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
          if (!conflict(error) || attempt >= 10) throw error
        }
        const entry = await kv.get(token)
        if (entry && entry.operation === 'PUT') return { claimed: false, record: parse<KeyRecord>(entry.value), revision: entry.revision }
        expected = undefined
      }
    },
    async record(key, revision, record) {
      await kv.update(tokenOf(key), json(record), revision).catch((error: unknown) => {
        if (!conflict(error)) throw error
      })
    },
    async release(key, revision) {
      await kv.delete(tokenOf(key), { previousSeq: revision }).catch(() => {})
    },
  }
}

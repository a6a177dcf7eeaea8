/**
 * The ports of port.ts in one process: the same rules as the engine's adapter (compare-and-set
 * owners, appends conditional on the last position, no-owner when nobody serves a thread), held to
 * them by the same contract tests (test/host/cluster-contract.test.ts). Several nodes share one
 * `MemoryCluster`; `expire` ends a node's lease as a dead node's lapses.
 */
import type { ThreadRow } from '../store/port.js'
import { LocalMembers, localCommandBus, localIndex, localLogs, localOwners } from './in-process.js'
import {
  KEY_TTL_MS,
  type Checkpoint,
  type ClusterEngine,
  type IdempotencyKeys,
  type KeyRecord,
  type OwnerRecord,
  type ThreadRecord,
} from './port.js'

export class MemoryCluster {
  readonly members = new LocalMembers()
  readonly owners = new Map<string, { record: OwnerRecord; revision: number }>()
  readonly #owners = localOwners(this.owners)
  #revision = 0
  /** Each thread's records still kept, in order: the first is at position `forgotten + 1`. */
  readonly logs = new Map<string, ThreadRecord[]>()
  /** How many of a thread's first records were removed (a delete's, or trimmed below a checkpoint). */
  readonly #forgotten = new Map<string, number>()
  readonly checkpoints = new Map<string, Checkpoint>()
  readonly #last = (threadId: string) => (this.#forgotten.get(threadId) ?? 0) + (this.logs.get(threadId)?.length ?? 0)
  readonly #logs = localLogs({
    last: (threadId) => this.#last(threadId),
    append: (threadId, record, expected) => {
      const last = this.#last(threadId)
      if (last !== expected) return { last }
      const log = this.logs.get(threadId) ?? []
      log.push(record)
      this.logs.set(threadId, log)
      return last + 1
    },
    since: (threadId, after) => {
      const first = (this.#forgotten.get(threadId) ?? 0) + 1
      return (this.logs.get(threadId) ?? []).slice(Math.max(0, after + 1 - first)).map((record, i) => ({ record, position: Math.max(after + 1, first) + i }))
    },
    checkpoint: (threadId) => this.checkpoints.get(threadId),
    keepCheckpoint: (threadId, checkpoint) => {
      const replaced = this.checkpoints.get(threadId)
      if (replaced && replaced.position >= checkpoint.position) return
      this.checkpoints.set(threadId, checkpoint)
      if (replaced) this.#drop(threadId, replaced.position + 1)
    },
    forget: (threadId, before) => {
      this.#drop(threadId, before)
      if ((this.checkpoints.get(threadId)?.position ?? before) < before) this.checkpoints.delete(threadId)
    },
  })
  readonly #commands = localCommandBus()
  readonly rows = new Map<string, ThreadRow>()
  readonly #index = localIndex({ put: (row) => void this.rows.set(row.threadId, row), delete: (id) => void this.rows.delete(id), all: () => this.rows.values(), get: (id) => this.rows.get(id) })
  readonly keys = new Map<string, { record: KeyRecord; revision: number }>()

  /** Removes the thread's records before position `before`. */
  #drop(threadId: string, before: number): void {
    const forgotten = this.#forgotten.get(threadId) ?? 0
    const drop = Math.min(Math.max(0, before - 1 - forgotten), this.logs.get(threadId)?.length ?? 0)
    this.logs.get(threadId)?.splice(0, drop)
    this.#forgotten.set(threadId, forgotten + drop)
  }

  /** A node's lease ends (as a dead node's would): it hears it, and the others see it gone. */
  expire(nodeId: string): void {
    this.members.expire(nodeId)
  }

  /** `format`, `checkpointFormat`: the formats the node writes (RECORD_FORMAT and CHECKPOINT_FORMAT unless a test's node is of another version). */
  engine(name: string, format?: number, checkpointFormat?: number): ClusterEngine {
    const membership = this.members.membership(name, format, checkpointFormat)
    const cluster = this
    return {
      mode: 'memory',
      membership,
      owners: cluster.#owners,
      logs: cluster.#logs,
      commands: cluster.#commands,
      index: cluster.#index,
      keys: cluster.#keys(),
      close: async () => membership.close(),
    }
  }

  #keys(): IdempotencyKeys {
    const current = (key: string) => {
      const kept = this.keys.get(key)
      if (kept && kept.record.at < Date.now() - KEY_TTL_MS) this.keys.delete(key)
      return this.keys.get(key)
    }
    return {
      claim: async (key, fingerprint, node, expected) => {
        const kept = current(key)
        if (kept && kept.revision !== expected) return { claimed: false, record: kept.record, revision: kept.revision }
        const revision = ++this.#revision
        this.keys.set(key, { record: { fingerprint, node, at: Date.now() }, revision })
        return { claimed: true, revision }
      },
      record: async (key, revision, record) => {
        if (current(key)?.revision === revision) this.keys.set(key, { record, revision: ++this.#revision })
      },
      release: async (key, revision) => {
        if (current(key)?.revision === revision) this.keys.delete(key)
      },
    }
  }
}

/**
 * The ports of port.ts in one process: the same rules as the engine's adapter (compare-and-set
 * owners, appends conditional on the last position, no-owner when nobody serves a thread), held to
 * them by the same contract tests (test/host/cluster-contract.test.ts). Several nodes share one
 * `MemoryCluster`; `expire` ends a node's lease as a dead node's lapses.
 */
import type { ThreadRow } from '../store/port.js'
import { LocalMembers, localCommandBus, localIndex } from './in-process.js'
import {
  Fenced,
  KEY_TTL_MS,
  type ClusterEngine,
  type IdempotencyKeys,
  type KeyRecord,
  type OwnerRecord,
  type ThreadRecord,
} from './port.js'

export class MemoryCluster {
  readonly members = new LocalMembers()
  readonly owners = new Map<string, { record: OwnerRecord; revision: number }>()
  #revision = 0
  readonly logs = new Map<string, ThreadRecord[]>()
  /** Append ids → the position they landed at. */
  readonly #appended = new Map<string, number>()
  readonly #readers = new Map<string, Set<(record: ThreadRecord, position: number) => void>>()
  readonly #commands = localCommandBus()
  readonly rows = new Map<string, ThreadRow>()
  readonly #index = localIndex({ put: (row) => void this.rows.set(row.threadId, row), delete: (id) => void this.rows.delete(id), all: () => this.rows.values() })
  readonly keys = new Map<string, { record: KeyRecord; revision: number }>()

  /** A node's lease ends (as a dead node's would): it hears it, and the others see it gone. */
  expire(nodeId: string): void {
    this.members.expire(nodeId)
  }

  engine(name: string): ClusterEngine {
    const membership = this.members.membership(name)
    const cluster = this
    return {
      mode: 'memory',
      membership,
      owners: {
        owner: async (threadId) => cluster.owners.get(threadId),
        acquire: async (threadId, record, expected) => {
          const current = cluster.owners.get(threadId)
          if ((current?.revision ?? undefined) !== expected) return undefined
          const revision = ++cluster.#revision
          cluster.owners.set(threadId, { record, revision })
          return { threadId, revision }
        },
        release: async ({ threadId, revision }) => {
          if (cluster.owners.get(threadId)?.revision === revision) cluster.owners.delete(threadId)
        },
        list: async () => new Map(cluster.owners),
      },
      logs: {
        last: async (threadId) => cluster.logs.get(threadId)?.length ?? 0,
        append: async (threadId, record, expected, id) => {
          const log = cluster.logs.get(threadId) ?? []
          // A retry of an append that landed: its position, as the engine's duplicate window answers.
          const landed = id === undefined ? undefined : cluster.#appended.get(id)
          if (landed !== undefined) return landed
          if (log.length !== expected) throw new Fenced(threadId, `wrong last sequence: ${log.length}`)
          log.push(record)
          cluster.logs.set(threadId, log)
          const position = log.length
          if (id !== undefined) cluster.#appended.set(id, position)
          for (const reader of cluster.#readers.get(threadId) ?? []) reader(record, position)
          return position
        },
        read: (threadId, onRecord, caughtUp) => {
          const log = cluster.logs.get(threadId) ?? []
          log.forEach((record, i) => onRecord(record, i + 1))
          caughtUp()
          const readers = cluster.#readers.get(threadId) ?? new Set()
          cluster.#readers.set(threadId, readers)
          readers.add(onRecord)
          return { stop: () => void readers.delete(onRecord) }
        },
      },
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

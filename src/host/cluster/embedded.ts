/**
 * The ports of port.ts for one process on its own SQLite store (threadhost.db): what a host without
 * `--cluster` is, said in the cluster's terms and held to the same contract tests as the engine's
 * adapter (test/host/cluster-contract.test.ts).
 *
 * - membership: the nodes of this process (one, in a host; the contract test joins two);
 * - owners: compare-and-set in this process — nobody else can own a thread, so a lone node always wins;
 * - thread logs: the store's `thread_log` table, each append one commit conditional on the last position;
 * - command bus: a function call to the handler serving the thread;
 * - index: the store's `threads` table, the same rows the registry lists;
 * - keys: the store's `idempotency` table, the same answers the write guards replay.
 *
 * The single-node host does not run through these ports (docs/flows/cluster.md says why: its hot path
 * stays the synchronous store); the index and the keys are the same tables and the same code it uses.
 */
import type { SqliteThreadStore } from '../store/sqlite.js'
import {
  Fenced,
  KEY_TTL_MS,
  type ClusterEngine,
  type IdempotencyKeys,
  type KeyRecord,
  type OwnerRecord,
  type ThreadRecord,
} from './port.js'
import { LocalMembers, localCommandBus, localIndex } from './in-process.js'

export class EmbeddedCluster {
  readonly members = new LocalMembers()
  /** Appends by id (this process's life): what a retried append resolves to. */
  readonly #appended = new Map<string, number>()
  readonly #owners = new Map<string, { record: OwnerRecord; revision: number }>()
  #revision = 0
  readonly #readers = new Map<string, Set<(record: ThreadRecord, position: number) => void>>()
  readonly #commands = localCommandBus()
  readonly #index = localIndex({ put: (row) => this.store.putThread(row), delete: (id) => this.store.deleteThread(id), all: () => this.store.threads() })
  readonly #tables: ReturnType<SqliteThreadStore['clusterTables']>

  constructor(private readonly store: SqliteThreadStore) {
    this.#tables = store.clusterTables()
  }

  engine(name = 'local'): ClusterEngine {
    const membership = this.members.membership(name)
    const { log } = this.#tables
    return {
      mode: 'embedded',
      membership,
      owners: {
        owner: async (threadId) => this.#owners.get(threadId),
        acquire: async (threadId, record, expected) => {
          if (this.#owners.get(threadId)?.revision !== expected) return undefined
          const revision = ++this.#revision
          this.#owners.set(threadId, { record, revision })
          return { threadId, revision }
        },
        release: async ({ threadId, revision }) => {
          if (this.#owners.get(threadId)?.revision === revision) this.#owners.delete(threadId)
        },
        list: async () => new Map(this.#owners),
      },
      logs: {
        last: async (threadId) => log.last(threadId),
        append: async (threadId, record, expected, id) => {
          // A retry of an append that landed: its position, as the engine's duplicate window answers.
          const landed = id === undefined ? undefined : this.#appended.get(id)
          if (landed !== undefined) return landed
          const position = log.append(threadId, JSON.stringify(record), expected)
          if (typeof position !== 'number') throw new Fenced(threadId, `wrong last sequence: ${position.last}`)
          if (id !== undefined) this.#appended.set(id, position)
          for (const reader of this.#readers.get(threadId) ?? []) reader(record, position)
          return position
        },
        read: (threadId, onRecord, caughtUp) => {
          for (const { position, record } of log.since(threadId, 0)) onRecord(JSON.parse(record) as ThreadRecord, position)
          caughtUp()
          const readers = this.#readers.get(threadId) ?? new Set()
          this.#readers.set(threadId, readers)
          readers.add(onRecord)
          return { stop: () => void readers.delete(onRecord) }
        },
      },
      commands: this.#commands,
      index: this.#index,
      keys: this.#keys(),
      close: async () => membership.close(),
    }
  }

  #keys(): IdempotencyKeys {
    const { keys } = this.#tables
    const since = () => Date.now() - KEY_TTL_MS
    const recordOf = (row: NonNullable<ReturnType<typeof keys.row>>): KeyRecord =>
      row.status < 0
        ? { fingerprint: row.fingerprint, node: (JSON.parse(row.body) as { node: string }).node, at: row.at }
        : // An answer (or a claim made with a prompt's admission: its answer is the journaled prompt's receipt, read by the write guards).
          { fingerprint: row.fingerprint, node: '', ...(row.status > 0 ? { answer: { status: row.status, body: row.body } } : {}), at: row.at }
    return {
      claim: async (key, fingerprint, node, expected) => {
        for (;;) {
          const revision = keys.claimRunning(key, fingerprint, node, Date.now(), since(), expected)
          if (revision !== undefined) return { claimed: true, revision }
          const row = keys.row(key, since())
          if (row) return { claimed: false, record: recordOf(row), revision: row.at }
          // Gone between the two reads (released, or past its TTL): claimed afresh.
          expected = undefined
        }
      },
      record: async (key, revision, record) => {
        if (record.answer) keys.answerAt(key, revision, { fingerprint: record.fingerprint, ...record.answer, at: record.at })
      },
      release: async (key, revision) => keys.dropAt(key, revision),
    }
  }
}

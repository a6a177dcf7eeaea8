/**
 * The ports of port.ts for one process on its own SQLite store (threadhost.db): what a host without
 * `--cluster` is, said in the cluster's terms and held to the same contract tests as the engine's
 * adapter (test/host/cluster-contract.test.ts).
 *
 * - membership: the nodes of this process (one, in a host; the contract test joins two);
 * - owners: compare-and-set in this process — nobody else can own a thread, so a lone node always wins;
 * - thread logs: the store's `thread_log` table, each append one commit conditional on the last position
 *   (checkpoints: its `thread_checkpoint` table);
 * - command bus: a function call to the handler serving the thread;
 * - index: the store's `threads` table, the same rows the registry lists;
 * - keys: the store's `idempotency` table, the same answers the write guards replay.
 *
 * The single-node host does not run through these ports (docs/flows/cluster.md says why: its hot path
 * stays the synchronous store); the index and the keys are the same tables and the same code it uses.
 */
import type { SqliteThreadStore } from '../store/sqlite.js'
import {
  KEY_TTL_MS,
  type ClusterEngine,
  type IdempotencyKeys,
  type KeyRecord,
  type ThreadLogs,
  type ThreadRecord,
} from './port.js'
import { LocalMembers, localCommandBus, localIndex, localLogs, localOwners } from './in-process.js'

export class EmbeddedCluster {
  readonly members = new LocalMembers()
  readonly #owners = localOwners(new Map())
  readonly #commands = localCommandBus()
  // One process lists every thread it has: a lookup of one is a scan of the rows (only the contract tests ask).
  readonly #index = localIndex({ put: (row) => this.store.putThread(row), delete: (id) => this.store.deleteThread(id), all: () => this.store.threads(), get: (id) => this.store.threads().find((row) => row.threadId === id) })
  readonly #tables: ReturnType<SqliteThreadStore['clusterTables']>

  readonly #logs: ThreadLogs

  constructor(private readonly store: SqliteThreadStore) {
    this.#tables = store.clusterTables()
    const { log } = this.#tables
    this.#logs = localLogs({
      last: (threadId) => log.last(threadId),
      append: (threadId, record, expected) => log.append(threadId, JSON.stringify(record), expected),
      since: (threadId, after) => log.since(threadId, after).map(({ position, record }) => ({ record: JSON.parse(record) as ThreadRecord, position })),
      checkpoint: (threadId) => log.checkpoint(threadId),
      keepCheckpoint: (threadId, checkpoint) => log.keepCheckpoint(threadId, checkpoint),
      forget: (threadId, before) => log.forget(threadId, before),
    })
  }

  engine(name = 'local'): ClusterEngine {
    const membership = this.members.membership(name)
    return {
      mode: 'embedded',
      membership,
      owners: this.#owners,
      logs: this.#logs,
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

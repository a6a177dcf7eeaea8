/**
 * What nodes of one process share (the in-process and the embedded adapters). Membership: a node
 * joins, hears when its lease is ended from outside (`expire`, as a dead node's lapses), and rejoins
 * under a new life with the same name — the same rules the engine's adapter keeps across processes.
 * The command bus: a function call to the handler serving the thread, no-owner when none does. The
 * index: rows kept here, each change told to every watching node. Owners: compare-and-set on a map.
 * Thread logs: appends conditional on the last position over storage each adapter keeps its own way.
 */
import { randomUUID } from 'node:crypto'
import type { ThreadRow } from '../store/port.js'
import { Fenced, RECORD_FORMAT, type Checkpoint, type CommandBus, type CommandHandler, type CommandReply, type Membership, type NodeInfo, type OwnerDirectory, type OwnerRecord, type ThreadIndex, type ThreadLogs, type ThreadRecord } from './port.js'
import { CHECKPOINT_FORMAT } from './mirror-state.js'

/** The threads list over rows this process keeps (`rows`), every change told to the nodes that watch. */
export function localIndex(rows: { put(row: ThreadRow): void; delete(threadId: string): void; all(): Iterable<ThreadRow>; get(threadId: string): ThreadRow | undefined }): ThreadIndex {
  const watchers = new Set<{ put: (row: ThreadRow, revision: number) => void; delete: (id: string, revision: number) => void }>()
  // Counted in this process: rows it found already written are older than any change it makes.
  let revision = 0
  const revisions = new Map<string, number>()
  return {
    put: async (row, still) => {
      if (still?.() === false) return undefined
      rows.put(row)
      const at = ++revision
      revisions.set(row.threadId, at)
      for (const w of watchers) w.put(row, at)
      return at
    },
    delete: async (threadId) => {
      rows.delete(threadId)
      revisions.delete(threadId)
      const at = ++revision
      for (const w of watchers) w.delete(threadId, at)
    },
    get: async (threadId) => {
      const row = rows.get(threadId)
      return row && { row, revision: revisions.get(threadId) ?? 0 }
    },
    watch: async (onPut, onDelete) => {
      for (const row of rows.all()) onPut(row, revisions.get(row.threadId) ?? 0)
      const watcher = { put: onPut, delete: onDelete }
      watchers.add(watcher)
      return { stop: () => void watchers.delete(watcher) }
    },
  }
}

export function localCommandBus(): CommandBus {
  const servers = new Map<string, CommandHandler>()
  const everyNode = new Map<string, Set<(body: string) => Promise<string | undefined>>>()
  return {
    serveAll: async (topic, handler) => {
      const handlers = everyNode.get(topic) ?? new Set()
      everyNode.set(topic, handlers.add(handler))
      return () => void handlers.delete(handler)
    },
    askAll: async (topic, body, expected, timeoutMs) => {
      const answers: string[] = []
      if (expected <= 0) return []
      // As on NATS: the first `expected` answers, or those in by the timeout.
      let done!: () => void
      const enough = new Promise<void>((resolve) => (done = resolve))
      const timer = setTimeout(done, timeoutMs)
      for (const handler of everyNode.get(topic) ?? []) {
        void handler(body).then(
          (answer) => {
            if (answer === undefined || answers.length >= expected) return
            answers.push(answer)
            if (answers.length >= expected) done()
          },
          () => {},
        )
      }
      await enough
      clearTimeout(timer)
      return [...answers]
    },
    serve: async (threadId, handler) => {
      servers.set(threadId, handler)
      return () => {
        if (servers.get(threadId) === handler) servers.delete(threadId)
      }
    },
    send: async (threadId, request) => {
      const handler = servers.get(threadId)
      return handler ? new Promise<CommandReply>((resolve, reject) => void handler(request, resolve).then(resolve, reject)) : 'no-owner'
    },
  }
}

export class LocalMembers {
  readonly nodes = new Map<string, NodeInfo>()
  readonly #lost = new Map<string, () => void>()

  /** A node's lease ends (as a dead node's would): it hears it, and the others see it gone. */
  expire(nodeId: string): void {
    this.nodes.delete(nodeId)
    this.#lost.get(nodeId)?.()
    this.#lost.delete(nodeId)
  }

  /** `format`, `checkpointFormat`: the formats the node writes (a test's node of another version). */
  membership(name: string, format = RECORD_FORMAT, checkpointFormat = CHECKPOINT_FORMAT): Membership & { close(): void } {
    const lifeOf = (): NodeInfo => ({ id: `${name}-${randomUUID().slice(0, 8)}`, name, format, checkpointFormat })
    let self = lifeOf()
    const listeners: (() => void)[] = []
    const members = this
    const join = async () => {
      members.nodes.set(self.id, self)
      members.#lost.set(self.id, () => {
        for (const listener of listeners) listener()
      })
    }
    const leave = () => {
      members.nodes.delete(self.id)
      members.#lost.delete(self.id)
    }
    return {
      get self() {
        return self
      },
      live: async () => [...members.nodes.values()],
      isLive: async (id) => members.nodes.has(id),
      join,
      onLost: (listener) => void listeners.push(listener),
      current: () => members.nodes.has(self.id),
      rejoin: async () => {
        leave()
        self = lifeOf()
        await join()
      },
      leave: async () => leave(),
      close: leave,
    }
  }
}

/** Thread owners by compare-and-set on `owners` (kept by the caller: tests read it). */
export function localOwners(owners: Map<string, { record: OwnerRecord; revision: number }>): OwnerDirectory {
  let last = 0
  return {
    owner: async (threadId) => owners.get(threadId),
    acquire: async (threadId, record, expected) => {
      if (owners.get(threadId)?.revision !== expected) return undefined
      const revision = ++last
      owners.set(threadId, { record, revision })
      return { threadId, revision }
    },
    release: async ({ threadId, revision }) => {
      if (owners.get(threadId)?.revision === revision) owners.delete(threadId)
    },
    list: async () => new Map(owners),
  }
}

/** Where an adapter keeps its thread logs: positions count from 1, and an append names the last. */
export interface LogStorage {
  last(threadId: string): number
  /** The new record's position, or the log's actual last when `expected` is not it (nothing written). */
  append(threadId: string, record: ThreadRecord, expected: number): number | { last: number }
  /** The records after position `after`, in order. */
  since(threadId: string, after: number): Iterable<{ record: ThreadRecord; position: number }>
  checkpoint(threadId: string): Checkpoint | undefined
  /** Keeps it as the newest, unless one at or past its position is, and removes the records up to the one it replaced: `ThreadLogs.keepCheckpoint`. */
  keepCheckpoint(threadId: string, checkpoint: Checkpoint): void
  /** Removes the records before position `before`, and the checkpoint when it is of a position before it. */
  forget(threadId: string, before: number): void
}

/**
 * Thread logs over `storage`: a stale writer's append refused (`Fenced`), a retried append (its id seen
 * before) answered with where it landed, as the engine's duplicate window answers, and every reader told
 * of each append after it has read the log so far.
 */
export function localLogs(storage: LogStorage): ThreadLogs {
  /** Append ids → the position they landed at (this process's life). */
  const appended = new Map<string, number>()
  const readers = new Map<string, Set<(record: ThreadRecord, position: number, previous: number) => void>>()
  return {
    last: async (threadId) => storage.last(threadId),
    append: async (threadId, record, expected, id) => {
      const landed = id === undefined ? undefined : appended.get(id)
      if (landed !== undefined) return landed
      const position = storage.append(threadId, record, expected)
      if (typeof position !== 'number') throw new Fenced(threadId, `wrong last sequence: ${position.last}`)
      if (id !== undefined) appended.set(id, position)
      for (const reader of readers.get(threadId) ?? []) reader(record, position, expected)
      return position
    },
    read: (threadId, onRecord, caughtUp, after = 0) => {
      // Positions here are one after another: a record's previous is the one before it, kept or not.
      for (const { record, position } of storage.since(threadId, after)) onRecord(record, position, position - 1)
      caughtUp()
      const set = readers.get(threadId) ?? new Set()
      readers.set(threadId, set)
      set.add(onRecord)
      return { stop: () => void set.delete(onRecord) }
    },
    checkpoint: async (threadId) => storage.checkpoint(threadId),
    keepCheckpoint: async (threadId, checkpoint) => storage.keepCheckpoint(threadId, checkpoint),
    forget: async (threadId, before) => storage.forget(threadId, before),
  }
}

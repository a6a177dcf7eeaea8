/**
 * What nodes of one process share (the in-process and the embedded adapters). Membership: a node
 * joins, hears when its lease is ended from outside (`expire`, as a dead node's lapses), and rejoins
 * under a new life with the same name — the same rules the engine's adapter keeps across processes.
 * The command bus: a function call to the handler serving the thread, no-owner when none does. The
 * index: rows kept here, each change told to every watching node.
 */
import { randomUUID } from 'node:crypto'
import type { ThreadRow } from '../store/port.js'
import type { CommandBus, CommandReply, CommandRequest, Membership, NodeInfo, ThreadIndex } from './port.js'

/** The threads list over rows this process keeps (`rows`), every change told to the nodes that watch. */
export function localIndex(rows: { put(row: ThreadRow): void; delete(threadId: string): void; all(): Iterable<ThreadRow> }): ThreadIndex {
  const watchers = new Set<{ put: (row: ThreadRow) => void; delete: (id: string) => void }>()
  return {
    put: async (row) => {
      rows.put(row)
      for (const w of watchers) w.put(row)
    },
    delete: async (threadId) => {
      rows.delete(threadId)
      for (const w of watchers) w.delete(threadId)
    },
    watch: async (onPut, onDelete) => {
      for (const row of rows.all()) onPut(row)
      const watcher = { put: onPut, delete: onDelete }
      watchers.add(watcher)
      return { stop: () => void watchers.delete(watcher) }
    },
  }
}

export function localCommandBus(): CommandBus {
  const servers = new Map<string, (request: CommandRequest) => Promise<CommandReply>>()
  return {
    serve: async (threadId, handler) => {
      servers.set(threadId, handler)
      return () => {
        if (servers.get(threadId) === handler) servers.delete(threadId)
      }
    },
    send: async (threadId, request) => {
      const handler = servers.get(threadId)
      return handler ? handler(request) : 'no-owner'
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

  membership(name: string): Membership & { close(): void } {
    const lifeOf = (): NodeInfo => ({ id: `${name}-${randomUUID().slice(0, 8)}`, name })
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

/**
 * What a cluster node counts for `/metrics` (metrics.ts): its engine's adapters as the node uses
 * them, wrapped before the node gets them, so the node's own code (cluster-node.ts, log-writer.ts,
 * thread-mirror.ts) stays free of metrics, as the rest of the host is. Everything else an adapter
 * has passes through untouched.
 */
import { Fenced, type ClusterEngine, type CommandBus, type OwnerDirectory, type ThreadLogs } from '../host/cluster/port.js'

export interface ClusterCounts {
  /** Records this node appended to thread logs. */
  appends: number
  /** Appends refused because another node had appended since (this node was fenced). */
  refused: number
  /** Commands this node passed on to another node that owned the thread, and got an answer. */
  forwarded: number
  /** Commands another node passed on to this one, as the thread's owner. */
  served: number
  /** Threads this node took from a node whose lease had lapsed (an owner record replaced). */
  takeovers: number
  /** Thread logs this node reads now: one per thread it mirrors for its followers. */
  mirrors: number
}

/** What metrics.ts needs of a cluster node. */
export interface ClusterMetrics {
  node: string
  counts: ClusterCounts
  owns(threadId: string): boolean
}

const countsOf = new WeakMap<ClusterEngine, ClusterCounts>()

/** What metrics.ts reads of a node whose engine `countedEngine` wrapped (undefined for one it did not). */
export function clusterMetrics(node: { readonly engine: ClusterEngine; readonly self: { name: string }; owns(threadId: string): boolean }): ClusterMetrics | undefined {
  const counts = countsOf.get(node.engine)
  return counts && { node: node.self.name, counts, owns: (threadId) => node.owns(threadId) }
}

/** The engine, counting as it goes. */
export function countedEngine(engine: ClusterEngine): { engine: ClusterEngine; counts: ClusterCounts } {
  const counts: ClusterCounts = { appends: 0, refused: 0, forwarded: 0, served: 0, takeovers: 0, mirrors: 0 }
  /** The node each thread's owner record named when this node last read it. */
  const lastRead = new Map<string, string>()
  const owners: Partial<OwnerDirectory> = {
    async owner(threadId) {
      const current = await engine.owners.owner(threadId)
      if (current) lastRead.set(threadId, current.record.node)
      else lastRead.delete(threadId)
      return current
    },
    async acquire(threadId, record, expected) {
      const ownership = await engine.owners.acquire(threadId, record, expected)
      if (ownership && expected !== undefined && lastRead.get(threadId) !== record.node) counts.takeovers++
      return ownership
    },
  }
  const logs: Partial<ThreadLogs> = {
    async append(threadId, record, expected, id) {
      try {
        const position = await engine.logs.append(threadId, record, expected, id)
        counts.appends++
        return position
      } catch (error) {
        if (error instanceof Fenced) counts.refused++
        throw error
      }
    },
    read(threadId, onRecord, caughtUp, after) {
      const reader = engine.logs.read(threadId, onRecord, caughtUp, after)
      counts.mirrors++
      let stopped = false
      return {
        ...reader,
        stop() {
          if (!stopped) counts.mirrors--
          stopped = true
          reader.stop()
        },
      }
    },
  }
  const commands: Partial<CommandBus> = {
    serve(threadId, handler) {
      return engine.commands.serve(threadId, (request, answer) => {
        counts.served++
        return handler(request, answer)
      })
    },
    async send(threadId, request, timeoutMs) {
      const reply = await engine.commands.send(threadId, request, timeoutMs)
      if (typeof reply === 'object') counts.forwarded++
      return reply
    },
  }
  const wrapped = { owners: over(engine.owners, owners), logs: over(engine.logs, logs), commands: over(engine.commands, commands) }
  const counted = over(engine, wrapped)
  countsOf.set(counted, counts)
  return { engine: counted, counts }
}

/** `target` with `overrides` in place of some of its members; the rest are its own (methods bound to it). */
function over<T extends object>(target: T, overrides: Partial<T>): T {
  return new Proxy(target, {
    get(t, property) {
      if (Object.hasOwn(overrides, property)) return overrides[property as keyof T]
      const value = Reflect.get(t, property, t) as unknown
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(t) : value
    },
  })
}

/**
 * Membership among nodes of one process (the in-process and the embedded adapters): a node joins,
 * hears when its lease is ended from outside (`expire`, as a dead node's lapses), and rejoins under
 * a new life with the same name — the same rules the engine's adapter keeps across processes.
 */
import { randomUUID } from 'node:crypto'
import type { Membership, NodeInfo } from './port.js'

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

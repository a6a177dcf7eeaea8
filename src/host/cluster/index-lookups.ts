/**
 * Rows a node asks of the cluster's index for threads it does not list yet: one made on another node a
 * moment ago, whose row the index's watch has not brought, so that a request sent to any node right after
 * the create finds the thread rather than a 404 (docs/flows/cluster.md). Only a request naming a thread
 * the node does not list pays the read; requests that name it meanwhile wait on the same one.
 *
 * The watch's word stands over a read's: a row read while the watch said anything of the id (a delete
 * heard, or this node's own), or at or below the revision of a delete it heard, is not listed — the read
 * may have been answered before the delete, or by a replica behind it.
 */
import type { IndexRow, ThreadIndex } from './port.js'

/** How long a request waits for the index's row before it is answered as the node stands (a 404). */
const LOOKUP_MS = 1000
/** Deletes remembered by id, the newest kept: a row read at or below one is a deleted thread's. */
const MAX_DELETES_KEPT = 10_000

export class IndexLookups {
  /** Reads on their way, per id: whether the watch said anything of the id meanwhile. */
  readonly #reading = new Map<string, { heard: boolean; done: Promise<void> }>()
  /** The revision of the last delete of each id heard. */
  readonly #deletes = new Map<string, number>()

  constructor(
    private readonly index: ThreadIndex,
    private readonly node: {
      /** Whether the node lists the thread (or asks nothing any more: it stopped). */
      lists: (threadId: string) => boolean
      /** A row to list, as if the watch had brought it. */
      heard: (row: IndexRow, revision: number) => void
    },
  ) {}

  /** Resolves once the thread is listed here if the index has it, or it is known it will not be now. */
  lookUp(threadId: string): Promise<void> {
    if (this.node.lists(threadId)) return Promise.resolve()
    const running = this.#reading.get(threadId)
    if (running) return running.done
    const reading = { heard: false, done: Promise.resolve() }
    this.#reading.set(threadId, reading)
    reading.done = (async () => {
      let timer: ReturnType<typeof setTimeout> | undefined
      const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), LOOKUP_MS)))
      const found = await Promise.race([this.index.get(threadId).catch(() => undefined), late])
      clearTimeout(timer)
      this.#reading.delete(threadId)
      if (!found || reading.heard || this.node.lists(threadId) || found.revision <= (this.#deletes.get(threadId) ?? 0)) return
      this.node.heard(found.row, found.revision)
    })()
    return reading.done
  }

  /**
   * The watch said something of the id (a row, or a delete at `deletedAt`), or this node deleted it
   * (`deletedAt` past every revision until the watch's echo says which): a read on its way gives way.
   */
  noticed(threadId: string, deletedAt?: number): void {
    const reading = this.#reading.get(threadId)
    if (reading) reading.heard = true
    if (deletedAt === undefined) return
    this.#deletes.delete(threadId)
    if (this.#deletes.size >= MAX_DELETES_KEPT) this.#deletes.delete(this.#deletes.keys().next().value!)
    this.#deletes.set(threadId, deletedAt)
  }
}

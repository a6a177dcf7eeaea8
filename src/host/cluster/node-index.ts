/**
 * A node's side of the cluster's index of threads (docs/flows/cluster.md): the watch that keeps the
 * registry's list the same as every other node's, the rows it asks for threads it does not list yet
 * (index-lookups.ts), the check at start-up for threads deleted while it was away, and the node's part
 * in a search across the cluster — which asks, for each thread, the node that wrote its row last.
 */
import type { ThreadRow } from '../store/port.js'
import type { SearchHit } from '../thread-search.js'
import { searchNodes, serveSearch, type SearchNode } from './cluster-search.js'
import { forgetDeletedWhileAway } from './deleted-while-away.js'
import { IndexLookups } from './index-lookups.js'
import type { ClusterEngine, IndexRow, NodeInfo } from './port.js'

/** What the index needs of the thread registry. */
export interface IndexedRegistry {
  adopt(row: Pick<ThreadRow, 'threadId'> & Partial<ThreadRow>, revision?: number): void
  forget(threadId: string, revision?: number): void
  list(): Array<{ threadId: string }>
  lists(threadId: string): boolean
  search(q: string, limit?: number): SearchHit[]
  readonly searchBuilt: Promise<void>
  get(threadId: string): { title: string } | undefined
}

export class NodeIndex {
  /** The node that wrote each thread's row in the index: its message index has the thread as it stands (cluster-search.ts). */
  readonly #writers = new Map<string, string>()
  /** Rows asked of the index for threads this node does not list yet. */
  readonly #lookups: IndexLookups
  #watch?: { stop(): void }
  /** This node as a search on the cluster sees it, once it started. */
  #searchNode?: SearchNode
  #unserveSearch?: () => void
  #stopped = false

  constructor(
    private readonly engine: Pick<ClusterEngine, 'index' | 'logs' | 'commands'>,
    private readonly registry: IndexedRegistry,
    private readonly self: () => NodeInfo,
  ) {
    this.#lookups = new IndexLookups(engine.index, {
      lists: (threadId) => this.registry.lists(threadId) || this.#stopped,
      heard: (row, revision) => this.#heard(row, revision),
    })
  }

  /** Watches the index, checks for threads deleted while the node was away, and answers other nodes' searches. */
  async start(): Promise<void> {
    // The rows the index has as this node starts, and gets until the check below is over: a thread it lists
    // from its own store that is not among them may have been deleted while it was away.
    let inIndex: Set<string> | undefined = new Set()
    this.#watch = await this.engine.index.watch(
      (row, revision) => {
        inIndex?.add(row.threadId)
        this.#lookups.noticed(row.threadId)
        this.#heard(row, revision)
      },
      (threadId, revision) => {
        this.#lookups.noticed(threadId, revision)
        this.#writers.delete(threadId)
        this.registry.forget(threadId, revision)
      },
    )
    void forgetDeletedWhileAway(this.engine.logs, this.registry, inIndex, () => this.#stopped).finally(() => (inIndex = undefined))
    let built = false
    void this.registry.searchBuilt.then(() => (built = true))
    this.#searchNode = {
      self: this.self,
      find: (q, limit) => this.registry.search(q, limit),
      built: () => built,
      writerOf: (threadId) => this.#writers.get(threadId),
      titleOf: (threadId) => this.registry.get(threadId)?.title,
    }
    this.#unserveSearch = await serveSearch(this.engine.commands, this.#searchNode)
  }

  /** Whether the index's row of the thread names this node as the one that wrote it last. */
  wroteRow(threadId: string): boolean {
    return this.#writers.get(threadId) === this.self().name
  }

  /** A request names a thread this node does not list: its row is asked of the index (index-lookups.ts). */
  lookUp(threadId: string): Promise<void> {
    return this.#lookups.lookUp(threadId)
  }

  /**
   * The thread is being deleted here: until the index's echo of the delete says at which revision, no row
   * read of it is listed again.
   */
  deleting(threadId: string): void {
    this.#lookups.noticed(threadId, Number.MAX_SAFE_INTEGER)
  }

  /** Hits from every live node's message index; `others`: how many other live nodes answer. */
  async search(q: string, limit: number, others: number): Promise<SearchHit[]> {
    if (!this.#searchNode) return []
    return searchNodes(this.engine.commands, this.#searchNode, others, q, limit)
  }

  stop(): void {
    this.#stopped = true
    this.#watch?.stop()
    this.#unserveSearch?.()
  }

  /** A row of the index, heard by the watch or asked for: the thread as this node lists it, and who wrote it. */
  #heard({ writer, ...row }: IndexRow, revision: number): void {
    if (writer === undefined) this.#writers.delete(row.threadId)
    else this.#writers.set(row.threadId, writer)
    this.registry.adopt(row, revision)
  }
}

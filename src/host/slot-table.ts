/**
 * The registry's thread slots and their rows (thread-registry.ts): a slot made for a row — recovered,
 * adopted from another node, or a new thread's once its workspace and model are checked — listed,
 * its row written as the thread changes, and the slot with its rows taken away again, by a delete
 * here or one on another node. In cluster mode the table is kept in step with the cluster's index
 * through its directory (cluster-directory.ts).
 */
import { randomUUID } from 'node:crypto'
import type { ThreadSummary } from '../schemas/index.js'
import type { CreateOutcome, DeleteOutcome } from '../schemas/outcomes.js'
import type { ModelCatalog, SessionDamaged } from '../runtime/port.js'
import { ClusterDirectory, type DirectorySlots } from './cluster-directory.js'
import { ThreadPassedOn, type provideSlotMachine } from './slot-lifecycle.js'
import { ThreadJournal, type Log } from './store/journal.js'
import type { ThreadRow, ThreadStore } from './store/port.js'
import type { CreateRequest } from './thread-requests.js'
import { summaryOf } from './thread-display.js'
import { ThreadSlot } from './thread-slot.js'
import type { Workspaces } from './workspaces.js'
import type { Worktrees } from './worktrees.js'

export interface SlotTableDeps {
  store: ThreadStore
  /** What a new thread is checked against, and what it gets when it names nothing. */
  options: { workspaces: Workspaces; models: ModelCatalog; defaultModel: string }
  worktrees: Worktrees
  /** The machine every slot runs (slot-lifecycle.ts). */
  machine: () => ReturnType<typeof provideSlotMachine>
  log?: Log
  /** Cluster mode is on: the directory hears of a thread made here. */
  clustered: () => boolean
  /** The thread's words are not found again (thread-search.ts). */
  unsearch: (threadId: string) => void
}

export class SlotTable implements DirectorySlots {
  readonly #slots = new Map<string, ThreadSlot>()
  /** Cluster mode: the slots kept in step with the cluster's index. */
  readonly directory = new ClusterDirectory(this)

  constructor(private readonly deps: SlotTableDeps) {}

  /** Every slot, those being deleted too. */
  get map(): ReadonlyMap<string, ThreadSlot> {
    return this.#slots
  }

  get(threadId: string): ThreadSlot | undefined {
    return this.#slots.get(threadId)
  }

  has(threadId: string): boolean {
    return this.#slots.has(threadId)
  }

  values(): IterableIterator<ThreadSlot> {
    return this.#slots.values()
  }

  /** The threads listed here, the latest changed first. */
  list(): ThreadSummary[] {
    return [...this.#slots.values()]
      .filter((s) => s.present)
      .map((s) => this.#withWorktree(summaryOf(s, this.deps.options.workspaces.default)))
      .sort((a, b) => b.updatedAt - a.updatedAt)
  }

  /** The thread's summary, if it is listed here. */
  summary(threadId: string): ThreadSummary | undefined {
    const slot = this.present(threadId)
    return slot && this.#withWorktree(summaryOf(slot, this.deps.options.workspaces.default))
  }

  /** A thread's own worktree is listed with it. */
  #withWorktree(summary: ThreadSummary): ThreadSummary {
    const worktree = this.deps.worktrees.info(summary.threadId)
    return worktree ? { ...summary, worktree: { path: worktree.path, branch: worktree.branch } } : summary
  }

  /** The slot, unless it is being deleted. */
  present(threadId: string): ThreadSlot | undefined {
    const slot = this.#slots.get(threadId)
    return slot?.present ? slot : undefined
  }

  add(row: ThreadRow): ThreadSlot {
    const slot = new ThreadSlot(row, new ThreadJournal(row.threadId, this.deps.store, { ceiling: row.seq, run: row.run }, this.deps.log), this.deps.machine())
    this.#slots.set(row.threadId, slot)
    return slot
  }

  /** An unknown model, one without credentials, or a cwd outside the workspaces is refused before anything is written. */
  async create(request: CreateRequest): Promise<CreateOutcome> {
    const { workspaces, models, defaultModel } = this.deps.options
    const threadId = request.id ?? randomUUID().slice(0, 8)
    if (this.#slots.has(threadId)) return { kind: 'taken' }
    const workspace = workspaces.check(request.cwd)
    if (!workspace.ok) return { kind: 'invalid', reason: workspace.reason }
    const model = request.model ?? defaultModel
    const check = await models.check(model)
    if (!check.ok) return { kind: 'invalid', reason: check.reason }
    // The id may have been taken while the model was checked.
    if (this.#slots.has(threadId)) return { kind: 'taken' }
    let cwd = workspace.cwd
    if (request.worktree) {
      const made = await this.deps.worktrees.create(threadId, cwd)
      if (made.kind === 'invalid') return made
      cwd = made.cwd
    }
    this.remember(threadId, { ...request, model, cwd })
    return { kind: 'created', threadId }
  }

  /** A new thread's row, written, and its slot (`create`'s, or a first prompt's to an unknown id: thread-requests.ts). */
  remember(threadId: string, request: CreateRequest & { model: string; cwd: string }): ThreadSlot {
    const now = Date.now()
    const row: ThreadRow = {
      threadId,
      title: request.title?.trim() || threadId,
      model: request.model,
      ...(request.thinkingLevel ? { thinkingLevel: request.thinkingLevel } : {}),
      cwd: request.cwd,
      createdAt: now,
      updatedAt: now,
      run: 0,
      seq: 0,
    }
    this.deps.store.putThread(row)
    if (this.deps.clustered()) this.directory.made(threadId, now)
    return this.add(row)
  }

  /**
   * A live thread is disposed first: its run stops and its open dialogs settle `cancelled`. The slot
   * stays (hidden, its id not reusable) until its files are gone.
   */
  async delete(threadId: string): Promise<DeleteOutcome> {
    const slot = this.present(threadId)
    if (!slot) return { kind: 'unknown' }
    // The rows go first: a write the disk refuses (503/507) leaves the thread as it was, its run
    // going on. From here its journal writes nothing, so the dispose leaves no rows behind.
    // The row as it stands (its live run, its seq ceiling): what comes back if a cluster's delete does not go through.
    const row = this.row(slot)
    this.deps.store.deleteThread(threadId)
    const deleting = this.directory.deleteStarted(threadId)
    slot.journal.stop()
    let kept = false
    try {
      await slot.delete()
      return { kind: 'deleted' }
    } catch (error) {
      // Deleted all the same (a file that could not be removed).
      if (!(error instanceof ThreadPassedOn)) throw error
      // Deleted on its next owner meanwhile: nothing comes back, and the retry finds no thread.
      if (deleting.forgotten) return { kind: 'owner-changed', threadId }
      // The row again: the delete's retry finds the thread on its next owner (the index kept it: ClusterNode.threadDeleted).
      // As it stands now (a newer row from the next owner may have come in meanwhile), with the run and seq it had.
      const record = { ...slot.record, run: Math.max(row.run, slot.record.run), seq: Math.max(row.seq, slot.record.seq, slot.journal.ceiling) }
      this.add(record)
      kept = true
      try {
        this.deps.store.putThread(record, { restored: true })
      } catch (fault) {
        this.deps.log?.('error', `[${threadId}] store write failed while keeping a thread whose delete did not go through: ${String(fault)}`)
      }
      return { kind: 'owner-changed', threadId }
    } finally {
      // Gone, in every case but that one: its words are not found again.
      if (!kept) this.deps.unsearch(threadId)
      if (this.#slots.get(threadId) === slot) this.#slots.delete(threadId)
      this.directory.deleteEnded(threadId, deleting, !kept)
    }
  }

  /** A thread deleted on another node goes: its slot, and its rows in the store; its words are not found here again, under a thread made anew with its id either, nor is it listed after a restart. */
  discard(slot: ThreadSlot): void {
    slot.feed?.close()
    slot.journal.stop()
    this.#slots.delete(slot.threadId)
    this.deps.unsearch(slot.threadId)
    try {
      this.deps.store.deleteThread(slot.threadId)
    } catch (error) {
      this.deps.log?.('warn', `[${slot.threadId}] store write failed while forgetting a thread deleted on another node: ${String(error)}`)
    }
  }

  /** The slot's row as written (`record`: the one about to be taken): the run its live thread owns, the seq ceiling its journal reserved. */
  row(slot: ThreadSlot, record = slot.record): ThreadRow {
    return { ...record, run: slot.run, seq: slot.journal.ceiling }
  }

  /** Writes the slot's row — unless it is being deleted or was replaced: a late write would bring a deleted thread back. */
  persist(slot: ThreadSlot, record = slot.record): void {
    if (!slot.present || this.#slots.get(slot.threadId) !== slot) return
    this.deps.store.putThread(this.row(slot, record))
  }

  /** The session file is damaged: the thread is unavailable until it is repaired or the thread deleted. */
  unavailable(slot: ThreadSlot, damage: SessionDamaged): void {
    if (slot.state !== 'cold') return
    this.deps.log?.('error', `${damage.message}; the thread is unavailable until the file is repaired or the thread deleted`)
    slot.damaged(damage.reason)
  }
}

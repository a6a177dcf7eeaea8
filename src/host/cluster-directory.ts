/**
 * This node's list of threads kept in step with the cluster's index (cluster mode, slot-table.ts):
 * a row another node wrote comes in (`adopt`), a thread another node deleted goes (`forget`). The
 * index gives an id's rows in order but late, and an id can be deleted and made again meanwhile, so
 * a notice never reaches a thread of another time under the same id: not one made here that the index
 * has not given back yet (`#made`), not one being deleted here (`#deleting`), and not one whose runtime
 * is still up here (`#replaced`: it goes once at rest, and the new thread comes in its place).
 */
import type { ThreadRow } from './store/port.js'
import type { ThreadSlot } from './thread-slot.js'

/** A row another node wrote, as the cluster's index gives it: the thread's id, and what changed. */
export type AdoptedRow = Pick<ThreadRow, 'threadId'> & Partial<ThreadRow>

/** A delete running here: whether another node deleted the thread meanwhile (`forget`), and the row of one it made again under the id since. */
export type Deleting = { forgotten: boolean; after?: AdoptedRow }

/** What the directory asks of the registry's slots. */
export interface DirectorySlots {
  get(threadId: string): ThreadSlot | undefined
  add(row: ThreadRow): ThreadSlot
  /** The slot goes, with the thread's rows in this node's store and its words in search (its files were the other node's to remove). */
  discard(slot: ThreadSlot): void
}

export class ClusterDirectory {
  /**
   * Threads made here whose row the cluster's index has not given back yet: their row's `createdAt`,
   * and once the index took the row, the revision it is at. A notice of the id below that revision
   * (or, before it is known, a row of another `createdAt`, or a delete) is an older thread's, heard
   * late; one at or past it is the index past this node's row, and ends the entry — so does a row the
   * index never took (dropped as this node lost the thread).
   */
  readonly #made = new Map<string, { createdAt: number; revision?: number }>()
  /** Threads being deleted here: the index's echo of the delete must not take their slot from under it. */
  readonly #deleting = new Map<string, Deleting>()
  /** Threads deleted, or made again under their id, on another node while their runtime here is still up (`#replaceAtRest`). */
  readonly #replaced = new Map<string, { after?: AdoptedRow }>()

  constructor(private readonly slots: DirectorySlots) {}

  /** A thread made here, at `createdAt` (its row's). */
  made(threadId: string, createdAt: number): void {
    this.#made.set(threadId, { createdAt })
  }

  /**
   * This node's row of the thread made at `createdAt` is in the index at `revision`; undefined: the
   * index never took it. A row of an older thread under the id (its put answered late) says nothing.
   */
  indexed(threadId: string, createdAt: number, revision: number | undefined): void {
    const made = this.#made.get(threadId)
    if (!made || made.createdAt !== createdAt) return
    if (revision === undefined) return void this.#made.delete(threadId)
    made.revision = Math.max(made.revision ?? 0, revision)
  }

  /** A delete of the thread starts here; `deleteEnded` ends it, whatever became of it. */
  deleteStarted(threadId: string): Deleting {
    const deleting: Deleting = { forgotten: false }
    this.#deleting.set(threadId, deleting)
    return deleting
  }

  /**
   * `gone`: the thread is gone here (not kept because its delete did not go through), so the id is
   * open to the index's next notices; a thread made again under it meanwhile comes in.
   */
  deleteEnded(threadId: string, deleting: Deleting, gone: boolean): void {
    this.#deleting.delete(threadId)
    if (gone) this.#made.delete(threadId)
    if (deleting.after) this.adopt(deleting.after)
  }

  /** A thread another node made or changed, at the index's `revision`: its slot here, or its row brought up to date (runs never go back). */
  adopt(row: AdoptedRow, revision?: number): void {
    const deleting = this.#deleting.get(row.threadId)
    // Deleted on another node and made again there while a delete runs here: that thread comes once this delete is over.
    if (deleting?.forgotten) return void (deleting.after = { ...deleting.after, ...row })
    const replaced = this.#replaced.get(row.threadId)
    if (replaced) return void (replaced.after = { ...replaced.after, ...row })
    if (this.#olderThanMade(row.threadId, revision, row.createdAt ?? null)) return
    let slot = this.slots.get(row.threadId)
    // Another thread under the id (made at another time, on a clock of its own): the index's latest row
    // is one made since this node's was deleted (while it was away), and replaces it here.
    if (slot && row.createdAt !== undefined && row.createdAt !== slot.record.createdAt) {
      if (slot.thread || slot.building) return this.#replaceAtRest(slot, row)
      this.forget(row.threadId)
      slot = this.slots.get(row.threadId)
    }
    if (!slot) return void (row.model !== undefined && row.createdAt !== undefined && this.slots.add({ run: 0, seq: 0, title: row.threadId, updatedAt: row.createdAt, ...row } as ThreadRow))
    slot.record = { ...slot.record, ...row, run: Math.max(slot.record.run, row.run ?? 0), seq: Math.max(slot.record.seq, row.seq ?? 0) }
  }

  /** A thread deleted on another node, at the index's `revision`: its slot here goes, with its rows in this node's store. */
  forget(threadId: string, revision?: number): void {
    if (this.#olderThanMade(threadId, revision, undefined)) return
    const deleting = this.#deleting.get(threadId)
    // A delete running here finishes it: its own, heard back from the index, or one that did not go through
    // here (it then keeps nothing).
    if (deleting) return void Object.assign(deleting, { forgotten: true, after: undefined })
    const slot = this.slots.get(threadId)
    if (!slot) return
    if (slot.thread || slot.building) return this.#replaceAtRest(slot, undefined)
    this.slots.discard(slot)
  }

  /** The slot goes once its runtime is at rest, and `after`, a thread made again under its id, comes in its place. */
  #replaceAtRest(slot: ThreadSlot, after: AdoptedRow | undefined): void {
    const { threadId } = slot
    const waiting = this.#replaced.has(threadId)
    this.#replaced.set(threadId, { after })
    if (waiting) return
    void slot.idle().then(() => {
      const replaced = this.#replaced.get(threadId)
      this.#replaced.delete(threadId)
      if (!replaced || this.slots.get(threadId) !== slot) return
      this.forget(threadId)
      if (replaced.after) this.adopt(replaced.after)
    })
  }

  /**
   * Whether a notice of the id (a row made at `createdAt`, null: a row that does not say; undefined: a
   * delete) is an older thread's than the one made here, heard late. One that is not ends the entry
   * when it is the index at or past this node's row (its revision, or the row itself).
   */
  #olderThanMade(threadId: string, revision: number | undefined, createdAt: number | null | undefined): boolean {
    const made = this.#made.get(threadId)
    if (!made) return false
    let older: boolean
    if (revision !== undefined && made.revision !== undefined) older = revision < made.revision
    // A row that does not say when its thread was made, with no revision: this node's own, of the thread it has.
    else if (createdAt === null) return false
    else older = createdAt === undefined || createdAt !== made.createdAt
    if (!older) this.#made.delete(threadId)
    return older
  }
}

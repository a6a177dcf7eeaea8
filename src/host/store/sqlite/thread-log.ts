/**
 * The `thread_log` table: each thread's records in order, numbered from 1 — the thread log of the
 * embedded cluster adapter (src/host/cluster/embedded.ts). An append commits only if the thread's last
 * position is the one the writer names, in the same transaction that reads it. Its checkpoints (one
 * per thread, the newest kept) are in `thread_checkpoint`.
 */
import type { Checkpoint } from '../../cluster/port.js'
import type { SqliteDb } from './db.js'

export class ThreadLogTable {
  constructor(readonly db: SqliteDb) {}

  last(threadId: string): number {
    return Number(this.db.all('SELECT MAX(position) AS last FROM thread_log WHERE thread_id = ?', threadId)[0]?.last ?? 0)
  }

  /** The record's position, or `{ last }` when the thread's last position is not `expected` (nothing written). */
  append(threadId: string, record: string, expected: number): number | { last: number } {
    let out: number | { last: number } = { last: expected }
    this.db.tx(() => {
      const last = this.last(threadId)
      if (last !== expected) return void (out = { last })
      this.db.run('INSERT INTO thread_log (thread_id, position, record) VALUES (?, ?, ?)', threadId, last + 1, record)
      out = last + 1
    })
    return out
  }

  /** The records after `after`, in order. */
  since(threadId: string, after: number): { position: number; record: string }[] {
    return this.db
      .all('SELECT position, record FROM thread_log WHERE thread_id = ? AND position > ? ORDER BY position', threadId, after)
      .map((r) => ({ position: Number(r.position), record: String(r.record) }))
  }

  checkpoint(threadId: string): Checkpoint | undefined {
    const row = this.db.all('SELECT position, state FROM thread_checkpoint WHERE thread_id = ?', threadId)[0]
    return row && { position: Number(row.position), state: String(row.state) }
  }

  /** A deleted thread's records before `before`, and its checkpoint of a position before it, in one commit. */
  forget(threadId: string, before: number): void {
    this.db.tx(() => {
      this.db.run('DELETE FROM thread_log WHERE thread_id = ? AND position < ?', threadId, before)
      this.db.run('DELETE FROM thread_checkpoint WHERE thread_id = ? AND position < ?', threadId, before)
    })
  }

  /**
   * The newest checkpoint (unless one at or past its position is kept), and the records up to the one it
   * replaces removed, in one commit. Not waited for on the disk: a crash loses both or neither, and a
   * checkpoint lost only means more of the log to read.
   */
  keepCheckpoint(threadId: string, checkpoint: Checkpoint): void {
    this.db.tx(
      () => {
        const replaced = this.checkpoint(threadId)
        if (replaced && replaced.position >= checkpoint.position) return
        this.db.run('INSERT OR REPLACE INTO thread_checkpoint (thread_id, position, state) VALUES (?, ?, ?)', threadId, checkpoint.position, checkpoint.state)
        if (replaced) this.db.run('DELETE FROM thread_log WHERE thread_id = ? AND position <= ?', threadId, replaced.position)
      },
      { wait: false },
    )
  }
}

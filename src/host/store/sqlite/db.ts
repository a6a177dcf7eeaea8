/**
 * The one SQLite handle the store's table modules share: prepared statements kept per SQL text,
 * one synchronous commit per transaction, and the last write fault remembered (so the next request
 * is refused before it runs). After `close` every write is ignored.
 */
import type { DatabaseSync, StatementSync } from 'node:sqlite'
import { writeFault, type WriteFault } from '../port.js'

export type Row = Record<string, unknown>
export type Param = string | number | null

export class SqliteDb {
  readonly #db: DatabaseSync
  readonly #statements = new Map<string, StatementSync>()
  #closed = false
  /** The last write failure that said the disk is full or read-only; cleared by a probe write that succeeds. */
  fault?: WriteFault

  constructor(db: DatabaseSync) {
    this.#db = db
  }

  get closed(): boolean {
    return this.#closed
  }

  #statement(sql: string): StatementSync {
    let statement = this.#statements.get(sql)
    if (!statement) {
      statement = this.#db.prepare(sql)
      this.#statements.set(sql, statement)
    }
    return statement
  }

  run(sql: string, ...params: Param[]): { changes: number | bigint } {
    if (this.#closed) return { changes: 0 }
    const statement = this.#statement(sql)
    try {
      return statement.run(...params)
    } catch (error) {
      throw this.note(error)
    }
  }

  all(sql: string, ...params: Param[]): Row[] {
    return this.#statement(sql).all(...params) as Row[]
  }

  /** One commit; a write that throws rolls the whole of it back. */
  tx(fn: () => void): void {
    if (this.#closed) return
    try {
      this.#db.exec('BEGIN IMMEDIATE')
    } catch (error) {
      throw this.note(error)
    }
    try {
      fn()
      this.#db.exec('COMMIT')
    } catch (error) {
      try {
        this.#db.exec('ROLLBACK')
      } catch {
        // SQLite may have rolled back itself (a full disk does)
      }
      throw this.note(error)
    }
  }

  /** Remembers a full-disk or read-only failure, so the next request is refused before it runs. */
  note(error: unknown): unknown {
    this.fault = writeFault(error) ?? this.fault
    return error
  }

  close(): void {
    if (this.#closed) return
    this.#closed = true
    this.#statements.clear()
    try {
      this.#db.close()
    } catch {
      // already closed
    }
  }
}

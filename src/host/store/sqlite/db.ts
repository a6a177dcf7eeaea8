/**
 * The one SQLite handle the store's table modules share: prepared statements kept per SQL text,
 * one synchronous commit per transaction, and the last write fault remembered (so the next request
 * is refused before it runs). After `close` every write is ignored.
 *
 * A commit waits for the disk as the connection was opened (the store's: `synchronous = FULL`, the
 * WAL fsynced) unless its caller says it need not (`tx(fn, { wait: false })`: `NORMAL`, written to
 * the WAL, not fsynced). Either way it is in the file when the call returns, so it survives the
 * process being killed; only a power cut or an OS crash can lose an unsynced commit, and then only as
 * the last ones: the WAL is read back as a prefix (each frame's checksum chains the ones before), and
 * the next commit that waits fsyncs every one before it.
 */
import type { DatabaseSync, StatementSync } from 'node:sqlite'
import { writeFault, type WriteFault } from '../port.js'

export type Row = Record<string, unknown>
export type Param = string | number | null

export class SqliteDb {
  readonly #db: DatabaseSync
  readonly #statements = new Map<string, StatementSync>()
  #closed = false
  #inTx = false
  /** Whether the connection's commits wait for the disk as it was opened (`synchronous` FULL or more), and as last set. */
  readonly #opened: boolean
  #waits: boolean
  /** Commits so far, by whether they waited for the disk (tests count what a path waits for). */
  readonly commits = { synced: 0, unsynced: 0 }
  /** The last write failure that said the disk is full or read-only; cleared by a probe write that succeeds. */
  fault?: WriteFault

  constructor(db: DatabaseSync) {
    this.#db = db
    this.#opened = this.#waits = Number((db.prepare('PRAGMA synchronous').get() as Row | undefined)?.synchronous ?? 2) >= 2
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

  /** One statement: inside a `tx`, part of its commit; alone, a commit of its own that waits for the disk. */
  run(sql: string, ...params: Param[]): { changes: number | bigint } {
    if (this.#closed) return { changes: 0 }
    const statement = this.#statement(sql)
    try {
      if (this.#inTx) return statement.run(...params)
      this.#wait(this.#opened)
      const result = statement.run(...params)
      this.#count()
      return result
    } catch (error) {
      throw this.note(error)
    }
  }

  #count(): void {
    if (this.#waits) this.commits.synced++
    else this.commits.unsynced++
  }

  #wait(wait: boolean): void {
    if (this.#waits === wait) return
    this.#db.exec(wait ? 'PRAGMA synchronous = FULL' : 'PRAGMA synchronous = NORMAL')
    this.#waits = wait
  }

  all(sql: string, ...params: Param[]): Row[] {
    return this.#statement(sql).all(...params) as Row[]
  }

  /**
   * One commit; a write that throws rolls the whole of it back. `wait: false` for what recovery can
   * do without after a power cut (see above): the commit does not wait for the disk.
   */
  tx(fn: () => void, options: { wait?: boolean } = {}): void {
    if (this.#closed) return
    const wait = options.wait ?? this.#opened
    try {
      this.#wait(wait)
      this.#db.exec('BEGIN IMMEDIATE')
    } catch (error) {
      throw this.note(error)
    }
    this.#inTx = true
    try {
      fn()
      this.#db.exec('COMMIT')
      this.#count()
    } catch (error) {
      try {
        this.#db.exec('ROLLBACK')
      } catch {
        // SQLite may have rolled back itself (a full disk does)
      }
      throw this.note(error)
    } finally {
      this.#inTx = false
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

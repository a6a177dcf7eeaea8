/**
 * One threadhost per data dir: two servers on the same data dir would both write its session files
 * and journal, each unaware of the other. The lock is an exclusive SQLite transaction held open on
 * `<dir>/threadhost.lock` for the process's life — an OS file lock (fcntl), so it is released when
 * the process dies however it dies (kill -9 included, and across PID namespaces on one mount), and
 * nothing stale is ever left to clean up.
 */
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'

export const LOCK_FILE = 'threadhost.lock'

export interface DataDirLock {
  release(): void
}

/** The lock, or `held` when another process has it. A dir that cannot be written is not locked (that start is read-only anyway). */
export function lockDataDir(dir: string): DataDirLock | 'held' {
  let db: DatabaseSync
  try {
    mkdirSync(dir, { recursive: true })
    db = new DatabaseSync(join(dir, LOCK_FILE), { timeout: 0 })
  } catch {
    return { release() {} }
  }
  try {
    // EXCLUSIVE locking mode keeps the lock past the transaction; the transaction takes it now.
    db.exec('PRAGMA locking_mode = EXCLUSIVE')
    db.exec('BEGIN EXCLUSIVE')
  } catch (error) {
    db.close()
    if (/locked|busy/i.test(error instanceof Error ? error.message : String(error))) return 'held'
    return { release() {} }
  }
  return {
    release() {
      if (db.isOpen) db.close()
    },
  }
}

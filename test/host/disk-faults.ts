/**
 * Disk faults under SQLite, for tests: the databases under one directory get every write refused as
 * the kernel refuses it, while `access()` and `statfs()` still say the directory is writable — the
 * picture of an ext4 disk switched read-only under a running process (`errors=remount-ro`: SQLite
 * says `disk I/O error`) or of one that filled up (`database or disk is full`). Reads go on.
 *
 * It patches node:sqlite's `DatabaseSync.exec` and `StatementSync.run` (every write the store makes
 * goes through one of them) for handles whose file is under `dir`, and `fs.renameSync` of a path
 * under `dir` (EROFS, but for a full disk); `restore()` undoes the patch. The errors are shaped as
 * node:sqlite and node:fs throw them (`code`, SQLite's extended `errcode`, `errstr`).
 */
import fs from 'node:fs'
import { syncBuiltinESMExports } from 'node:module'
import { DatabaseSync, StatementSync } from 'node:sqlite'

export type DiskFault = 'io' | 'full' | 'cantopen'

const ERRORS: Record<DiskFault, { errcode: number; errstr: string }> = {
  // SQLITE_IOERR_WRITE: what a write on a remounted-read-only ext4 comes to
  io: { errcode: 778, errstr: 'disk I/O error' },
  // SQLITE_FULL
  full: { errcode: 13, errstr: 'database or disk is full' },
  // SQLITE_CANTOPEN: what SQLite says when it cannot open the WAL index of a disk it may not write
  cantopen: { errcode: 14, errstr: 'unable to open database file' },
}

export interface DiskFaults {
  /** From now on every write under the directory fails so (`undefined`: the disk is fine again). */
  fail(fault: DiskFault | undefined): void
  restore(): void
}

export function diskFaults(dir: string): DiskFaults {
  let fault: DiskFault | undefined
  const owners = new WeakMap<StatementSync, DatabaseSync>()
  const exec = DatabaseSync.prototype.exec
  const prepare = DatabaseSync.prototype.prepare
  const run = StatementSync.prototype.run
  const renameSync = fs.renameSync
  const faulty = (db: DatabaseSync | undefined) => fault !== undefined && db !== undefined && db.isOpen && (db.location() ?? '').startsWith(dir)
  const thrown = () => Object.assign(new Error(ERRORS[fault!].errstr), { code: 'ERR_SQLITE_ERROR', ...ERRORS[fault!] })

  DatabaseSync.prototype.exec = function (this: DatabaseSync, sql: string) {
    if (faulty(this) && sql.trim().toUpperCase() !== 'ROLLBACK') throw thrown()
    return exec.call(this, sql)
  }
  DatabaseSync.prototype.prepare = function (this: DatabaseSync, ...args: Parameters<DatabaseSync['prepare']>) {
    const statement = prepare.apply(this, args)
    owners.set(statement, this)
    return statement
  } as DatabaseSync['prepare']
  StatementSync.prototype.run = function (this: StatementSync, ...params: Parameters<StatementSync['run']>) {
    if (faulty(owners.get(this))) throw thrown()
    return run.apply(this, params)
  } as StatementSync['run']
  fs.renameSync = (from: fs.PathLike, to: fs.PathLike) => {
    if (fault !== undefined && fault !== 'full' && String(from).startsWith(dir)) {
      throw Object.assign(new Error(`EROFS: read-only file system, rename '${String(from)}' -> '${String(to)}'`), { code: 'EROFS', syscall: 'rename' })
    }
    return renameSync(from, to)
  }
  // `import { renameSync } from 'node:fs'` elsewhere sees the patch too.
  syncBuiltinESMExports()

  return {
    fail: (next) => void (fault = next),
    restore() {
      DatabaseSync.prototype.exec = exec
      DatabaseSync.prototype.prepare = prepare
      StatementSync.prototype.run = run
      fs.renameSync = renameSync
      syncBuiltinESMExports()
    },
  }
}

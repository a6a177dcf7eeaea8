/**
 * Opening `threadhost.db`, which never fails because of the file's contents: a file that is not a
 * database, fails its integrity check, holds no schema (empty) or one from the future is moved aside
 * (`threadhost.db.corrupt-<time>`) and a fresh one is started; the caller rebuilds the threads from
 * pi's session directories. A data dir that cannot be written is opened on a private copy. A data
 * dir from before the database (`threads.json`) is imported once and the JSON file renamed.
 */
import { accessSync, constants, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { DatabaseSync } from 'node:sqlite'
import { writeFault, type StoreOrigin, type ThreadRow, type WriteFault } from '../port.js'
import { DB_FILE, isDamage, openChecked } from './schema.js'

const LEGACY_INDEX = 'threads.json'

export interface OpenedFile {
  db: DatabaseSync
  origin: StoreOrigin
  /** Why the file was rebuilt (origin `rebuilt`). */
  reason?: string
  /** The data dir could not be written: this is a private copy (in `copyDir`), and `fault` says why. */
  readOnly?: { fault: WriteFault; copyDir: string }
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error))

export function openFile(dataDir: string): OpenedFile {
  const file = join(dataDir, DB_FILE)
  const unwritable = unwritableDir(dataDir, file)
  if (unwritable) return openCopy(dataDir, unwritable)
  const existed = existsSync(file)
  try {
    return { db: openChecked(file, existed), origin: existed ? 'kept' : 'fresh' }
  } catch (error) {
    // Only a file whose content is proven unusable is moved aside. Any other failure (an I/O error,
    // a disk switched read-only under us while access() still says writable, a WAL index that
    // cannot be opened) says nothing against the file: it is read on a copy, the start degraded.
    if (!isDamage(error)) return openCopy(dataDir, writeFault(error) ?? { kind: 'read-only', code: codeOf(error), message: messageOf(error) })
    const aside = `${file}.corrupt-${Date.now()}`
    try {
      for (const suffix of ['', '-wal', '-shm']) {
        if (existsSync(file + suffix)) renameSync(file + suffix, aside + suffix)
      }
    } catch (moving) {
      // A damaged file on a disk that cannot be written stays where it is; the copy is rebuilt.
      const fault = writeFault(moving)
      if (fault) return openCopy(dataDir, fault)
      throw moving
    }
    return { db: openChecked(file, false), origin: 'rebuilt', reason: messageOf(error) }
  }
}

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code
  return typeof code === 'string' && code !== 'ERR_SQLITE_ERROR' ? code : 'EIO'
}

/**
 * A data dir that cannot be written at start (a read-only mount, no write permission): the database
 * (with its WAL, so the last commits are there) is copied to a private temp dir and opened there; the
 * data dir itself is never touched.
 */
function openCopy(dataDir: string, fault: WriteFault): OpenedFile {
  const copyDir = mkdtempSync(join(tmpdir(), 'threadhost-read-only-'))
  const file = join(dataDir, DB_FILE)
  const copy = join(copyDir, DB_FILE)
  const readOnly = { fault, copyDir }
  try {
    const existed = existsSync(file)
    for (const suffix of ['', '-wal']) if (existsSync(file + suffix)) copyFileSync(file + suffix, copy + suffix)
    return { db: openChecked(copy, existed), origin: existed ? 'kept' : 'fresh', readOnly }
  } catch (error) {
    for (const suffix of ['', '-wal', '-shm']) rmSync(copy + suffix, { force: true })
    return { db: openChecked(copy, false), origin: 'rebuilt', reason: messageOf(error), readOnly }
  }
}

/**
 * Why the data dir (or its database file) cannot be written, or undefined. A missing data dir is
 * created first; one whose parent is read-only is read-only itself.
 */
function unwritableDir(dataDir: string, file: string): WriteFault | undefined {
  try {
    mkdirSync(dataDir, { recursive: true })
    accessSync(dataDir, constants.W_OK)
    if (existsSync(file)) accessSync(file, constants.W_OK)
    return undefined
  } catch (error) {
    const fault = writeFault(error)
    if (fault) return fault
    throw error
  }
}

/**
 * Imports the thread index from before the database into a fresh one, once (the JSON file is
 * renamed). `floor` is the seq its threads continue above: that file kept the seq of the last
 * admission, not of the last frame. Returns the origin the store then has, and why if unreadable.
 */
export function importLegacy(dataDir: string, put: (row: ThreadRow) => void, floor: number): { origin: StoreOrigin; reason?: string } | undefined {
  const legacy = join(dataDir, LEGACY_INDEX)
  if (!existsSync(legacy)) return undefined
  let imported: { origin: StoreOrigin; reason?: string }
  try {
    const parsed = JSON.parse(readFileSync(legacy, 'utf8')) as { threads?: (ThreadRow & { seq?: number })[] }
    for (const r of parsed.threads ?? []) {
      if (typeof r?.threadId !== 'string') continue
      put({ ...r, run: r.run ?? 0, seq: Math.max(r.seq ?? 0, floor) })
    }
    imported = { origin: 'migrated' }
  } catch (error) {
    imported = { origin: 'rebuilt', reason: `${LEGACY_INDEX}: ${messageOf(error)}` }
  }
  renameSync(legacy, `${legacy}.migrated-${Date.now()}`)
  return imported
}

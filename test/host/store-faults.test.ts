/**
 * The store's part in idempotency and degraded mode: keyed answers are kept (and expire) in both
 * stores, and the SQLite store says a write cannot be made durable before one is tried.
 */
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { MemoryThreadStore } from './memory-store.js'
import { writeFault, type ThreadStore } from '../../src/host/store/port.js'
import { DB_FILE, SqliteThreadStore } from '../../src/host/store/sqlite.js'
import { diskFaults, type DiskFault } from './disk-faults.js'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) {
    chmodSync(d, 0o700)
    rmSync(d, { recursive: true, force: true })
  }
})
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'threadhost-store-faults-'))
  dirs.push(d)
  return d
}

const DAY = 24 * 60 * 60 * 1000
const answer = (key: string, at: number) => ({ key, fingerprint: `fp-${key}`, status: 201, body: `{"threadId":"${key}"}`, at })

function keepsAnswers(store: ThreadStore, reopen: () => ThreadStore): void {
  const now = Date.now()
  store.recordIdempotent(answer('old', now - DAY - 1), now - 2 * DAY)
  store.recordIdempotent(answer('new', now), now - 2 * DAY)
  const again = reopen()
  expect(again.idempotent('new', now - DAY)).toEqual(answer('new', now))
  // Past 24 h an answer is not replayed, and the next record (or the SQLite store's prune at open) drops it.
  expect(again.idempotent('old', now - DAY)).toBeUndefined()
  again.recordIdempotent(answer('newer', now + 1), now - DAY)
  expect(again.idempotent('old', 0)).toBeUndefined()
  expect(again.idempotent('missing', 0)).toBeUndefined()
}

describe('store faults and idempotent answers', () => {
  it('memory: an Idempotency-Key answer is kept for 24 h, survives a crash, and older answers are dropped', () => {
    const store = new MemoryThreadStore()
    keepsAnswers(store, () => store.crash())
  })

  it('sqlite: an Idempotency-Key answer is kept for 24 h, survives a reopen, and older answers are dropped', () => {
    const dir = tmp()
    const store = SqliteThreadStore.open(dir).store
    keepsAnswers(store, () => {
      store.close()
      return SqliteThreadStore.open(dir).store
    })
  })

  it('sqlite: checkWritable refuses with ENOSPC when the data dir has less free space than the reserve', () => {
    const dir = tmp()
    expect(() => SqliteThreadStore.open(dir).store.checkWritable()).not.toThrow()
    const starved = SqliteThreadStore.open(dir, { minFreeBytes: Number.MAX_SAFE_INTEGER }).store
    let thrown: unknown
    try {
      starved.checkWritable()
    } catch (error) {
      thrown = error
    }
    expect(writeFault(thrown)).toMatchObject({ kind: 'full', code: 'ENOSPC' })
  })

  it.skipIf(process.getuid?.() === 0)('sqlite: checkWritable refuses a read-only data dir (skipped as root, who writes anyway)', () => {
    const dir = tmp()
    const store = SqliteThreadStore.open(dir).store
    chmodSync(join(dir, DB_FILE), 0o400)
    chmodSync(dir, 0o500)
    let thrown: unknown
    try {
      store.checkWritable()
    } catch (error) {
      thrown = error
    }
    expect(writeFault(thrown)).toMatchObject({ kind: 'read-only' })
    chmodSync(join(dir, DB_FILE), 0o600)
  })

  it('write faults are told apart: full (ENOSPC, SQLITE_FULL) from read-only (EROFS, SQLITE_READONLY) from anything else', () => {
    expect(writeFault(Object.assign(new Error('x'), { code: 'ENOSPC' }))?.kind).toBe('full')
    expect(writeFault(Object.assign(new Error('database or disk is full'), { code: 'ERR_SQLITE_ERROR', errcode: 13 }))).toMatchObject({ kind: 'full', code: 'SQLITE_FULL' })
    expect(writeFault(Object.assign(new Error('x'), { code: 'EROFS' }))?.kind).toBe('read-only')
    expect(writeFault(Object.assign(new Error('attempt to write a readonly database'), { code: 'ERR_SQLITE_ERROR', errcode: 8 }))).toMatchObject({ kind: 'read-only', code: 'SQLITE_READONLY' })
    expect(writeFault(new Error('constraint failed'))).toBeUndefined()
  })

  it('an I/O error (EIO, SQLITE_IOERR: a disk switched read-only under the process) is a write fault, refused as read-only', () => {
    expect(writeFault(Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' }))).toMatchObject({ kind: 'read-only', code: 'EIO' })
    expect(writeFault(Object.assign(new Error('disk I/O error'), { code: 'ERR_SQLITE_ERROR', errcode: 778 }))).toMatchObject({ kind: 'read-only', code: 'SQLITE_IOERR' })
  })

  it('sqlite: on a disk that fails every write at start (access still says writable) the store opens read-only on a copy and never moves the database aside, healthy or damaged', () => {
    const opensReadOnly = (dir: string, fault: DiskFault) => {
      const files = Object.fromEntries(readdirSync(dir).map((f) => [f, readFileSync(join(dir, f))]))
      const disk = diskFaults(dir)
      try {
        disk.fail(fault)
        const opened = SqliteThreadStore.open(dir)
        let thrown: unknown
        try {
          opened.store.checkWritable()
        } catch (error) {
          thrown = error
        }
        expect(writeFault(thrown)).toMatchObject({ kind: 'read-only' })
        opened.store.close()
        // The data dir is exactly as it was: nothing moved aside, nothing written.
        expect(Object.fromEntries(readdirSync(dir).map((f) => [f, readFileSync(join(dir, f))]))).toEqual(files)
        return opened
      } finally {
        disk.restore()
      }
    }
    const row = { threadId: 't', title: 'T', model: 'demo', createdAt: 1, updatedAt: 2, run: 3, seq: 40 }
    for (const fault of ['io', 'cantopen'] as const) {
      const healthy = tmp()
      const first = SqliteThreadStore.open(healthy).store
      first.putThread(row)
      first.close()
      const opened = opensReadOnly(healthy, fault)
      expect(opened.origin, fault).toBe('kept')
      expect(SqliteThreadStore.open(healthy).store.threads(), fault).toMatchObject([{ threadId: 't', run: 3 }])
    }
    // A damaged file on such a disk cannot be set aside: it is rebuilt in the copy, and the start goes on.
    const damaged = tmp()
    writeFileSync(join(damaged, DB_FILE), 'garbage, not a database\n'.repeat(100))
    expect(opensReadOnly(damaged, 'io').origin).toBe('rebuilt')
  })
})

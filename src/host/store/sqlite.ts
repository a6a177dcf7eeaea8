/**
 * The store port on SQLite: one database file in the data dir (`threadhost.db`), WAL mode,
 * node:sqlite's DatabaseSync. Every write is one synchronous commit: when a method returns, the row
 * is in the WAL, so it survives a process kill. It is also fsynced (`synchronous = FULL`: it survives
 * a power cut) — except the three facts of a prompt's start that recovery reads from pi's transcript
 * (which pi writes without fsync) and that would otherwise hold up its model request: the prompt's
 * run and queue as admitted, its run started, its `ran` fate (`LATER`). A power cut can lose only
 * the last of those, never one before a commit that waited (sqlite/db.ts). A cluster node's own store
 * (`logged`) also commits a prompt's admission and a dialog's opening and outcome unsynced: its
 * thread's log has them first.
 *
 * This file composes the modules in ./sqlite/: how the file is opened (open.ts) and what its schema
 * is (schema.ts), and one module per job — the threads, the journal, the idempotency keys — over the
 * one shared handle (db.ts). It adds what spans them: the write check and the prune.
 */
import { accessSync, constants, existsSync, rmSync, statfsSync } from 'node:fs'
import { join } from 'node:path'
import {
  IDEMPOTENCY_TTL_MS,
  PRUNE_EVERY_MS,
  type DialogRow,
  type IdempotencyClaim,
  type IdempotentAnswer,
  type PromptFate,
  type PromptRow,
  type Pruned,
  type RecoveryReport,
  type ReportBody,
  type RunRow,
  type StoreOrigin,
  type ThreadRow,
  type ThreadStore,
  type WriteFault,
} from './port.js'
import { SqliteDb } from './sqlite/db.js'
import { JournalTables } from './sqlite/journal.js'
import { KeyTable } from './sqlite/keys.js'
import { importLegacy, openFile } from './sqlite/open.js'
import { DB_FILE } from './sqlite/schema.js'
import { ThreadLogTable } from './sqlite/thread-log.js'
import { ThreadTable } from './sqlite/threads.js'

export { DB_FILE } from './sqlite/schema.js'

/** Below this much free space in the data dir a write is refused before it is tried (a request is not half done). */
export const MIN_FREE_BYTES = 1 << 20

export interface OpenedStore {
  store: SqliteThreadStore
  origin: StoreOrigin
  /** Why the file was rebuilt (origin `rebuilt`). */
  reason?: string
}

/**
 * A commit that need not wait for the disk: a fact of a prompt's start, which recovery reads from pi's
 * transcript after a power cut as it does after a kill (journal.ts `reconcile`), and which lies between
 * the prompt's admission and its model request. The admission itself, what answers a request, the seq
 * ceiling and every end (a run's, a prompt's other fates, a dialog's) wait — except, on a cluster
 * node's own store, what its thread's log holds first (`logged`).
 */
const LATER = { wait: false } as const

export class SqliteThreadStore implements ThreadStore {
  readonly kind = 'sqlite'
  readonly #db: SqliteDb
  readonly #threads: ThreadTable
  readonly #journal: JournalTables
  readonly #keys: KeyTable
  readonly #dataDir: string
  readonly #minFree: number
  #pruning?: ReturnType<typeof setInterval>
  /** Opened on a data dir that could not be written: a private copy, refused for every request that writes. */
  readonly #readOnly?: { fault: WriteFault; copyDir: string }
  /** How a prompt's admission and a dialog's opening and outcome are committed: unsynced where a log has them first (`logged`). */
  #loggedCommit: { wait?: boolean } = {}

  private constructor(db: SqliteDb, dataDir: string, minFree: number, readOnly?: { fault: WriteFault; copyDir: string }) {
    this.#db = db
    this.#threads = new ThreadTable(db)
    this.#journal = new JournalTables(db)
    this.#keys = new KeyTable(db)
    this.#dataDir = dataDir
    this.#minFree = minFree
    this.#readOnly = readOnly
  }

  /**
   * Opens (or creates) `<dataDir>/threadhost.db` (sqlite/open.ts). `floorSeq` is the seq a thread
   * continues above when its own ceiling cannot be trusted: imported from threads.json (which kept
   * the seq of the last admission, not of the last frame), or opened read-only.
   *
   * Read-only (a data dir that cannot be written at start: a read-only mount, no write permission):
   * the server still starts, degraded. Recovery and the journal work on a private copy as usual — but
   * none of it is durable: `checkWritable` refuses every request that writes (503 read-only) for this
   * whole life, and every thread's seq ceiling is raised to `floorSeq` (nothing this life numbers can
   * be committed, so it numbers above anything a later life will reach; a tab resuming then gets a
   * snapshot). Writes resume with the next start on a writable data dir.
   *
   * `logged`: a cluster node's own store, where a prompt admitted here is in its thread's log before it
   * is answered (the 202 waits for its `accepted` record), and a dialog opened or settled is in the log
   * before any follower sees it or the run hears the answer. Those commits do not wait for the disk —
   * a power cut loses only what the log holds, and a node's feed of a thread with a log is the log's,
   * not its journal's. Every other commit waits as before: a thread's row, say, reaches the engine's
   * index only after its answer.
   */
  static open(dataDir: string, options: { floorSeq?: () => number; minFreeBytes?: number; logged?: boolean } = {}): OpenedStore {
    const opened = openFile(dataDir)
    const store = new SqliteThreadStore(new SqliteDb(opened.db), dataDir, options.minFreeBytes ?? MIN_FREE_BYTES, opened.readOnly)
    if (options.logged) store.#loggedCommit = LATER
    let { origin, reason } = opened
    if (opened.readOnly) {
      store.#threads.raiseSeq(options.floorSeq?.() ?? Date.now() * 10)
    } else {
      const imported = origin === 'fresh' ? importLegacy(dataDir, (row) => store.putThread(row), options.floorSeq?.() ?? 0) : undefined
      if (imported) ({ origin, reason } = imported)
      store.#startPruning()
    }
    return { store, origin, ...(reason ? { reason } : {}) }
  }

  /** At open and then hourly; never keeps the process alive, and a failure (a full disk) waits for the next turn. */
  #startPruning(): void {
    const prune = () => {
      try {
        this.prune(Date.now())
      } catch {
        // the next turn tries again; nothing depends on a prune
      }
    }
    prune()
    this.#pruning = setInterval(prune, PRUNE_EVERY_MS)
    this.#pruning.unref()
  }

  prune(now: number): Pruned {
    const pruned: Pruned = { prompts: 0, runs: 0, dialogs: 0, idempotency: 0 }
    this.#db.tx(() => {
      pruned.idempotency = this.#keys.expire(now - IDEMPOTENCY_TTL_MS)
      Object.assign(pruned, this.#journal.prune(now))
    })
    return pruned
  }

  /** Commits so far, by whether they waited for the disk (a test counts those a prompt waits for). */
  get commits(): { synced: number; unsynced: number } {
    return { ...this.#db.commits }
  }

  checkWritable(): void {
    if (this.#db.closed) return
    if (this.#readOnly) {
      const { code, message } = this.#readOnly.fault
      throw Object.assign(new Error(`${message} (read-only since the start: writes resume after a restart on a writable data dir)`), { code })
    }
    if (this.#db.fault) {
      // A write failed before: only a real commit tells whether the fault has cleared.
      this.#db.tx(() => void this.#db.run("INSERT OR REPLACE INTO meta (key, value) VALUES ('probe', ?)", String(Date.now())))
      this.#db.fault = undefined
      return
    }
    try {
      accessSync(this.#dataDir, constants.W_OK)
      const file = join(this.#dataDir, DB_FILE)
      if (existsSync(file)) accessSync(file, constants.W_OK)
      const fs = statfsSync(this.#dataDir)
      const free = Number(fs.bavail) * Number(fs.bsize)
      if (free < this.#minFree) {
        throw Object.assign(new Error(`no space left in ${this.#dataDir}: ${free} bytes free`), { code: 'ENOSPC' })
      }
    } catch (error) {
      throw this.#db.note(error)
    }
  }

  idempotent(key: string, since: number): IdempotentAnswer | undefined {
    return this.#keys.get(key, since)
  }

  recordIdempotent(answer: IdempotentAnswer, expireBefore: number): void {
    this.#keys.record(answer, expireBefore)
  }

  threads(): ThreadRow[] {
    return this.#threads.all()
  }

  /**
   * What the embedded cluster adapter (src/host/cluster/embedded.ts) keeps in this file beside the
   * store's own tables: the thread logs, and the same idempotency keys this store answers from.
   */
  clusterTables(): { log: ThreadLogTable; keys: KeyTable } {
    return { log: new ThreadLogTable(this.#db), keys: this.#keys }
  }

  putThread(row: ThreadRow): void {
    this.#threads.put(row)
  }

  deleteThread(threadId: string): void {
    this.#threads.delete(threadId)
  }

  reserveSeq(threadId: string, ceiling: number): void {
    this.#threads.reserveSeq(threadId, ceiling)
  }

  admitPrompt(prompt: PromptRow, thread: ThreadRow, claim?: IdempotencyClaim): void {
    this.#db.tx(() => {
      this.#journal.admit(prompt)
      this.#threads.put(thread)
      if (claim) this.#keys.claim(claim, prompt, prompt.acceptedAt)
    }, this.#loggedCommit)
  }

  promptAdmitted(threadId: string, messageId: string, admission: { run: number; queued: boolean }, thread: ThreadRow): void {
    this.#db.tx(() => {
      this.#journal.admitted(threadId, messageId, admission)
      this.#threads.put(thread)
    }, LATER)
  }

  withdrawPrompt(threadId: string, messageId: string): void {
    this.#journal.withdraw(threadId, messageId)
  }

  settlePrompt(threadId: string, messageId: string, fate: PromptFate): boolean {
    let known = true
    this.#db.tx(() => void (known = this.#journal.settlePrompt(threadId, messageId, fate)), fate.kind === 'ran' ? LATER : {})
    return known
  }

  openPrompts(threadId?: string): PromptRow[] {
    return this.#journal.openPrompts(threadId)
  }

  startRun(threadId: string, run: number, at: number): void {
    this.#db.tx(() => {
      this.#journal.startRun(threadId, run, at)
      this.#threads.raiseRun(threadId, run)
    }, LATER)
  }

  endRun(threadId: string, run: number, aborted: boolean, at: number, by: 'settled' | 'restart'): void {
    this.#journal.endRun(threadId, run, aborted, at, by)
  }

  openRuns(threadId?: string): RunRow[] {
    return this.#journal.openRuns(threadId)
  }

  openDialog(row: DialogRow): void {
    this.#db.tx(() => this.#journal.openDialog(row), this.#loggedCommit)
  }

  settleDialog(threadId: string, dialogId: string, outcome: string): void {
    this.#db.tx(() => this.#journal.settleDialog(threadId, dialogId, outcome), this.#loggedCommit)
  }

  openDialogs(threadId?: string): DialogRow[] {
    return this.#journal.openDialogs(threadId)
  }

  addReport(threadId: string, afterRun: number, body: ReportBody, options: { delivered?: boolean } = {}): void {
    this.#journal.addReport(threadId, afterRun, body, options)
  }

  reports(threadId: string): RecoveryReport[] {
    return this.#journal.reports(threadId)
  }

  markDelivered(threadId: string, ids: number[]): void {
    this.#journal.markDelivered(threadId, ids)
  }

  journal(threadId: string): { prompts: PromptRow[]; runs: RunRow[]; dialogs: DialogRow[] } {
    return this.#journal.journal(threadId)
  }

  close(): void {
    if (this.#db.closed) return
    clearInterval(this.#pruning)
    this.#db.close()
    if (this.#readOnly) rmSync(this.#readOnly.copyDir, { recursive: true, force: true })
  }
}

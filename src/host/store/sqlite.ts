/**
 * The store port on SQLite: one database file in the data dir (`threadhost.db`), WAL mode,
 * node:sqlite's DatabaseSync. Every write is one synchronous commit: when a method returns, the row
 * is in the WAL (`synchronous = FULL`: fsynced, so it survives a process kill and a power cut).
 *
 * Opening never fails because of the file's contents: a file that is not a database, fails its
 * integrity check or has a schema from the future is moved aside (`threadhost.db.corrupt-<time>`)
 * and a fresh one is started; the caller rebuilds the threads from pi's session directories. A data
 * dir from before the database (`threads.json`) is imported once and the JSON file renamed.
 */
import { accessSync, constants, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statfsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync, type StatementSync } from 'node:sqlite'
import type { ThinkingLevel } from '../../schemas/index.js'
import { keyedRequest } from './keyed.js'
import {
  IDEMPOTENCY_TTL_MS,
  JOURNAL_RETENTION_MS,
  PRUNE_EVERY_MS,
  writeFault,
  type Pruned,
  type DialogRow,
  type IdempotentAnswer,
  type WriteFault,
  type PromptFate,
  type PromptRow,
  type RecoveryReport,
  type ReportBody,
  type RunRow,
  type StoreOrigin,
  type ThreadFacts,
  type ThreadRow,
  type ThreadStore,
} from './port.js'

export const DB_FILE = 'threadhost.db'
const LEGACY_INDEX = 'threads.json'
/** 2: `threads.facts`, what a thread's conversation says for its summary (v1 files gain the column). */
const SCHEMA_VERSION = 2

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS threads (
  thread_id TEXT PRIMARY KEY, title TEXT NOT NULL, model TEXT NOT NULL, thinking_level TEXT, cwd TEXT,
  created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, run INTEGER NOT NULL, seq INTEGER NOT NULL,
  facts TEXT
);
CREATE TABLE IF NOT EXISTS prompts (
  thread_id TEXT NOT NULL, message_id TEXT NOT NULL, text TEXT NOT NULL, admission TEXT NOT NULL,
  deliver_as TEXT NOT NULL, queued INTEGER NOT NULL, run INTEGER NOT NULL, accepted_at INTEGER NOT NULL,
  fate TEXT, fate_run INTEGER, reason TEXT, final INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (thread_id, message_id)
);
CREATE INDEX IF NOT EXISTS prompts_open ON prompts (thread_id) WHERE final = 0;
CREATE TABLE IF NOT EXISTS runs (
  thread_id TEXT NOT NULL, run INTEGER NOT NULL, started_at INTEGER NOT NULL, ended_at INTEGER,
  aborted INTEGER, ended_by TEXT, PRIMARY KEY (thread_id, run)
);
CREATE INDEX IF NOT EXISTS runs_open ON runs (thread_id) WHERE ended_at IS NULL;
CREATE TABLE IF NOT EXISTS dialogs (
  thread_id TEXT NOT NULL, dialog_id TEXT NOT NULL, run INTEGER NOT NULL, opened_at INTEGER NOT NULL,
  outcome TEXT, PRIMARY KEY (thread_id, dialog_id)
);
CREATE INDEX IF NOT EXISTS dialogs_open ON dialogs (thread_id) WHERE outcome IS NULL;
CREATE TABLE IF NOT EXISTS reports (
  id INTEGER PRIMARY KEY AUTOINCREMENT, thread_id TEXT NOT NULL, after_run INTEGER NOT NULL,
  delivered INTEGER NOT NULL DEFAULT 0, body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS reports_thread ON reports (thread_id);
CREATE TABLE IF NOT EXISTS idempotency (
  key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, status INTEGER NOT NULL, body TEXT NOT NULL, at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS idempotency_at ON idempotency (at);
`

/** Below this much free space in the data dir a write is refused before it is tried (a request is not half done). */
export const MIN_FREE_BYTES = 1 << 20

type Row = Record<string, unknown>

export interface OpenedStore {
  store: SqliteThreadStore
  origin: StoreOrigin
  /** Why the file was rebuilt (origin `rebuilt`). */
  reason?: string
}

export class SqliteThreadStore implements ThreadStore {
  readonly kind = 'sqlite'
  readonly #db: DatabaseSync
  readonly #statements = new Map<string, StatementSync>()
  readonly #dataDir: string
  readonly #minFree: number
  #closed = false
  /** The last write failure that said the disk is full or read-only; cleared by a probe write that succeeds. */
  #fault?: WriteFault
  #pruning?: ReturnType<typeof setInterval>
  /** Opened on a data dir that could not be written: a private copy, refused for every request that writes. */
  #readOnly?: { fault: WriteFault; copyDir: string }

  private constructor(db: DatabaseSync, dataDir: string, minFree: number) {
    this.#db = db
    this.#dataDir = dataDir
    this.#minFree = minFree
  }

  /**
   * Opens (or creates) `<dataDir>/threadhost.db`. `floorSeq` is the seq a thread imported from
   * threads.json continues above: that file kept the seq of the last admission, not of the last frame.
   */
  static open(dataDir: string, options: { floorSeq?: () => number; minFreeBytes?: number } = {}): OpenedStore {
    const file = join(dataDir, DB_FILE)
    const unwritable = unwritableDir(dataDir, file)
    if (unwritable) return SqliteThreadStore.#openReadOnly(dataDir, unwritable, options)
    const existed = existsSync(file)
    let db: DatabaseSync
    let origin: StoreOrigin = existed ? 'kept' : 'fresh'
    let reason: string | undefined
    try {
      db = openChecked(file)
    } catch (error) {
      // A file SQLite may not write is not a corrupt one: it is read, never moved aside.
      const fault = writeFault(error)
      if (fault) return SqliteThreadStore.#openReadOnly(dataDir, fault, options)
      reason = error instanceof Error ? error.message : String(error)
      const aside = `${file}.corrupt-${Date.now()}`
      for (const suffix of ['', '-wal', '-shm']) {
        if (existsSync(file + suffix)) renameSync(file + suffix, aside + suffix)
      }
      db = openChecked(file)
      origin = 'rebuilt'
    }
    const store = new SqliteThreadStore(db, dataDir, options.minFreeBytes ?? MIN_FREE_BYTES)
    const legacy = join(dataDir, LEGACY_INDEX)
    if (origin === 'fresh' && existsSync(legacy)) {
      try {
        const parsed = JSON.parse(readFileSync(legacy, 'utf8')) as { threads?: (ThreadRow & { seq?: number })[] }
        const floor = options.floorSeq?.() ?? 0
        for (const r of parsed.threads ?? []) {
          if (typeof r?.threadId !== 'string') continue
          store.putThread({ ...r, run: r.run ?? 0, seq: Math.max(r.seq ?? 0, floor) })
        }
        origin = 'migrated'
      } catch (error) {
        reason = `${LEGACY_INDEX}: ${error instanceof Error ? error.message : String(error)}`
        origin = 'rebuilt'
      }
      renameSync(legacy, `${legacy}.migrated-${Date.now()}`)
    }
    store.#startPruning()
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
    const before = now - JOURNAL_RETENTION_MS
    this.#tx(() => {
      pruned.idempotency = Number(this.#run('DELETE FROM idempotency WHERE at < ?', now - IDEMPOTENCY_TTL_MS).changes)
      pruned.prompts = Number(this.#run('DELETE FROM prompts WHERE final = 1 AND accepted_at < ?', before).changes)
      pruned.runs = Number(
        this.#run(
          `DELETE FROM runs WHERE ended_at IS NOT NULL AND ended_at < ? AND NOT EXISTS (
             SELECT 1 FROM prompts p WHERE p.thread_id = runs.thread_id AND p.final = 0 AND p.fate = 'ran' AND p.fate_run = runs.run)`,
          before,
        ).changes,
      )
      pruned.dialogs = Number(this.#run('DELETE FROM dialogs WHERE outcome IS NOT NULL AND opened_at < ?', before).changes)
    })
    return pruned
  }

  /**
   * A data dir that cannot be written at start (a read-only mount, no write permission): the server
   * still starts, degraded. The database (with its WAL, so the last commits are there) is copied to a
   * private temp dir and opened there, so recovery and the journal work as usual — but none of it is
   * durable: `checkWritable` refuses every request that writes (503 read-only) for this whole life, and
   * every thread's seq ceiling is raised to `floorSeq` (nothing this life numbers can be committed, so
   * it numbers above anything a later life will reach; a tab resuming then gets a snapshot). The
   * data dir itself is never touched. Writes resume with the next start on a writable data dir.
   */
  static #openReadOnly(dataDir: string, fault: WriteFault, options: { floorSeq?: () => number; minFreeBytes?: number }): OpenedStore {
    const copyDir = mkdtempSync(join(tmpdir(), 'threadhost-read-only-'))
    const file = join(dataDir, DB_FILE)
    const copy = join(copyDir, DB_FILE)
    let origin: StoreOrigin = existsSync(file) ? 'kept' : 'fresh'
    let reason: string | undefined
    let db: DatabaseSync
    try {
      for (const suffix of ['', '-wal']) if (existsSync(file + suffix)) copyFileSync(file + suffix, copy + suffix)
      db = openChecked(copy)
    } catch (error) {
      reason = error instanceof Error ? error.message : String(error)
      for (const suffix of ['', '-wal', '-shm']) rmSync(copy + suffix, { force: true })
      db = openChecked(copy)
      origin = 'rebuilt'
    }
    const store = new SqliteThreadStore(db, dataDir, options.minFreeBytes ?? MIN_FREE_BYTES)
    store.#readOnly = { fault, copyDir }
    const floor = options.floorSeq?.() ?? Date.now() * 10
    db.prepare('UPDATE threads SET seq = ? WHERE seq < ?').run(floor, floor)
    return { store, origin, ...(reason ? { reason } : {}) }
  }

  #run(sql: string, ...params: (string | number | null)[]): { changes: number | bigint } {
    let statement = this.#statements.get(sql)
    if (!statement) {
      statement = this.#db.prepare(sql)
      this.#statements.set(sql, statement)
    }
    try {
      return statement.run(...params)
    } catch (error) {
      throw this.#noted(error)
    }
  }

  /** Remembers a full-disk or read-only failure, so the next request is refused before it runs. */
  #noted(error: unknown): unknown {
    this.#fault = writeFault(error) ?? this.#fault
    return error
  }

  #all(sql: string, ...params: (string | number | null)[]): Row[] {
    let statement = this.#statements.get(sql)
    if (!statement) {
      statement = this.#db.prepare(sql)
      this.#statements.set(sql, statement)
    }
    return statement.all(...params) as Row[]
  }

  #tx(fn: () => void): void {
    if (this.#closed) return
    try {
      this.#db.exec('BEGIN IMMEDIATE')
    } catch (error) {
      throw this.#noted(error)
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
      throw this.#noted(error)
    }
  }

  checkWritable(): void {
    if (this.#closed) return
    if (this.#readOnly) {
      const { code, message } = this.#readOnly.fault
      throw Object.assign(new Error(`${message} (read-only since the start: writes resume after a restart on a writable data dir)`), { code })
    }
    if (this.#fault) {
      // A write failed before: only a real commit tells whether the fault has cleared.
      this.#tx(() => void this.#run("INSERT OR REPLACE INTO meta (key, value) VALUES ('probe', ?)", String(Date.now())))
      this.#fault = undefined
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
      throw this.#noted(error)
    }
  }

  idempotent(key: string, since: number): IdempotentAnswer | undefined {
    const r = this.#all('SELECT * FROM idempotency WHERE key = ? AND at >= ?', key, since)[0]
    if (!r) return undefined
    const answer: IdempotentAnswer = { key: String(r.key), fingerprint: String(r.fingerprint), status: Number(r.status), body: String(r.body), at: Number(r.at) }
    if (answer.status === 0) answer.pending = JSON.parse(answer.body) as { threadId: string; messageId: string }
    return answer
  }

  recordIdempotent(answer: IdempotentAnswer, expireBefore: number): void {
    this.#tx(() => {
      this.#run('DELETE FROM idempotency WHERE at < ?', expireBefore)
      this.#run(
        'INSERT OR REPLACE INTO idempotency (key, fingerprint, status, body, at) VALUES (?, ?, ?, ?, ?)',
        answer.key,
        answer.fingerprint,
        answer.status,
        answer.body,
        answer.at,
      )
    })
  }

  threads(): ThreadRow[] {
    return this.#all('SELECT * FROM threads ORDER BY created_at').map(threadOf)
  }

  putThread(row: ThreadRow): void {
    if (this.#closed) return
    this.#putThread(row)
  }

  #putThread(row: ThreadRow): void {
    this.#run(
      `INSERT INTO threads (thread_id, title, model, thinking_level, cwd, created_at, updated_at, run, seq, facts)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (thread_id) DO UPDATE SET title = excluded.title, model = excluded.model,
         thinking_level = excluded.thinking_level, cwd = excluded.cwd, created_at = excluded.created_at,
         updated_at = excluded.updated_at, run = max(threads.run, excluded.run), seq = max(threads.seq, excluded.seq),
         facts = coalesce(excluded.facts, threads.facts)`,
      row.threadId,
      row.title,
      row.model,
      row.thinkingLevel ?? null,
      row.cwd ?? null,
      row.createdAt,
      row.updatedAt,
      row.run,
      row.seq,
      row.facts ? JSON.stringify(row.facts) : null,
    )
  }

  deleteThread(threadId: string): void {
    this.#tx(() => {
      for (const table of ['threads', 'prompts', 'runs', 'dialogs', 'reports']) this.#run(`DELETE FROM ${table} WHERE thread_id = ?`, threadId)
    })
  }

  reserveSeq(threadId: string, ceiling: number): void {
    if (this.#closed) return
    this.#run('UPDATE threads SET seq = ? WHERE thread_id = ? AND seq < ?', ceiling, threadId, ceiling)
  }

  promptAdmitted(threadId: string, messageId: string, admission: { run: number; queued: boolean }, thread: ThreadRow): void {
    this.#tx(() => {
      this.#run('UPDATE prompts SET run = ?, queued = ? WHERE thread_id = ? AND message_id = ?', admission.run, admission.queued ? 1 : 0, threadId, messageId)
      this.#putThread(thread)
    })
  }

  withdrawPrompt(threadId: string, messageId: string): void {
    if (this.#closed) return
    this.#run('DELETE FROM prompts WHERE thread_id = ? AND message_id = ?', threadId, messageId)
  }

  admitPrompt(prompt: PromptRow, thread: ThreadRow): void {
    this.#tx(() => {
      const fate = fateColumns(prompt.fate)
      this.#run(
        `INSERT OR REPLACE INTO prompts (thread_id, message_id, text, admission, deliver_as, queued, run, accepted_at, fate, fate_run, reason, final)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        prompt.threadId,
        prompt.messageId,
        prompt.text,
        prompt.admission,
        prompt.deliverAs,
        prompt.queued ? 1 : 0,
        prompt.run,
        prompt.acceptedAt,
        fate.fate,
        fate.fateRun,
        fate.reason,
        this.#isFinal(prompt.threadId, prompt.fate) ? 1 : 0,
      )
      this.#putThread(thread)
      const keyed = keyedRequest.getStore()
      if (keyed) {
        // Status 0 marks a claim whose answer is the journaled prompt (see IdempotentAnswer.pending).
        this.#run(
          'INSERT OR IGNORE INTO idempotency (key, fingerprint, status, body, at) VALUES (?, ?, 0, ?, ?)',
          keyed.key,
          keyed.fingerprint,
          JSON.stringify({ threadId: prompt.threadId, messageId: prompt.messageId }),
          prompt.acceptedAt,
        )
      }
    })
  }

  #isFinal(threadId: string, fate: PromptFate | undefined): boolean {
    if (!fate) return false
    if (fate.kind !== 'ran') return true
    return this.#all('SELECT 1 FROM runs WHERE thread_id = ? AND run = ? AND ended_at IS NOT NULL', threadId, fate.run).length > 0
  }

  settlePrompt(threadId: string, messageId: string, fate: PromptFate): boolean {
    if (this.#closed) return true
    const known = this.#all('SELECT final FROM prompts WHERE thread_id = ? AND message_id = ?', threadId, messageId)[0]
    if (!known) return false
    if (known.final) return true
    const columns = fateColumns(fate)
    this.#run(
      'UPDATE prompts SET fate = ?, fate_run = ?, reason = ?, final = ? WHERE thread_id = ? AND message_id = ? AND final = 0',
      columns.fate,
      columns.fateRun,
      columns.reason,
      this.#isFinal(threadId, fate) ? 1 : 0,
      threadId,
      messageId,
    )
    return true
  }

  openPrompts(threadId?: string): PromptRow[] {
    const rows =
      threadId === undefined
        ? this.#all('SELECT * FROM prompts WHERE final = 0 ORDER BY accepted_at, rowid')
        : this.#all('SELECT * FROM prompts WHERE final = 0 AND thread_id = ? ORDER BY accepted_at, rowid', threadId)
    return rows.map(promptOf)
  }

  startRun(threadId: string, run: number, at: number): void {
    this.#tx(() => {
      this.#run('INSERT OR IGNORE INTO runs (thread_id, run, started_at) VALUES (?, ?, ?)', threadId, run, at)
      this.#run('UPDATE threads SET run = ? WHERE thread_id = ? AND run < ?', run, threadId, run)
    })
  }

  endRun(threadId: string, run: number, aborted: boolean, at: number, by: 'settled' | 'restart'): void {
    this.#tx(() => {
      this.#run('INSERT OR IGNORE INTO runs (thread_id, run, started_at) VALUES (?, ?, ?)', threadId, run, at)
      this.#run(
        'UPDATE runs SET ended_at = ?, aborted = ?, ended_by = ? WHERE thread_id = ? AND run = ? AND ended_at IS NULL',
        at,
        aborted ? 1 : 0,
        by,
        threadId,
        run,
      )
      this.#run("UPDATE prompts SET final = 1 WHERE thread_id = ? AND final = 0 AND fate = 'ran' AND fate_run = ?", threadId, run)
    })
  }

  openRuns(threadId?: string): RunRow[] {
    const rows =
      threadId === undefined
        ? this.#all('SELECT * FROM runs WHERE ended_at IS NULL ORDER BY thread_id, run')
        : this.#all('SELECT * FROM runs WHERE ended_at IS NULL AND thread_id = ? ORDER BY run', threadId)
    return rows.map(runOf)
  }

  openDialog(row: DialogRow): void {
    if (this.#closed) return
    this.#run(
      'INSERT OR IGNORE INTO dialogs (thread_id, dialog_id, run, opened_at) VALUES (?, ?, ?, ?)',
      row.threadId,
      row.dialogId,
      row.run,
      row.openedAt,
    )
  }

  settleDialog(threadId: string, dialogId: string, outcome: string): void {
    if (this.#closed) return
    this.#run('UPDATE dialogs SET outcome = ? WHERE thread_id = ? AND dialog_id = ? AND outcome IS NULL', outcome, threadId, dialogId)
  }

  openDialogs(threadId?: string): DialogRow[] {
    const rows =
      threadId === undefined
        ? this.#all('SELECT * FROM dialogs WHERE outcome IS NULL ORDER BY opened_at')
        : this.#all('SELECT * FROM dialogs WHERE outcome IS NULL AND thread_id = ? ORDER BY opened_at', threadId)
    return rows.map(dialogOf)
  }

  addReport(threadId: string, afterRun: number, body: ReportBody, options: { delivered?: boolean } = {}): void {
    if (this.#closed) return
    this.#run(
      'INSERT INTO reports (thread_id, after_run, delivered, body) VALUES (?, ?, ?, ?)',
      threadId,
      afterRun,
      options.delivered ? 1 : 0,
      JSON.stringify(body),
    )
  }

  reports(threadId: string): RecoveryReport[] {
    return this.#all('SELECT * FROM reports WHERE thread_id = ? ORDER BY id', threadId).map((r) => ({
      id: Number(r.id),
      threadId: String(r.thread_id),
      afterRun: Number(r.after_run),
      delivered: Boolean(r.delivered),
      body: JSON.parse(String(r.body)) as ReportBody,
    }))
  }

  markDelivered(threadId: string, ids: number[]): void {
    this.#tx(() => {
      for (const id of ids) this.#run('UPDATE reports SET delivered = 1 WHERE thread_id = ? AND id = ?', threadId, id)
    })
  }

  journal(threadId: string): { prompts: PromptRow[]; runs: RunRow[]; dialogs: DialogRow[] } {
    return {
      prompts: this.#all('SELECT * FROM prompts WHERE thread_id = ? ORDER BY accepted_at, rowid', threadId).map(promptOf),
      runs: this.#all('SELECT * FROM runs WHERE thread_id = ? ORDER BY run', threadId).map(runOf),
      dialogs: this.#all('SELECT * FROM dialogs WHERE thread_id = ? ORDER BY opened_at, rowid', threadId).map(dialogOf),
    }
  }

  close(): void {
    if (this.#closed) return
    this.#closed = true
    clearInterval(this.#pruning)
    this.#statements.clear()
    try {
      this.#db.close()
    } catch {
      // already closed
    }
    if (this.#readOnly) rmSync(this.#readOnly.copyDir, { recursive: true, force: true })
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

/** Opens the file and proves it is a usable database of this schema; throws otherwise (the file is then left as it was). */
function openChecked(file: string): DatabaseSync {
  const db = new DatabaseSync(file)
  try {
    db.exec('PRAGMA busy_timeout = 5000')
    const mode = db.prepare('PRAGMA journal_mode = WAL').get() as Row | undefined
    if (String(mode?.journal_mode).toLowerCase() !== 'wal') throw new Error(`journal_mode is ${String(mode?.journal_mode)}, not wal`)
    db.exec('PRAGMA synchronous = FULL')
    const check = db.prepare('PRAGMA quick_check').all() as Row[]
    const verdict = check.map((r) => String(Object.values(r)[0])).join('; ')
    if (verdict !== 'ok') throw new Error(`integrity check: ${verdict}`)
    db.exec(SCHEMA)
    const version = db.prepare("SELECT value FROM meta WHERE key = 'schema'").get() as Row | undefined
    if (version === undefined) db.prepare("INSERT INTO meta (key, value) VALUES ('schema', ?)").run(String(SCHEMA_VERSION))
    else if (Number(version.value) === 1) {
      db.exec(`BEGIN; ALTER TABLE threads ADD COLUMN facts TEXT; UPDATE meta SET value = '${SCHEMA_VERSION}' WHERE key = 'schema'; COMMIT`)
    } else if (Number(version.value) !== SCHEMA_VERSION) throw new Error(`schema version ${String(version.value)}, expected ${SCHEMA_VERSION}`)
    return db
  } catch (error) {
    try {
      db.close()
    } catch {
      // the handle may already be unusable
    }
    throw error
  }
}

function fateColumns(fate: PromptFate | undefined): { fate: string | null; fateRun: number | null; reason: string | null } {
  if (!fate) return { fate: null, fateRun: null, reason: null }
  return {
    fate: fate.kind,
    fateRun: fate.kind === 'ran' ? fate.run : null,
    reason: fate.kind === 'rejected' ? fate.reason : null,
  }
}

function threadOf(r: Row): ThreadRow {
  return {
    threadId: String(r.thread_id),
    title: String(r.title),
    model: String(r.model),
    ...(r.thinking_level != null ? { thinkingLevel: String(r.thinking_level) as ThinkingLevel } : {}),
    ...(r.cwd != null ? { cwd: String(r.cwd) } : {}),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
    run: Number(r.run),
    seq: Number(r.seq),
    ...(typeof r.facts === 'string' ? { facts: parseFacts(r.facts) } : {}),
  }
}

/** A damaged facts cell costs the summary its preview, never the thread. */
function parseFacts(text: string): ThreadFacts {
  try {
    const value: unknown = JSON.parse(text)
    return value && typeof value === 'object' ? (value as ThreadFacts) : {}
  } catch {
    return {}
  }
}

function promptOf(r: Row): PromptRow {
  const fate: PromptFate | undefined =
    r.fate === 'ran'
      ? { kind: 'ran', run: Number(r.fate_run) }
      : r.fate === 'rejected'
        ? { kind: 'rejected', reason: String(r.reason) }
        : r.fate === 'restored' || r.fate === 'handled'
          ? { kind: r.fate }
          : undefined
  return {
    threadId: String(r.thread_id),
    messageId: String(r.message_id),
    text: String(r.text),
    admission: r.admission === 'reject' ? 'reject' : 'enqueue',
    deliverAs: r.deliver_as === 'followUp' ? 'followUp' : 'steer',
    queued: Boolean(r.queued),
    run: Number(r.run),
    acceptedAt: Number(r.accepted_at),
    ...(fate ? { fate } : {}),
  }
}

function runOf(r: Row): RunRow {
  return {
    threadId: String(r.thread_id),
    run: Number(r.run),
    startedAt: Number(r.started_at),
    ...(r.ended_at != null ? { endedAt: Number(r.ended_at), aborted: Boolean(r.aborted), endedBy: r.ended_by === 'restart' ? 'restart' : 'settled' } : {}),
  }
}

function dialogOf(r: Row): DialogRow {
  return {
    threadId: String(r.thread_id),
    dialogId: String(r.dialog_id),
    run: Number(r.run),
    openedAt: Number(r.opened_at),
    ...(r.outcome != null ? { outcome: String(r.outcome) } : {}),
  }
}

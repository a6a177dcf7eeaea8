/**
 * The database file's schema and its migrations: what `threadhost.db` holds, and the check a file
 * must pass before it is used (a WAL database, intact, of a schema this threadhost knows — migrated
 * in place from an older one).
 */
import { DatabaseSync } from 'node:sqlite'
import type { Row } from './db.js'

export const DB_FILE = 'threadhost.db'
/**
 * 2: `threads.facts`, what a thread's conversation says for its summary (v1 files gain the column).
 * 3: `prompts.images`, a prompt's images (JSON), so a prompt handed back after a crash comes back whole.
 * `thread_log` and `thread_checkpoint` (the embedded cluster adapter's thread logs and their
 * checkpoints, src/host/cluster/embedded.ts) are tables of their own, created where missing: no column
 * of an older file changes, so the version stays.
 */
export const SCHEMA_VERSION = 3

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
  fate TEXT, fate_run INTEGER, reason TEXT, final INTEGER NOT NULL DEFAULT 0, images TEXT,
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
CREATE TABLE IF NOT EXISTS thread_log (
  thread_id TEXT NOT NULL, position INTEGER NOT NULL, record TEXT NOT NULL, PRIMARY KEY (thread_id, position)
);
CREATE TABLE IF NOT EXISTS thread_checkpoint (thread_id TEXT PRIMARY KEY, position INTEGER NOT NULL, state TEXT NOT NULL);
`

/** What the file holds is not a usable database of this schema: it is set aside and rebuilt. */
export class FileDamaged extends Error {}

/** SQLite's primary codes for a file whose content is not a database: SQLITE_CORRUPT, SQLITE_NOTADB. */
const DAMAGE_CODES = new Set([11, 26])

/** The open failed because of the file's content, not because the disk or the process failed it. */
export function isDamage(error: unknown): boolean {
  if (error instanceof FileDamaged) return true
  const errcode = (error as { errcode?: unknown } | undefined)?.errcode
  return typeof errcode === 'number' && DAMAGE_CODES.has(errcode & 0xff)
}

/**
 * Opens the file and proves it is a usable database of this schema; throws otherwise (the file is
 * then left as it was). A file that `existed` must hold the schema already: one without it (empty,
 * 0 bytes: a crash or a truncation) would open as a valid empty database and hide every thread.
 */
export function openChecked(file: string, existed: boolean): DatabaseSync {
  const db = new DatabaseSync(file)
  try {
    db.exec('PRAGMA busy_timeout = 5000')
    const mode = db.prepare('PRAGMA journal_mode = WAL').get() as Row | undefined
    if (String(mode?.journal_mode).toLowerCase() !== 'wal') throw new Error(`journal_mode is ${String(mode?.journal_mode)}, not wal`)
    db.exec('PRAGMA synchronous = FULL')
    const check = db.prepare('PRAGMA quick_check').all() as Row[]
    const verdict = check.map((r) => String(Object.values(r)[0])).join('; ')
    if (verdict !== 'ok') throw new FileDamaged(`integrity check: ${verdict}`)
    if (existed && !db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").get()) {
      throw new FileDamaged('no threadhost schema in the file (an empty file: truncated, or cut off by a crash)')
    }
    db.exec(SCHEMA)
    migrate(db)
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

/** The columns each schema version added, by the version that added them. */
const ADDED: Record<number, { table: string; column: string }[]> = {
  2: [{ table: 'threads', column: 'facts TEXT' }],
  3: [{ table: 'prompts', column: 'images TEXT' }],
}

/**
 * Brings an older schema up to SCHEMA_VERSION in place, in one commit; a newer one is refused (the
 * file is then set aside, never downgraded). A table the older file lacked was just created whole
 * by SCHEMA, so a column is added only where it is missing.
 */
function migrate(db: DatabaseSync): void {
  const version = db.prepare("SELECT value FROM meta WHERE key = 'schema'").get() as Row | undefined
  if (version === undefined) return void db.prepare("INSERT INTO meta (key, value) VALUES ('schema', ?)").run(String(SCHEMA_VERSION))
  const from = Number(version.value)
  if (from === SCHEMA_VERSION) return
  if (!Number.isInteger(from) || from < 1 || from > SCHEMA_VERSION) throw new FileDamaged(`schema version ${String(version.value)}, expected ${SCHEMA_VERSION}`)
  db.exec('BEGIN')
  try {
    for (let v = from + 1; v <= SCHEMA_VERSION; v++) {
      for (const { table, column } of ADDED[v] ?? []) {
        const name = column.split(' ')[0]
        const has = (db.prepare(`PRAGMA table_info(${table})`).all() as Row[]).some((c) => c.name === name)
        if (!has) db.exec(`ALTER TABLE ${table} ADD COLUMN ${column}`)
      }
    }
    db.prepare("UPDATE meta SET value = ? WHERE key = 'schema'").run(String(SCHEMA_VERSION))
    db.exec('COMMIT')
  } catch (error) {
    db.exec('ROLLBACK')
    throw error
  }
}

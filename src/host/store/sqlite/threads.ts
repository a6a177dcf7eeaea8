/** The `threads` table: one row per thread, whose run counter and seq ceiling never go back. */
import type { ThinkingLevel } from '../../../schemas/index.js'
import type { ThreadFacts, ThreadRow } from '../port.js'
import type { Row, SqliteDb } from './db.js'

/** The tables that hold a thread's rows: a deleted thread leaves nothing in any of them. */
const THREAD_TABLES = ['threads', 'prompts', 'runs', 'dialogs', 'reports'] as const

export class ThreadTable {
  constructor(readonly db: SqliteDb) {}

  all(): ThreadRow[] {
    return this.db.all('SELECT * FROM threads ORDER BY created_at').map(threadOf)
  }

  /** Inserts or replaces the row; the run counter and the seq ceiling keep the higher value, and unknown facts keep the old. */
  put(row: ThreadRow): void {
    this.db.run(
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

  /** The thread and its whole journal, in one commit. */
  delete(threadId: string): void {
    this.db.tx(() => {
      for (const table of THREAD_TABLES) this.db.run(`DELETE FROM ${table} WHERE thread_id = ?`, threadId)
    })
  }

  reserveSeq(threadId: string, ceiling: number): void {
    this.db.run('UPDATE threads SET seq = ? WHERE thread_id = ? AND seq < ?', ceiling, threadId, ceiling)
  }

  /** Every thread continues at or above `floor` (a life whose frames cannot have been reserved). */
  raiseSeq(floor: number): void {
    this.db.run('UPDATE threads SET seq = ? WHERE seq < ?', floor, floor)
  }

  raiseRun(threadId: string, run: number): void {
    this.db.run('UPDATE threads SET run = ? WHERE thread_id = ? AND run < ?', run, threadId, run)
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

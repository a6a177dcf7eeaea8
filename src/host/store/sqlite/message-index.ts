/**
 * The full-text index of every thread's messages (SQLite FTS5, which node:sqlite ships): what the
 * thread list's search asks, so no keystroke reads a session file. It is derived data — pi's session
 * files are the transcripts — kept in its own database file beside `threadhost.db`: a lost or damaged
 * index is rebuilt from the transcripts, never a reason to refuse a start or a write.
 */
import { existsSync, renameSync, rmSync } from 'node:fs'
import { DatabaseSync } from 'node:sqlite'
import { SqliteDb, type Param, type Row } from './db.js'

export const INDEX_FILE = 'messages.db'

/** One message as indexed: a prompt or a reply's final text. */
export interface IndexedMessage {
  messageId: string
  kind: 'user' | 'assistant'
  text: string
}

export interface MessageHit {
  threadId: string
  messageId: string
  kind: 'user' | 'assistant'
  /** Some words around the match, the matched words marked by `matches`. */
  snippet: string
  /** `[start, end)` offsets into `snippet` of each matched word. */
  matches: Array<[number, number]>
  /** How well it matches (FTS5's bm25, lower is better): how hits of several indexes are put in one order. */
  rank: number
}

/** Marks FTS5's snippet() puts around matched words: control characters no message text holds after `clean`. */
const OPEN = '\u0002'
const CLOSE = '\u0003'
const clean = (text: string) => text.replaceAll(OPEN, ' ').replaceAll(CLOSE, ' ')

/**
 * A query as FTS5 reads it: every word must appear, each as a prefix ("log" finds "login"), and
 * nothing the person types is taken for FTS5 syntax (quotes, `AND`, `*`, `:` are all plain words).
 */
export function ftsQuery(query: string): string | undefined {
  const words = query.split(/\s+/).map((w) => w.replace(/[^\p{L}\p{N}_]+/gu, ' ').trim()).filter(Boolean)
  const terms = words.flatMap((w) => w.split(' ')).filter(Boolean)
  if (terms.length === 0) return undefined
  return terms.map((t) => `"${t.replaceAll('"', '""')}"*`).join(' ')
}

/** Splits FTS5's marked snippet into its text (whitespace runs as one space) and the offsets of the marked words. */
export function unmark(marked: string): { snippet: string; matches: Array<[number, number]> } {
  let snippet = ''
  const matches: Array<[number, number]> = []
  let start = -1
  for (const ch of marked.replace(/\s+/g, ' ')) {
    if (ch === OPEN) start = snippet.length
    else if (ch === CLOSE) {
      if (start >= 0) matches.push([start, snippet.length])
      start = -1
    } else snippet += ch
  }
  return { snippet, matches }
}

/** The tables an earlier version of the index kept: the FTS5 table and the threads it held. */
const FORMAT_0 = ['messages', 'indexed_threads']
/** Every table an index file may hold, this version's and earlier ones' (`message_rows`: the row map's first name). */
const ALL_TABLES = [...FORMAT_0, 'message_rows', 'message_text', 'message_rowids', 'threads_indexed']

export class MessageIndex {
  /** The store's handle type: statements kept per SQL text, one commit per transaction, writes ignored after close. */
  readonly #db: SqliteDb

  /**
   * Each message's FTS5 row is found through `message_rowids` (thread, message, kind → rowid), so
   * replacing a message or a thread touches its own rows only: the first format found them by a
   * WHERE on FTS5's UNINDEXED columns, which reads every row of every thread (8.6 ms per message
   * appended at 50,000 messages, on the path every observation takes).
   */
  private constructor(db: DatabaseSync) {
    this.#db = new SqliteDb(db)
    // The first format's tables present: an earlier version wrote here — before an upgrade, or
    // during a rollback since, when what the tables below hold misses what it indexed. Both go, and
    // the start's build indexes every thread again from its transcript (the index is derived data).
    if (FORMAT_0.some((name) => this.#db.all('SELECT 1 FROM sqlite_master WHERE name = ?', name).length > 0)) {
      // In one commit: a crash half way would leave this version's tables behind the earlier one's gone.
      db.exec(`BEGIN; ${ALL_TABLES.map((name) => `DROP TABLE IF EXISTS ${name};`).join(' ')} COMMIT;`)
    }
    db.exec(`
      CREATE VIRTUAL TABLE IF NOT EXISTS message_text USING fts5(
        thread_id UNINDEXED, message_id UNINDEXED, kind UNINDEXED, text,
        tokenize = 'unicode61 remove_diacritics 2'
      );
      CREATE TABLE IF NOT EXISTS message_rowids (
        thread_id TEXT NOT NULL, message_id TEXT NOT NULL, kind TEXT NOT NULL, row INTEGER NOT NULL,
        PRIMARY KEY (thread_id, message_id, kind)
      ) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS threads_indexed (thread_id TEXT PRIMARY KEY) WITHOUT ROWID;
    `)
  }

  /**
   * `file`: the index's database (`:memory:` for a store that keeps nothing on disk). A file that
   * cannot be opened as an index is moved aside and started afresh: every thread is then indexed
   * again from its transcript. Where even that fails (a read-only data dir) the index lives in memory.
   */
  static open(file: string): MessageIndex {
    if (file === ':memory:') return new MessageIndex(new DatabaseSync(':memory:'))
    try {
      return MessageIndex.#openFile(file)
    } catch {
      try {
        if (existsSync(file)) renameSync(file, `${file}.corrupt-${Date.now()}`)
        for (const suffix of ['-wal', '-shm']) rmSync(file + suffix, { force: true })
        return MessageIndex.#openFile(file)
      } catch {
        return new MessageIndex(new DatabaseSync(':memory:'))
      }
    }
  }

  static #openFile(file: string): MessageIndex {
    const db = new DatabaseSync(file)
    try {
      // Derived data: a crash may lose the last messages indexed, never the database (WAL, NORMAL).
      db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 2000;')
      const index = new MessageIndex(db)
      index.#all('SELECT count(*) AS n FROM threads_indexed')
      return index
    } catch (error) {
      db.close()
      throw error
    }
  }

  #run(sql: string, ...params: Param[]): void {
    this.#db.run(sql, ...params)
  }

  #all(sql: string, ...params: Param[]): Row[] {
    return this.#db.closed ? [] : this.#db.all(sql, ...params)
  }

  #tx(fn: () => void): void {
    this.#db.tx(fn)
  }

  /** The threads whose whole transcript is in the index. */
  indexedThreads(): Set<string> {
    return new Set(this.#all('SELECT thread_id FROM threads_indexed').map((r) => String(r.thread_id)))
  }

  /** The thread's messages, all of them, in place of what was indexed for it before (one commit). */
  replaceThread(threadId: string, messages: readonly IndexedMessage[]): void {
    this.#tx(() => {
      this.#drop(threadId)
      for (const m of messages) this.#put(threadId, m)
      this.#run('INSERT OR IGNORE INTO threads_indexed (thread_id) VALUES (?)', threadId)
    })
  }

  /** One message appended to a thread, in place of the same message indexed before. */
  add(threadId: string, message: IndexedMessage): void {
    this.#tx(() => this.#put(threadId, message))
  }

  /** Inside the caller's commit: the thread's rows, by their own keys. */
  #drop(threadId: string): void {
    for (const r of this.#all('SELECT row FROM message_rowids WHERE thread_id = ?', threadId)) this.#run('DELETE FROM message_text WHERE rowid = ?', Number(r.row))
    this.#run('DELETE FROM message_rowids WHERE thread_id = ?', threadId)
  }

  /** Inside the caller's commit: the message, in place of the same one (thread, id, kind) indexed before. */
  #put(threadId: string, m: IndexedMessage): void {
    const [old] = this.#all('SELECT row FROM message_rowids WHERE thread_id = ? AND message_id = ? AND kind = ?', threadId, m.messageId, m.kind)
    if (old) {
      this.#run('DELETE FROM message_text WHERE rowid = ?', Number(old.row))
      this.#run('DELETE FROM message_rowids WHERE thread_id = ? AND message_id = ? AND kind = ?', threadId, m.messageId, m.kind)
    }
    if (m.text.trim() === '') return
    this.#run('INSERT INTO message_text (thread_id, message_id, kind, text) VALUES (?, ?, ?, ?)', threadId, m.messageId, m.kind, clean(m.text))
    this.#run('INSERT INTO message_rowids (thread_id, message_id, kind, row) VALUES (?, ?, ?, last_insert_rowid())', threadId, m.messageId, m.kind)
  }

  forget(threadId: string): void {
    this.#tx(() => {
      this.#drop(threadId)
      this.#run('DELETE FROM threads_indexed WHERE thread_id = ?', threadId)
    })
  }

  /**
   * The best-matching message of each thread, best threads first; at most `limit` threads. The best
   * message per thread is chosen in SQL (a thread with a thousand matches takes one place, not all),
   * then only those messages get a snippet.
   */
  search(query: string, limit = 50): MessageHit[] {
    const match = ftsQuery(query)
    if (!match) return []
    const best = this.#all(
      `WITH hits AS (SELECT rowid AS id, thread_id, rank FROM message_text WHERE message_text MATCH ?),
            firsts AS (SELECT id, rank, row_number() OVER (PARTITION BY thread_id ORDER BY rank) AS n FROM hits)
       SELECT id, rank FROM firsts WHERE n = 1 ORDER BY rank LIMIT ?`,
      match,
      limit,
    )
    if (best.length === 0) return []
    const rankOf = new Map(best.map((r) => [Number(r.id), Number(r.rank)]))
    const rows = new Map(
      this.#all(
        `SELECT rowid AS id, thread_id, message_id, kind, snippet(message_text, 3, '${OPEN}', '${CLOSE}', '…', 12) AS marked
           FROM message_text WHERE message_text MATCH ? AND rowid IN (SELECT value FROM json_each(?))`,
        match,
        JSON.stringify([...rankOf.keys()]),
      ).map((r) => [Number(r.id), r]),
    )
    return [...rankOf].flatMap(([id, rank]): MessageHit[] => {
      const r = rows.get(id)
      if (!r) return []
      const { snippet, matches } = unmark(String(r.marked))
      return [{ threadId: String(r.thread_id), messageId: String(r.message_id), kind: r.kind === 'assistant' ? 'assistant' : 'user', snippet, matches, rank }]
    })
  }

  close(): void {
    this.#db.close()
  }
}

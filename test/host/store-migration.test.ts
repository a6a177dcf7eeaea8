/**
 * A data dir written by an older threadhost opens with everything in it: the database's schema is
 * migrated in place, never set aside as unusable.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { afterEach, describe, expect, it } from 'vitest'
import { DB_FILE, SqliteThreadStore } from '../../src/host/store/sqlite.js'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

/** The threads table and meta row exactly as schema 1 wrote them. */
function schemaOneDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'threadhost-migrate-'))
  dirs.push(dir)
  const db = new DatabaseSync(join(dir, DB_FILE))
  db.exec(`
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE threads (
      thread_id TEXT PRIMARY KEY, title TEXT NOT NULL, model TEXT NOT NULL, thinking_level TEXT, cwd TEXT,
      created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, run INTEGER NOT NULL, seq INTEGER NOT NULL
    );
    INSERT INTO meta (key, value) VALUES ('schema', '1');
    INSERT INTO threads VALUES ('old', 'Old thread', 'demo', NULL, '/w', 1, 2, 3, 40);
  `)
  db.close()
  return dir
}

describe('store migration', () => {
  it('a schema-1 database keeps its threads, and gains what a summary needs for a cold thread', () => {
    const dir = schemaOneDir()
    const opened = SqliteThreadStore.open(dir)
    expect(opened.origin).toBe('kept')
    expect(opened.store.threads()).toEqual([
      { threadId: 'old', title: 'Old thread', model: 'demo', cwd: '/w', createdAt: 1, updatedAt: 2, run: 3, seq: 40 },
    ])
    const row = opened.store.threads()[0]
    opened.store.putThread({ ...row, facts: { firstPrompt: 'plan the release', lastMessage: 'done', forkedFrom: 'p1' } })
    opened.store.close()

    const again = SqliteThreadStore.open(dir)
    expect(again.origin).toBe('kept')
    expect(again.store.threads()[0].facts).toEqual({ firstPrompt: 'plan the release', lastMessage: 'done', forkedFrom: 'p1' })
    // a write that does not know the facts (a rename) keeps them
    again.store.putThread({ ...row, title: 'Renamed' })
    expect(again.store.threads()[0]).toMatchObject({ title: 'Renamed', facts: { firstPrompt: 'plan the release' } })
    again.store.close()
  })
})

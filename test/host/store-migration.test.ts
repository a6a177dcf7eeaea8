/**
 * A data dir written by an older threadhost opens with everything in it: the database's schema is
 * migrated in place, never set aside as unusable.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { Value } from 'typebox/value'
import { afterEach, describe, expect, it } from 'vitest'
import { reconcile } from '../../src/host/store/journal.js'
import { DB_FILE, SqliteThreadStore } from '../../src/host/store/sqlite.js'
import { PromptBody } from '../../src/schemas/index.js'

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

/** The threads and prompts tables and the meta row exactly as schema 2 wrote them, with an open prompt queued before the upgrade. */
function schemaTwoDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'threadhost-migrate-'))
  dirs.push(dir)
  const db = new DatabaseSync(join(dir, DB_FILE))
  db.exec(`
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE threads (
      thread_id TEXT PRIMARY KEY, title TEXT NOT NULL, model TEXT NOT NULL, thinking_level TEXT, cwd TEXT,
      created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, run INTEGER NOT NULL, seq INTEGER NOT NULL,
      facts TEXT
    );
    CREATE TABLE prompts (
      thread_id TEXT NOT NULL, message_id TEXT NOT NULL, text TEXT NOT NULL, admission TEXT NOT NULL,
      deliver_as TEXT NOT NULL, queued INTEGER NOT NULL, run INTEGER NOT NULL, accepted_at INTEGER NOT NULL,
      fate TEXT, fate_run INTEGER, reason TEXT, final INTEGER NOT NULL DEFAULT 0,
      PRIMARY KEY (thread_id, message_id)
    );
    INSERT INTO meta (key, value) VALUES ('schema', '2');
    INSERT INTO threads VALUES ('old', 'Old thread', 'demo', NULL, '/w', 1, 2, 1, 40, NULL);
    INSERT INTO prompts VALUES ('old', 'm1', 'queued before the upgrade', 'enqueue', 'followUp', 1, 1, 5, NULL, NULL, NULL, 0);
  `)
  db.close()
  return dir
}

/** A prompt with images, as the route takes it: checked against PromptBody, so it cannot drift from the contract. */
const withImages: PromptBody = {
  message: 'what is this?',
  images: [{ mimeType: 'image/png', data: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==' }],
}

describe('store migration', () => {
  it('a schema-2 database keeps its threads and open prompts, and journals a prompt\'s images from then on', () => {
    expect(Value.Check(PromptBody, withImages)).toBe(true)
    const dir = schemaTwoDir()
    const opened = SqliteThreadStore.open(dir)
    expect(opened.origin).toBe('kept')
    const thread = opened.store.threads()[0]
    expect(thread).toMatchObject({ threadId: 'old', run: 1, seq: 40 })
    expect(opened.store.openPrompts('old')).toEqual([
      { threadId: 'old', messageId: 'm1', text: 'queued before the upgrade', admission: 'enqueue', deliverAs: 'followUp', queued: true, run: 1, acceptedAt: 5 },
    ])
    const prompt = { threadId: 'old', messageId: 'm2', text: withImages.message, admission: 'enqueue', deliverAs: 'followUp', queued: true, run: 1, acceptedAt: 6 } as const
    opened.store.admitPrompt({ ...prompt, images: withImages.images }, thread)
    opened.store.close()

    // Reopened (as after a crash): both prompts are handed back, the new one with its images.
    const again = SqliteThreadStore.open(dir)
    expect(again.origin).toBe('kept')
    expect(again.store.openPrompts('old').map((p) => p.images)).toEqual([undefined, withImages.images])
    reconcile(again.store, 'old', 1, [])
    expect(again.store.reports('old').map((r) => r.body)).toEqual([
      { type: 'prompt-rejected', messageId: 'm1', reason: 'restart', text: 'queued before the upgrade' },
      { type: 'prompt-rejected', messageId: 'm2', reason: 'restart', text: withImages.message, images: withImages.images },
    ])
    again.store.close()
  })


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

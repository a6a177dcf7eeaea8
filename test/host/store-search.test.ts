/**
 * Search over message contents: the FTS5 message index (store/sqlite/message-index.ts) and how the
 * host keeps it — as messages are appended, and rebuilt from the session files on a start that
 * finds it missing — so the list's search never reads a session file per keystroke.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { DatabaseSync } from 'node:sqlite'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ThreadRegistry } from '../../src/host/thread-registry.js'
import { ftsQuery, INDEX_FILE, MessageIndex } from '../../src/host/store/sqlite/message-index.js'
import type { TranscriptEntry } from '../../src/schemas/index.js'
import { FakeRuntimeFactory, hostOptions } from './fake-runtime.js'

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'threadhost-search-'))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

async function until(done: () => boolean, ms = 2000): Promise<void> {
  const end = Date.now() + ms
  while (!done()) {
    if (Date.now() > end) throw new Error('condition not met in time')
    await new Promise((r) => setTimeout(r, 2))
  }
}

const user = (messageId: string, text: string, run = 1): TranscriptEntry => ({ kind: 'user', messageId, text, run })
const reply = (messageId: string, text: string): TranscriptEntry => ({ kind: 'assistant', messageId, text, streaming: false })

describe('the message index (FTS5)', () => {
  it('finds a thread by any word of any message, as a prefix, with the matching words marked in a snippet', () => {
    const index = MessageIndex.open(':memory:')
    index.replaceThread('a', [
      { messageId: 'm1', kind: 'user', text: 'Fix the login bug in auth.ts' },
      { messageId: 'm2', kind: 'assistant', text: 'The session cookie expired too early.' },
    ])
    index.replaceThread('b', [{ messageId: 'm3', kind: 'user', text: 'Write a haiku about autumn' }])
    const [hit, ...rest] = index.search('cook expir')
    expect(rest).toEqual([])
    expect(hit).toMatchObject({ threadId: 'a', messageId: 'm2', kind: 'assistant' })
    expect(hit.matches.map(([s, e]) => hit.snippet.slice(s, e))).toEqual(['cookie', 'expired'])
    expect(index.search('LOGIN').map((h) => h.threadId)).toEqual(['a'])
    expect(index.search('login haiku')).toEqual([]) // every word in one message
    index.close()
  })

  it('takes what a person types as words, never as FTS5 syntax', () => {
    const index = MessageIndex.open(':memory:')
    index.replaceThread('a', [{ messageId: 'm1', kind: 'user', text: 'what does "NOT NULL" mean? col:name AND *' }])
    for (const q of ['"NOT', 'col:name', 'AND', '*', 'NOT NULL"', '(mean', 'NEAR(']) expect(() => index.search(q), q).not.toThrow()
    expect(index.search('col:name').map((h) => h.threadId)).toEqual(['a'])
    expect(ftsQuery('  ')).toBeUndefined()
    expect(index.search('!!!')).toEqual([])
    index.close()
  })

  it('a thread with many matches takes one place: the others are still found', () => {
    const index = MessageIndex.open(':memory:')
    index.replaceThread('chatty', Array.from({ length: 300 }, (_, i) => ({ messageId: `m${i}`, kind: 'user' as const, text: `deploy deploy deploy ${i}` })))
    index.replaceThread('quiet', [{ messageId: 'q1', kind: 'user', text: 'one deploy, once' }])
    expect(index.search('deploy', 10).map((h) => h.threadId).sort()).toEqual(['chatty', 'quiet'])
    index.close()
  })

  it('one hit per thread, and a thread forgotten or replaced is searched as it is now', () => {
    const index = MessageIndex.open(':memory:')
    index.replaceThread('a', [
      { messageId: 'm1', kind: 'user', text: 'deploy to staging' },
      { messageId: 'm2', kind: 'assistant', text: 'deploy done' },
    ])
    index.add('b', { messageId: 'm3', kind: 'user', text: 'deploy to prod' })
    expect(index.search('deploy').map((h) => h.threadId).sort()).toEqual(['a', 'b'])
    index.forget('b')
    index.replaceThread('a', [{ messageId: 'm1', kind: 'user', text: 'nothing here' }])
    expect(index.search('deploy')).toEqual([])
    index.close()
  })

  it('keeps its rows in messages.db across a reopen, and a damaged file is set aside and started afresh', async () => {
    const file = join(dir, INDEX_FILE)
    const first = MessageIndex.open(file)
    first.replaceThread('a', [{ messageId: 'm1', kind: 'user', text: 'remember the milk' }])
    first.close()
    const again = MessageIndex.open(file)
    expect(again.indexedThreads()).toEqual(new Set(['a']))
    expect(again.search('milk')).toHaveLength(1)
    again.close()

    await rm(file + '-wal', { force: true })
    await rm(file + '-shm', { force: true })
    await writeFile(file, 'this is not a database, only some bytes that look nothing like one'.repeat(100))
    const fresh = MessageIndex.open(file)
    expect(fresh.indexedThreads()).toEqual(new Set())
    fresh.replaceThread('a', [{ messageId: 'm1', kind: 'user', text: 'remember the milk' }])
    expect(fresh.search('milk')).toHaveLength(1)
    fresh.close()
  })

  it('a message indexed again replaces its own row only: the same message id in another thread, or of the other kind, stays found', () => {
    const index = MessageIndex.open(':memory:')
    index.replaceThread('a', [
      { messageId: 'm1', kind: 'user', text: 'alpha question' },
      { messageId: 'm1', kind: 'assistant', text: 'alpha answer' },
    ])
    index.add('b', { messageId: 'm1', kind: 'user', text: 'alpha elsewhere' })
    index.add('a', { messageId: 'm1', kind: 'user', text: 'beta question' })
    expect(index.search('alpha').map((h) => [h.threadId, h.kind]).sort()).toEqual([['a', 'assistant'], ['b', 'user']])
    expect(index.search('beta').map((h) => [h.threadId, h.messageId])).toEqual([['a', 'm1']])
    index.replaceThread('b', [])
    expect(index.search('alpha').map((h) => h.threadId)).toEqual(['a'])
    index.forget('a')
    expect(index.search('alpha beta')).toEqual([])
    expect(index.search('question')).toEqual([])
    index.close()
  })

  it('an index an earlier version wrote to — before an upgrade, or during a rollback since — is emptied at open, so the start indexes every thread again from its transcript', () => {
    const file = join(dir, INDEX_FILE)
    // The first format's tables, as earlier versions write them: rows no row map finds.
    const earlierVersionWrites = (text: string) => {
      const old = new DatabaseSync(file)
      old.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS messages USING fts5(thread_id UNINDEXED, message_id UNINDEXED, kind UNINDEXED, text, tokenize = 'unicode61 remove_diacritics 2');
        CREATE TABLE IF NOT EXISTS indexed_threads (thread_id TEXT PRIMARY KEY) WITHOUT ROWID;
        INSERT INTO messages VALUES ('a', 'm9', 'user', '${text}');
        INSERT OR IGNORE INTO indexed_threads VALUES ('a');`)
      old.close()
    }
    earlierVersionWrites('stale words')
    const upgraded = MessageIndex.open(file)
    expect(upgraded.indexedThreads()).toEqual(new Set())
    expect(upgraded.search('stale')).toEqual([])
    upgraded.replaceThread('a', [{ messageId: 'm1', kind: 'user', text: 'fresh words' }])
    upgraded.close()
    const again = MessageIndex.open(file)
    expect(again.indexedThreads()).toEqual(new Set(['a']))
    expect(again.search('fresh').map((h) => h.threadId)).toEqual(['a'])
    again.close()

    // Rolled back and forward again: what was indexed meanwhile is not in this format's tables.
    earlierVersionWrites('written during the rollback')
    const forward = MessageIndex.open(file)
    expect(forward.indexedThreads()).toEqual(new Set())
    expect(forward.search('fresh')).toEqual([])
    forward.close()
  })

  it('a message given twice in one thread is indexed once, and nothing of it is left once the thread is forgotten', () => {
    const index = MessageIndex.open(':memory:')
    index.replaceThread('a', [
      { messageId: 'm1', kind: 'user', text: 'first words' },
      { messageId: 'm1', kind: 'user', text: 'second words' },
    ])
    expect(index.search('words').map((h) => h.snippet)).toEqual(['second words'])
    expect(index.search('first')).toEqual([])
    index.forget('a')
    expect(index.search('words')).toEqual([])
    index.close()
  })
})

describe('the host keeps the index', () => {
  it('indexes prompts and replies as they are appended, and a deleted thread is no longer found', async () => {
    const runtimes = new FakeRuntimeFactory()
    const registry = await ThreadRegistry.open(hostOptions(dir, runtimes))
    try {
      await registry.prompt('t1', { message: 'where is the invoice template', admission: 'enqueue', deliverAs: 'steer' })
      await until(() => registry.search('invoice').length === 1)
      expect(registry.search('invoice')[0]).toMatchObject({ threadId: 't1', title: expect.any(String), kind: 'user' })
      const fake = runtimes.get('t1')
      fake.emit({ type: 'assistant-start', messageId: 'r1' })
      fake.emit({ type: 'assistant-end', messageId: 'r1', text: 'It lives in templates/invoice.hbs', stopReason: 'stop' })
      await until(() => registry.search('hbs').length === 1)
      expect(registry.search('hbs')[0]).toMatchObject({ threadId: 't1', messageId: 'r1', kind: 'assistant' })
      fake.settle()
      expect(await registry.delete('t1')).toEqual({ kind: 'deleted' })
      expect(registry.search('invoice')).toEqual([])
    } finally {
      await registry.shutdown()
    }
  })

  it('a thread deleted although its files could not be removed is not found either, also once a thread is made again under its id', async () => {
    const runtimes = new FakeRuntimeFactory()
    const registry = await ThreadRegistry.open(hostOptions(dir, runtimes))
    try {
      await registry.prompt('t1', { message: 'where is the invoice template', admission: 'enqueue', deliverAs: 'steer' })
      await until(() => registry.search('invoice').length === 1)
      runtimes.get('t1').settle()
      const remove = runtimes.remove.bind(runtimes)
      runtimes.remove = async () => Promise.reject(new Error('EBUSY: resource busy'))
      await expect(registry.delete('t1')).rejects.toThrow('EBUSY')
      runtimes.remove = remove
      expect(await registry.create({ id: 't1' })).toEqual({ kind: 'created', threadId: 't1' })
      expect(registry.search('invoice')).toEqual([])
    } finally {
      await registry.shutdown()
    }
  })

  it('a thread moved to another branch (ctx.navigateTree) is searched as it is now: the messages of the branch it left are no longer found', async () => {
    const runtimes = new FakeRuntimeFactory()
    const registry = await ThreadRegistry.open(hostOptions(dir, runtimes))
    try {
      await registry.prompt('t1', { message: 'the left branch talks about otters', admission: 'enqueue', deliverAs: 'steer' })
      await until(() => registry.search('otters').length === 1)
      const fake = runtimes.get('t1')
      fake.emit({ type: 'branch', transcript: [user('u9', 'the right branch talks about herons')] })
      await until(() => registry.search('herons').length === 1)
      expect(registry.search('herons')[0]).toMatchObject({ threadId: 't1', messageId: 'u9' })
      expect(registry.search('otters')).toEqual([])
      fake.settle()
    } finally {
      await registry.shutdown()
    }
  })

  it('a start with no index builds it from the session files, once, without loading any feed', async () => {
    const runtimes = new FakeRuntimeFactory()
    const first = await ThreadRegistry.open(hostOptions(dir, runtimes))
    await first.create({ id: 'old' })
    await first.create({ id: 'older' })
    await first.shutdown()
    await rm(join(dir, INDEX_FILE), { force: true })
    await rm(join(dir, `${INDEX_FILE}-wal`), { force: true })
    await rm(join(dir, `${INDEX_FILE}-shm`), { force: true })
    runtimes.transcripts.set('old', [user('u1', 'migrate the postgres schema'), reply('a1', 'Done: added a column.')])
    runtimes.transcripts.set('older', [user('u2', 'rename the postgres role')])

    const read: string[] = []
    const reading = runtimes.readTranscript.bind(runtimes)
    runtimes.readTranscript = (id: string) => (read.push(id), reading(id))
    const second = await ThreadRegistry.open(hostOptions(dir, runtimes))
    try {
      await second.searchBuilt
      expect(existsSync(join(dir, INDEX_FILE))).toBe(true)
      expect(second.search('postgres').map((h) => h.threadId).sort()).toEqual(['old', 'older'])
      expect(second.search('column')).toMatchObject([{ threadId: 'old', messageId: 'a1' }])
      expect(read.sort()).toEqual(['old', 'older'])
      // Searching reads nothing more.
      second.search('postgres schema')
      second.search('role')
      expect(read).toHaveLength(2)
    } finally {
      await second.shutdown()
    }

    // The next start finds the index whole and reads no session file for it.
    read.length = 0
    const third = await ThreadRegistry.open(hostOptions(dir, runtimes))
    try {
      await third.searchBuilt
      expect(read).toEqual([])
      expect(third.search('postgres')).toHaveLength(2)
    } finally {
      await third.shutdown()
    }
  })
})

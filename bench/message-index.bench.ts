/**
 * `npm run bench:index`: what the message index (src/host/store/sqlite/message-index.ts) costs per
 * message appended — on every prompt and every reply, on the path each observation takes — and per
 * thread replaced (a feed loaded, a branch), as the index grows over every thread. Beside it in the
 * same run, the baseline: the same FTS5 table with a message found by a WHERE on its UNINDEXED
 * columns (the index's format 0), which reads every row.
 * Not a test: nothing here asserts a time. Numbers go to docs/benchmarks.md by hand.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { DatabaseSync } from 'node:sqlite'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MessageIndex } from '../src/host/store/sqlite/message-index.js'

const SIZES = [1_000, 10_000, 50_000]
const TIMES = 50
const TEXT = 'the quick brown fox jumps over the lazy dog, and a few more words as a reply would have them '.repeat(3)

/** Format 0, as the index was: the same table, a message replaced by a WHERE on the UNINDEXED columns. */
function scanning(file: string) {
  const db = new DatabaseSync(file)
  db.exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;
    CREATE VIRTUAL TABLE messages USING fts5(thread_id UNINDEXED, message_id UNINDEXED, kind UNINDEXED, text, tokenize = 'unicode61 remove_diacritics 2');`)
  const del = db.prepare('DELETE FROM messages WHERE thread_id = ? AND message_id = ? AND kind = ?')
  const delThread = db.prepare('DELETE FROM messages WHERE thread_id = ?')
  const ins = db.prepare('INSERT INTO messages (thread_id, message_id, kind, text) VALUES (?, ?, ?, ?)')
  const tx = (fn: () => void) => (db.exec('BEGIN'), fn(), db.exec('COMMIT'))
  return {
    add: (t: string, id: string) => tx(() => (del.run(t, id, 'assistant'), ins.run(t, id, 'assistant', TEXT))),
    replace: (t: string, n: number) => tx(() => {
      delThread.run(t)
      for (let i = 0; i < n; i++) ins.run(t, `m${i}`, 'user', TEXT)
    }),
    close: () => db.close(),
  }
}

function keyed(file: string) {
  const index = MessageIndex.open(file)
  return {
    add: (t: string, id: string) => index.add(t, { messageId: id, kind: 'assistant', text: TEXT }),
    replace: (t: string, n: number) => index.replaceThread(t, Array.from({ length: n }, (_, i) => ({ messageId: `m${i}`, kind: 'user' as const, text: TEXT }))),
    close: () => index.close(),
  }
}

const median = (xs: number[]) => xs.sort((a, b) => a - b)[xs.length >> 1]
const ms = (fn: () => void) => {
  const t0 = process.hrtime.bigint()
  fn()
  return Number(process.hrtime.bigint() - t0) / 1e6
}

const rows: string[] = []
const dir = mkdtempSync(join(tmpdir(), 'threadhost-bench-index-'))
try {
  const indexes = { 'format 0 (scan)': scanning(join(dir, 'scan.db')), 'format 1 (row map)': keyed(join(dir, 'keyed.db')) }
  let held = 0
  for (const size of SIZES) {
    const figures: string[] = []
    for (const [, index] of Object.entries(indexes)) {
      // Other threads' messages, up to `size` in all, in threads of 100.
      for (let t = held / 100; t < size / 100; t++) index.replace(`other-${t}`, 100)
      const add = median(Array.from({ length: TIMES }, (_, i) => ms(() => index.add('busy', `r${size}-${i}`))))
      const replace = median(Array.from({ length: 10 }, () => ms(() => index.replace('loaded', 20))))
      figures.push(`${add.toFixed(3)} / ${replace.toFixed(3)}`)
    }
    held = size
    rows.push(`| ${size.toLocaleString('en')} | ${figures.join(' | ')} |`)
  }
  for (const index of Object.values(indexes)) index.close()
  console.log(`| messages in the index | ${Object.keys(indexes).join(' | ')} |  (ms, median: a message appended / a 20-message thread replaced)`)
  console.log('|---|---|---|')
  for (const row of rows) console.log(row)
} finally {
  rmSync(dir, { recursive: true, force: true })
}

/**
 * Journal pruning: keyed answers older than 24 h and settled journal rows older than the retention
 * go; every open row — what recovery reads after a crash — and every feed report stays.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { MemoryThreadStore } from './memory-store.js'
import { IDEMPOTENCY_TTL_MS, JOURNAL_RETENTION_MS, type PromptRow, type ThreadStore } from '../../src/host/store/port.js'
import { SqliteThreadStore } from '../../src/host/store/sqlite.js'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

const NOW = Date.now()
const OLD = NOW - JOURNAL_RETENTION_MS - 1
const RECENT = NOW - JOURNAL_RETENTION_MS + 60_000

const thread = (threadId: string) => ({ threadId, title: threadId, model: 'demo', createdAt: OLD, updatedAt: OLD, run: 0, seq: 0 })
const prompt = (threadId: string, messageId: string, run: number, at: number, queued = false): PromptRow => ({
  threadId,
  messageId,
  text: messageId,
  admission: 'enqueue',
  deliverAs: 'steer',
  queued,
  run,
  acceptedAt: at,
})

/** One thread's journal with rows of every kind on both sides of the retention bound. */
function fill(store: ThreadStore): void {
  store.putThread(thread('t'))
  // Run 1, long over: its prompt and dialog are settled and old.
  store.admitPrompt(prompt('t', 'old-ran', 1, OLD), thread('t'))
  store.startRun('t', 1, OLD)
  store.settlePrompt('t', 'old-ran', { kind: 'ran', run: 1 })
  store.openDialog({ threadId: 't', dialogId: 'old-answered', run: 1, openedAt: OLD })
  store.settleDialog('t', 'old-answered', 'answered')
  store.endRun('t', 1, false, OLD, 'settled')
  store.admitPrompt(prompt('t', 'old-rejected', 1, OLD, true), thread('t'))
  store.settlePrompt('t', 'old-rejected', { kind: 'rejected', reason: 'shutdown' })
  store.addReport('t', 1, { type: 'prompt-rejected', messageId: 'old-rejected', reason: 'shutdown', text: 'old-rejected' })
  // Run 2, settled recently: kept as history.
  store.admitPrompt(prompt('t', 'recent-ran', 2, RECENT), thread('t'))
  store.startRun('t', 2, RECENT)
  store.settlePrompt('t', 'recent-ran', { kind: 'ran', run: 2 })
  store.endRun('t', 2, false, RECENT, 'settled')
  // Run 3 started long ago and never ended (a crash): it, its prompts and its open dialog are what recovery needs.
  store.admitPrompt(prompt('t', 'old-in-flight', 3, OLD), thread('t'))
  store.startRun('t', 3, OLD)
  store.settlePrompt('t', 'old-in-flight', { kind: 'ran', run: 3 })
  store.admitPrompt(prompt('t', 'old-queued', 3, OLD, true), thread('t'))
  store.openDialog({ threadId: 't', dialogId: 'old-open', run: 3, openedAt: OLD })
  store.recordIdempotent({ key: 'stale', fingerprint: 'f', status: 202, body: '', at: NOW - IDEMPOTENCY_TTL_MS - 1 }, 0)
  store.recordIdempotent({ key: 'fresh', fingerprint: 'f', status: 202, body: '', at: NOW - IDEMPOTENCY_TTL_MS + 60_000 }, 0)
}

function prunes(open: () => ThreadStore) {
  return () => {
    const store = open()
    fill(store)
    const recovery = () => [store.openPrompts('t'), store.openRuns('t'), store.openDialogs('t'), store.reports('t')]
    const before = recovery()
    expect(store.prune(NOW)).toEqual({ prompts: 1 + 1, runs: 1, dialogs: 1, idempotency: 1 })
    const journal = store.journal('t')
    expect(journal.prompts.map((p) => p.messageId).sort()).toEqual(['old-in-flight', 'old-queued', 'recent-ran'])
    expect(journal.runs.map((r) => r.run)).toEqual([2, 3])
    expect(journal.dialogs.map((d) => d.dialogId)).toEqual(['old-open'])
    expect(store.idempotent('stale', 0)).toBeUndefined()
    expect(store.idempotent('fresh', 0)).toBeDefined()
    // Recovery reads exactly what it read before, and the thread (its run counter) is untouched.
    expect(recovery()).toEqual(before)
    expect(store.threads()[0]).toMatchObject({ threadId: 't', run: 3 })
    // Nothing more goes on a second pass.
    expect(store.prune(NOW)).toEqual({ prompts: 0, runs: 0, dialogs: 0, idempotency: 0 })
  }
}

describe('journal pruning', () => {
  it('memory: prune drops stale keyed answers and settled journal rows past the retention, never an open row or a report', prunes(() => new MemoryThreadStore()))
  it(
    'sqlite: prune drops stale keyed answers and settled journal rows past the retention, never an open row or a report',
    prunes(() => {
      const dir = mkdtempSync(join(tmpdir(), 'threadhost-prune-'))
      dirs.push(dir)
      return SqliteThreadStore.open(dir).store
    }),
  )

  it('sqlite: the store prunes when it opens', () => {
    const dir = mkdtempSync(join(tmpdir(), 'threadhost-prune-'))
    dirs.push(dir)
    const first = SqliteThreadStore.open(dir).store
    fill(first)
    first.close()
    const reopened = SqliteThreadStore.open(dir).store
    expect(reopened.journal('t').prompts.map((p) => p.messageId).sort()).toEqual(['old-in-flight', 'old-queued', 'recent-ran'])
    expect(reopened.idempotent('stale', 0)).toBeUndefined()
    reopened.close()
  })
})

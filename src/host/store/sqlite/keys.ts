/**
 * The `idempotency` table: the first answer to each `Idempotency-Key` (status 0 marks a claim made
 * with a prompt's admission, whose answer is the journaled prompt: IdempotentAnswer.pending; status
 * -1 a claim of the embedded cluster adapter's keys still running, body `{node}`, not an answer).
 * For those keys a row's `at` is its revision: every change moves it forward.
 */
import type { IdempotencyClaim, IdempotentAnswer } from '../port.js'
import type { SqliteDb } from './db.js'

export class KeyTable {
  constructor(readonly db: SqliteDb) {}

  get(key: string, since: number): IdempotentAnswer | undefined {
    const r = this.db.all('SELECT * FROM idempotency WHERE key = ? AND at >= ?', key, since)[0]
    if (!r || Number(r.status) < 0) return undefined
    const answer: IdempotentAnswer = { key: String(r.key), fingerprint: String(r.fingerprint), status: Number(r.status), body: String(r.body), at: Number(r.at) }
    if (answer.status === 0) answer.pending = JSON.parse(answer.body) as { threadId: string; messageId: string }
    return answer
  }

  /** The answer, and the expiry of every answer recorded before `expireBefore`, in one commit. */
  record(answer: IdempotentAnswer, expireBefore: number): void {
    // A key claimed in its prompt's admission commit is answered from the journal if this record is
    // lost to a power cut (writes.ts, fromJournal): it need not wait for the disk, and the prompt's
    // model request does not wait behind it. Any other answer is the only copy: it waits.
    const claimed = this.db.all('SELECT 1 FROM idempotency WHERE key = ? AND status = 0 AND fingerprint = ?', answer.key, answer.fingerprint).length > 0
    this.db.tx(() => {
      this.expire(expireBefore)
      this.db.run(
        'INSERT OR REPLACE INTO idempotency (key, fingerprint, status, body, at) VALUES (?, ?, ?, ?, ?)',
        answer.key,
        answer.fingerprint,
        answer.status,
        answer.body,
        answer.at,
      )
    }, claimed ? { wait: false } : {})
  }

  /** Claims an unknown key for a journaled prompt (inside the caller's commit); a known key keeps its answer. */
  claim(claim: IdempotencyClaim, prompt: { threadId: string; messageId: string }, at: number): void {
    this.db.run(
      'INSERT OR IGNORE INTO idempotency (key, fingerprint, status, body, at) VALUES (?, ?, 0, ?, ?)',
      claim.key,
      claim.fingerprint,
      JSON.stringify({ threadId: prompt.threadId, messageId: prompt.messageId }),
      at,
    )
  }

  /** The key's row as it stands (any status), unless recorded before `since`. */
  row(key: string, since: number): { fingerprint: string; status: number; body: string; at: number } | undefined {
    const r = this.db.all('SELECT * FROM idempotency WHERE key = ? AND at >= ?', key, since)[0]
    return r && { fingerprint: String(r.fingerprint), status: Number(r.status), body: String(r.body), at: Number(r.at) }
  }

  /**
   * A running claim (status -1) of `node` on the key: made when the key is free (absent, or recorded
   * before `since`), or put in place of the row whose revision is `expected`. Its revision, or
   * undefined when the key was not free / not at `expected` (nothing written).
   */
  claimRunning(key: string, fingerprint: string, node: string, now: number, since: number, expected?: number): number | undefined {
    let revision: number | undefined
    this.db.tx(() => {
      const current = this.row(key, since)
      if (current && current.at !== expected) return
      revision = Math.max(now, (current?.at ?? 0) + 1)
      this.db.run('INSERT OR REPLACE INTO idempotency (key, fingerprint, status, body, at) VALUES (?, ?, -1, ?, ?)', key, fingerprint, JSON.stringify({ node }), revision)
    })
    return revision
  }

  /** The answer in place of the row at `revision` (nothing when the row moved on); the answer's revision comes after it. */
  answerAt(key: string, revision: number, answer: { fingerprint: string; status: number; body: string; at: number }): void {
    this.db.run(
      'UPDATE idempotency SET fingerprint = ?, status = ?, body = ?, at = ? WHERE key = ? AND at = ?',
      answer.fingerprint,
      answer.status,
      answer.body,
      Math.max(answer.at, revision + 1),
      key,
      revision,
    )
  }

  /** Drops the row at `revision` (nothing when it moved on). */
  dropAt(key: string, revision: number): void {
    this.db.run('DELETE FROM idempotency WHERE key = ? AND at = ?', key, revision)
  }

  /** Drops the answers recorded before `before`; how many. */
  expire(before: number): number {
    return Number(this.db.run('DELETE FROM idempotency WHERE at < ?', before).changes)
  }
}

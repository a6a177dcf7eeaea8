/**
 * The `idempotency` table: the first answer to each `Idempotency-Key` (status 0 marks a claim made
 * with a prompt's admission, whose answer is the journaled prompt: IdempotentAnswer.pending).
 */
import type { IdempotencyClaim, IdempotentAnswer } from '../port.js'
import type { SqliteDb } from './db.js'

export class KeyTable {
  constructor(readonly db: SqliteDb) {}

  get(key: string, since: number): IdempotentAnswer | undefined {
    const r = this.db.all('SELECT * FROM idempotency WHERE key = ? AND at >= ?', key, since)[0]
    if (!r) return undefined
    const answer: IdempotentAnswer = { key: String(r.key), fingerprint: String(r.fingerprint), status: Number(r.status), body: String(r.body), at: Number(r.at) }
    if (answer.status === 0) answer.pending = JSON.parse(answer.body) as { threadId: string; messageId: string }
    return answer
  }

  /** The answer, and the expiry of every answer recorded before `expireBefore`, in one commit. */
  record(answer: IdempotentAnswer, expireBefore: number): void {
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
    })
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

  /** Drops the answers recorded before `before`; how many. */
  expire(before: number): number {
    return Number(this.db.run('DELETE FROM idempotency WHERE at < ?', before).changes)
  }
}

/**
 * The journal's tables: `prompts` (every admitted prompt and its fate), `runs` (started, and how they
 * ended), `dialogs` (opened, and their outcome) and `reports` (what recovery owes a feed). A prompt's
 * fate is `final` once it can no longer change: any fate but `ran`, or `ran` in a run that ended.
 */
import {
  JOURNAL_RETENTION_MS,
  type DialogRow,
  type PromptFate,
  type PromptRow,
  type Pruned,
  type RecoveryReport,
  type ReportBody,
  type RunRow,
} from '../port.js'
import type { PromptImage } from '../../../schemas/index.js'
import type { Row, SqliteDb } from './db.js'

export class JournalTables {
  constructor(readonly db: SqliteDb) {}

  /** Inserts (or replaces) an admitted prompt; the caller's commit holds the thread's row with it. */
  admit(prompt: PromptRow): void {
    const fate = fateColumns(prompt.fate)
    this.db.run(
      `INSERT OR REPLACE INTO prompts (thread_id, message_id, text, admission, deliver_as, queued, run, accepted_at, fate, fate_run, reason, final, images)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      prompt.threadId,
      prompt.messageId,
      prompt.text,
      prompt.admission,
      prompt.deliverAs,
      prompt.queued ? 1 : 0,
      prompt.run,
      prompt.acceptedAt,
      fate.fate,
      fate.fateRun,
      fate.reason,
      this.#isFinal(prompt.threadId, prompt.fate) ? 1 : 0,
      prompt.images?.length ? JSON.stringify(prompt.images) : null,
    )
  }

  admitted(threadId: string, messageId: string, admission: { run: number; queued: boolean }): void {
    this.db.run('UPDATE prompts SET run = ?, queued = ? WHERE thread_id = ? AND message_id = ?', admission.run, admission.queued ? 1 : 0, threadId, messageId)
  }

  withdraw(threadId: string, messageId: string): void {
    this.db.run('DELETE FROM prompts WHERE thread_id = ? AND message_id = ?', threadId, messageId)
  }

  #isFinal(threadId: string, fate: PromptFate | undefined): boolean {
    if (!fate) return false
    if (fate.kind !== 'ran') return true
    return this.db.all('SELECT 1 FROM runs WHERE thread_id = ? AND run = ? AND ended_at IS NOT NULL', threadId, fate.run).length > 0
  }

  settlePrompt(threadId: string, messageId: string, fate: PromptFate): boolean {
    if (this.db.closed) return true
    const known = this.db.all('SELECT final FROM prompts WHERE thread_id = ? AND message_id = ?', threadId, messageId)[0]
    if (!known) return false
    if (known.final) return true
    const columns = fateColumns(fate)
    this.db.run(
      'UPDATE prompts SET fate = ?, fate_run = ?, reason = ?, final = ? WHERE thread_id = ? AND message_id = ? AND final = 0',
      columns.fate,
      columns.fateRun,
      columns.reason,
      this.#isFinal(threadId, fate) ? 1 : 0,
      threadId,
      messageId,
    )
    return true
  }

  openPrompts(threadId?: string): PromptRow[] {
    const rows =
      threadId === undefined
        ? this.db.all('SELECT * FROM prompts WHERE final = 0 ORDER BY accepted_at, rowid')
        : this.db.all('SELECT * FROM prompts WHERE final = 0 AND thread_id = ? ORDER BY accepted_at, rowid', threadId)
    return rows.map(promptOf)
  }

  /** Inside the caller's commit, with the thread's run counter. */
  startRun(threadId: string, run: number, at: number): void {
    this.db.run('INSERT OR IGNORE INTO runs (thread_id, run, started_at) VALUES (?, ?, ?)', threadId, run, at)
  }

  endRun(threadId: string, run: number, aborted: boolean, at: number, by: 'settled' | 'restart'): void {
    this.db.tx(() => {
      this.db.run('INSERT OR IGNORE INTO runs (thread_id, run, started_at) VALUES (?, ?, ?)', threadId, run, at)
      this.db.run(
        'UPDATE runs SET ended_at = ?, aborted = ?, ended_by = ? WHERE thread_id = ? AND run = ? AND ended_at IS NULL',
        at,
        aborted ? 1 : 0,
        by,
        threadId,
        run,
      )
      this.db.run("UPDATE prompts SET final = 1 WHERE thread_id = ? AND final = 0 AND fate = 'ran' AND fate_run = ?", threadId, run)
    })
  }

  openRuns(threadId?: string): RunRow[] {
    const rows =
      threadId === undefined
        ? this.db.all('SELECT * FROM runs WHERE ended_at IS NULL ORDER BY thread_id, run')
        : this.db.all('SELECT * FROM runs WHERE ended_at IS NULL AND thread_id = ? ORDER BY run', threadId)
    return rows.map(runOf)
  }

  openDialog(row: DialogRow): void {
    this.db.run('INSERT OR IGNORE INTO dialogs (thread_id, dialog_id, run, opened_at) VALUES (?, ?, ?, ?)', row.threadId, row.dialogId, row.run, row.openedAt)
  }

  settleDialog(threadId: string, dialogId: string, outcome: string): void {
    this.db.run('UPDATE dialogs SET outcome = ? WHERE thread_id = ? AND dialog_id = ? AND outcome IS NULL', outcome, threadId, dialogId)
  }

  openDialogs(threadId?: string): DialogRow[] {
    const rows =
      threadId === undefined
        ? this.db.all('SELECT * FROM dialogs WHERE outcome IS NULL ORDER BY opened_at')
        : this.db.all('SELECT * FROM dialogs WHERE outcome IS NULL AND thread_id = ? ORDER BY opened_at', threadId)
    return rows.map(dialogOf)
  }

  addReport(threadId: string, afterRun: number, body: ReportBody, options: { delivered?: boolean } = {}): void {
    this.db.run('INSERT INTO reports (thread_id, after_run, delivered, body) VALUES (?, ?, ?, ?)', threadId, afterRun, options.delivered ? 1 : 0, JSON.stringify(body))
  }

  reports(threadId: string): RecoveryReport[] {
    return this.db.all('SELECT * FROM reports WHERE thread_id = ? ORDER BY id', threadId).map((r) => ({
      id: Number(r.id),
      threadId: String(r.thread_id),
      afterRun: Number(r.after_run),
      delivered: Boolean(r.delivered),
      body: JSON.parse(String(r.body)) as ReportBody,
    }))
  }

  markDelivered(threadId: string, ids: number[]): void {
    this.db.tx(() => {
      for (const id of ids) this.db.run('UPDATE reports SET delivered = 1 WHERE thread_id = ? AND id = ?', threadId, id)
    })
  }

  journal(threadId: string): { prompts: PromptRow[]; runs: RunRow[]; dialogs: DialogRow[] } {
    return {
      prompts: this.db.all('SELECT * FROM prompts WHERE thread_id = ? ORDER BY accepted_at, rowid', threadId).map(promptOf),
      runs: this.db.all('SELECT * FROM runs WHERE thread_id = ? ORDER BY run', threadId).map(runOf),
      dialogs: this.db.all('SELECT * FROM dialogs WHERE thread_id = ? ORDER BY opened_at, rowid', threadId).map(dialogOf),
    }
  }

  /**
   * Drops settled rows older than the retention (inside the caller's commit): final prompts, ended
   * runs no open prompt names, settled dialogs. Open rows and reports stay.
   */
  prune(now: number): Omit<Pruned, 'idempotency'> {
    const before = now - JOURNAL_RETENTION_MS
    const prompts = Number(this.db.run('DELETE FROM prompts WHERE final = 1 AND accepted_at < ?', before).changes)
    const runs = Number(
      this.db.run(
        `DELETE FROM runs WHERE ended_at IS NOT NULL AND ended_at < ? AND NOT EXISTS (
           SELECT 1 FROM prompts p WHERE p.thread_id = runs.thread_id AND p.final = 0 AND p.fate = 'ran' AND p.fate_run = runs.run)`,
        before,
      ).changes,
    )
    const dialogs = Number(this.db.run('DELETE FROM dialogs WHERE outcome IS NOT NULL AND opened_at < ?', before).changes)
    return { prompts, runs, dialogs }
  }
}

function fateColumns(fate: PromptFate | undefined): { fate: string | null; fateRun: number | null; reason: string | null } {
  if (!fate) return { fate: null, fateRun: null, reason: null }
  return {
    fate: fate.kind,
    fateRun: fate.kind === 'ran' ? fate.run : null,
    reason: fate.kind === 'rejected' ? fate.reason : null,
  }
}

function promptOf(r: Row): PromptRow {
  const fate: PromptFate | undefined =
    r.fate === 'ran'
      ? { kind: 'ran', run: Number(r.fate_run) }
      : r.fate === 'rejected'
        ? { kind: 'rejected', reason: String(r.reason) }
        : r.fate === 'restored' || r.fate === 'handled'
          ? { kind: r.fate }
          : undefined
  return {
    threadId: String(r.thread_id),
    messageId: String(r.message_id),
    text: String(r.text),
    admission: r.admission === 'reject' ? 'reject' : 'enqueue',
    deliverAs: r.deliver_as === 'followUp' ? 'followUp' : 'steer',
    queued: Boolean(r.queued),
    run: Number(r.run),
    acceptedAt: Number(r.accepted_at),
    ...(r.images != null ? { images: JSON.parse(String(r.images)) as PromptImage[] } : {}),
    ...(fate ? { fate } : {}),
  }
}

function runOf(r: Row): RunRow {
  return {
    threadId: String(r.thread_id),
    run: Number(r.run),
    startedAt: Number(r.started_at),
    ...(r.ended_at != null ? { endedAt: Number(r.ended_at), aborted: Boolean(r.aborted), endedBy: r.ended_by === 'restart' ? 'restart' : 'settled' } : {}),
  }
}

function dialogOf(r: Row): DialogRow {
  return {
    threadId: String(r.thread_id),
    dialogId: String(r.dialog_id),
    run: Number(r.run),
    openedAt: Number(r.opened_at),
    ...(r.outcome != null ? { outcome: String(r.outcome) } : {}),
  }
}

/**
 * The host's side of durability, on the store port: what a feed's observations write to the journal,
 * how the seq ceiling is reserved, and what recovery does on start. No SQL here — only the port.
 *
 * Writes per observation kind (never per streamed delta):
 *   status {busy, run N} the first time → run N started; settled → run N ended;
 *   user-message / prompt-rejected / prompt-handled → the prompt's fate (a rejection is also kept
 *   as a delivered report: pi's transcript never has it);
 *   extension-ui-request / dialog-settled → the dialog opened / settled;
 *   any frame above the reserved ceiling → the ceiling moves a batch ahead (one write per batch).
 */
import type { Observation, TranscriptEntry } from '../../schemas/index.js'
import type { PromptFate, RecoveryReport, ReportBody, ThreadStore } from './port.js'

/**
 * How far ahead of the feed the seq ceiling is reserved: one write per this many frames. A thread
 * that uses up its reservation within a second gets twice as much the next time (up to
 * MAX_SEQ_BATCH): a fast stream commits a handful of times, not once per thousand frames, and a
 * restart skips at most that many numbers.
 */
export const SEQ_BATCH = 1024
export const MAX_SEQ_BATCH = 1 << 20
const FAST_MS = 1000

/**
 * Where a thread continues when its ceiling is unknown (a rebuilt or migrated index): above every
 * seq it could have used, on the bound that no thread ever sent more frames than ten per
 * millisecond since 1970. Still far below 2^53.
 */
export function lostCeiling(now = Date.now()): number {
  return now * 10
}

export type Log = (level: 'debug' | 'info' | 'warn' | 'error', message: string) => void

/** One thread's journal writer, attached to each feed the thread gets. */
export class ThreadJournal {
  /** The seq ceiling as committed: frames up to it may be sent. */
  ceiling: number
  /** The highest run started (journaled). */
  runStarted: number
  #inFlight = false
  #batch = SEQ_BATCH
  #reservedAt = 0
  /** User messages reported before their run's status. */
  readonly #startingWith: string[] = []

  constructor(
    readonly threadId: string,
    readonly store: ThreadStore,
    init: { ceiling: number; run: number },
    readonly log?: Log,
  ) {
    this.ceiling = init.ceiling
    this.runStarted = init.run
  }

  /** Called for every observation, before any follower gets its frame. */
  observe(o: Observation): void {
    try {
      if (o.seq > this.ceiling) {
        const now = Date.now()
        this.#batch = now - this.#reservedAt < FAST_MS ? Math.min(this.#batch * 2, MAX_SEQ_BATCH) : SEQ_BATCH
        this.#reservedAt = now
        this.ceiling = o.seq + this.#batch
        this.store.reserveSeq(this.threadId, this.ceiling)
      }
      switch (o.type) {
        case 'status':
          if (o.busy && o.run > this.runStarted) {
            this.runStarted = o.run
            this.store.startRun(this.threadId, o.run, Date.now())
          }
          this.#inFlight = o.busy
          if (o.busy) for (const messageId of this.#startingWith.splice(0)) this.fate(messageId, { kind: 'ran', run: o.run })
          return
        case 'user-message':
          // A user message belongs to the run in flight. A runtime may report it while the run is
          // still being started (before its status): it then belongs to the run about to start.
          if (!this.#inFlight) return void this.#startingWith.push(o.messageId)
          return this.fate(o.messageId, { kind: 'ran', run: Math.max(o.run, this.runStarted) })
        case 'prompt-rejected':
          this.fate(o.messageId, { kind: 'rejected', reason: o.reason })
          return this.#keepRejected(o)
        case 'prompt-handled':
          return this.fate(o.messageId, { kind: 'handled' })
        case 'settled':
          this.#inFlight = false
          return this.store.endRun(this.threadId, o.run, o.aborted, Date.now(), 'settled')
        case 'extension-ui-request':
          return this.store.openDialog({ threadId: this.threadId, dialogId: o.id, run: this.runStarted, openedAt: Date.now() })
        case 'dialog-settled':
          return this.store.settleDialog(this.threadId, o.id, o.outcome)
        default:
          return
      }
    } catch (error) {
      this.log?.('error', `[${this.threadId}] journal write failed on ${o.type}: ${error instanceof Error ? error.message : String(error)}`)
    }
  }

  /**
   * A rejected prompt is in no transcript (pi never saw it), so its frame is kept as a report already
   * delivered: every later snapshot of the thread folds it in, as it does recovery's `restart` ones
   * (which come back through here when their feed delivers them: recovery alone says `restart`, and
   * its report is already kept). One write, already delivered, so a crash cannot send it twice.
   */
  #keepRejected(o: Extract<Observation, { type: 'prompt-rejected' }>): void {
    if (o.reason === 'restart') return
    const body: ReportBody = { type: 'prompt-rejected', messageId: o.messageId, reason: o.reason, ...(o.text !== undefined ? { text: o.text } : {}) }
    this.store.addReport(this.threadId, this.runStarted, body, { delivered: true })
  }

  /** A prompt's fate. Every prompt is journaled before the machine sees it; an id with no row (an extension's own message) is no prompt of ours. */
  fate(messageId: string, fate: PromptFate): void {
    this.store.settlePrompt(this.threadId, messageId, fate)
  }
}

/** What recovery did to one thread. */
export interface Recovered {
  threadId: string
  rejected: string[]
  interruptedRuns: number[]
  abortedDialogs: string[]
}

/**
 * Reconciles one thread's open journal with its transcript (pi's session file), after a crash:
 * - a prompt accepted but absent from the transcript (queued, or the first prompt of a thread whose
 *   session file never got it) is rejected `restart`, and a `prompt-rejected` is owed to its feed;
 * - a prompt the transcript shows ran;
 * - a run still open ended aborted (`restart`), and a `settled {aborted: true}` is owed to its feed;
 * - a dialog still open settled `aborted`.
 * Returns undefined when nothing of the thread was open.
 */
export function reconcile(store: ThreadStore, threadId: string, threadRun: number, transcript: TranscriptEntry[]): Recovered | undefined {
  const prompts = store.openPrompts(threadId)
  const runs = store.openRuns(threadId)
  const dialogs = store.openDialogs(threadId)
  if (prompts.length === 0 && runs.length === 0 && dialogs.length === 0) return undefined
  const ran = new Map<string, number>()
  let transcriptRun = 0
  for (const e of transcript) {
    if (e.kind !== 'user') continue
    ran.set(e.messageId, e.run)
    transcriptRun = Math.max(transcriptRun, e.run)
  }
  const afterRun = Math.max(threadRun, transcriptRun, ...runs.map((r) => r.run))
  const now = Date.now()
  const owed: ReportBody[] = []
  const recovered: Recovered = { threadId, rejected: [], interruptedRuns: [], abortedDialogs: [] }
  const openRuns = new Set(runs.map((r) => r.run))
  for (const p of prompts) {
    const run = ran.get(p.messageId)
    if (run !== undefined) {
      store.settlePrompt(threadId, p.messageId, { kind: 'ran', run })
      // A run the journal never saw start or end, but the transcript shows: it ran; close it as it was.
      if (!openRuns.has(run)) store.endRun(threadId, run, false, now, 'restart')
    } else {
      store.settlePrompt(threadId, p.messageId, { kind: 'rejected', reason: 'restart' })
      owed.push({ type: 'prompt-rejected', messageId: p.messageId, reason: 'restart', text: p.text })
      recovered.rejected.push(p.messageId)
    }
  }
  for (const r of runs) {
    store.endRun(threadId, r.run, true, now, 'restart')
    owed.push({ type: 'settled', run: r.run, aborted: true })
    recovered.interruptedRuns.push(r.run)
  }
  for (const d of dialogs) {
    store.settleDialog(threadId, d.dialogId, 'aborted')
    recovered.abortedDialogs.push(d.dialogId)
  }
  for (const body of owed) store.addReport(threadId, afterRun, body)
  return recovered
}

/**
 * The transcript a new feed starts from: the session's, with the reports already delivered to an
 * earlier feed folded in where they belong (after the run that was current when they were written),
 * exactly as the projection folds them: `rejected` for a prompt-rejected, `stopped` for a settle.
 */
export function withReports(transcript: TranscriptEntry[], reports: RecoveryReport[]): TranscriptEntry[] {
  if (reports.length === 0) return transcript
  const out = [...transcript]
  for (const report of reports) {
    const entry: TranscriptEntry =
      report.body.type === 'settled'
        ? { kind: 'stopped', run: report.body.run }
        : {
            kind: 'rejected',
            messageId: report.body.messageId,
            reason: report.body.reason,
            ...(report.body.text !== undefined ? { text: report.body.text } : {}),
          }
    const next = out.findIndex((e) => e.kind === 'user' && e.run > report.afterRun)
    if (next === -1) out.push(entry)
    else out.splice(next, 0, entry)
  }
  return out
}

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
 *
 * A write the disk refuses (full, read-only, I/O errors) is never dropped: it is kept, in order, and
 * tried again before the thread's next write, every RETRY_MS, and by `flush` (at shutdown). Until it
 * lands the store knows the fault, so requests that write are refused and health says degraded.
 */
import type { Observation, TranscriptEntry } from '../../schemas/index.js'
import { writeFault, type PromptFate, type RecoveryReport, type ReportBody, type ThreadStore } from './port.js'

/**
 * How far ahead of the feed the seq ceiling is reserved: one write per this many frames. A thread
 * that uses up its reservation within a second gets twice as much the next time (up to
 * MAX_SEQ_BATCH): a fast stream commits a handful of times, not once per thousand frames, and a
 * restart skips at most that many numbers.
 */
export const SEQ_BATCH = 1024
export const MAX_SEQ_BATCH = 1 << 20
const FAST_MS = 1000
/** How often journal writes the disk refused are tried again while they wait. */
export const RETRY_MS = 1000

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
  /** Writes the disk refused, oldest first: each is tried again before any later one. */
  readonly #pending: { what: string; write: () => void }[] = []
  #retry?: ReturnType<typeof setTimeout>
  /** The disk refused the oldest waiting write (said once, and once when they have landed). */
  #refused = false
  #stopped = false

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
    const { threadId, store } = this
    const at = Date.now()
    if (o.seq > this.ceiling) {
      this.#batch = at - this.#reservedAt < FAST_MS ? Math.min(this.#batch * 2, MAX_SEQ_BATCH) : SEQ_BATCH
      this.#reservedAt = at
      const ceiling = (this.ceiling = o.seq + this.#batch)
      this.#write('the seq ceiling', () => store.reserveSeq(threadId, ceiling))
    }
    switch (o.type) {
      case 'status':
        if (o.busy && o.run > this.runStarted) {
          const run = (this.runStarted = o.run)
          this.#write(`run ${run} started`, () => store.startRun(threadId, run, at))
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
        return this.#write(`run ${o.run} ended`, () => store.endRun(threadId, o.run, o.aborted, at, 'settled'))
      case 'extension-ui-request': {
        const row = { threadId, dialogId: o.id, run: this.runStarted, openedAt: at }
        return this.#write(`dialog ${o.id} opened`, () => store.openDialog(row))
      }
      case 'dialog-settled':
        return this.#write(`dialog ${o.id} ${o.outcome}`, () => store.settleDialog(threadId, o.id, o.outcome))
      default:
        return
    }
  }

  /** The write, after every earlier one the disk refused; kept for a retry if the disk refuses it too. */
  #write(what: string, write: () => void): void {
    if (this.#stopped) return
    this.#pending.push({ what, write })
    this.flush()
  }

  /**
   * Tries the writes the disk refused, oldest first, stopping at the first it refuses again (the
   * rest wait behind it, every RETRY_MS). A failure that is no disk fault is logged and dropped: it
   * would fail the same way every time. Returns whether nothing is left waiting.
   */
  flush(): boolean {
    clearTimeout(this.#retry)
    this.#retry = undefined
    while (this.#pending.length > 0) {
      const { what, write } = this.#pending[0]
      try {
        write()
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error)
        if (writeFault(error)) {
          if (!this.#refused) this.log?.('error', `[${this.threadId}] journal write failed (${what}): ${message}; kept, and retried until the disk takes it`)
          this.#refused = true
          this.#retry = setTimeout(() => this.flush(), RETRY_MS)
          this.#retry.unref()
          return false
        }
        this.log?.('error', `[${this.threadId}] journal write failed (${what}): ${message}`)
      }
      this.#pending.shift()
    }
    if (this.#refused) this.log?.('info', `[${this.threadId}] journal writes the disk refused are written now`)
    this.#refused = false
    return true
  }

  /** The writes still waiting for the disk, oldest first (what a shutdown that cannot flush loses). */
  get waiting(): string[] {
    return this.#pending.map((p) => p.what)
  }

  /** The thread is gone: nothing more is written for it, and nothing waiting is. */
  stop(): void {
    this.#stopped = true
    this.#pending.length = 0
    clearTimeout(this.#retry)
    this.#retry = undefined
  }

  /**
   * A rejected prompt is in no transcript (pi never saw it), so its frame is kept as a report already
   * delivered: every later snapshot of the thread folds it in, as it does recovery's `restart` ones
   * (which come back through here when their feed delivers them: recovery alone says `restart`, and
   * its report is already kept). One write, already delivered, so a crash cannot send it twice.
   */
  #keepRejected(o: Extract<Observation, { type: 'prompt-rejected' }>): void {
    if (o.reason === 'restart') return
    const body: ReportBody = {
      type: 'prompt-rejected',
      messageId: o.messageId,
      reason: o.reason,
      ...(o.text !== undefined ? { text: o.text } : {}),
      ...(o.images?.length ? { images: o.images } : {}),
    }
    const afterRun = this.runStarted
    this.#write(`prompt ${o.messageId} rejected`, () => this.store.addReport(this.threadId, afterRun, body, { delivered: true }))
  }

  /** A prompt's fate. Every prompt is journaled before the machine sees it; an id with no row (an extension's own message) is no prompt of ours. */
  fate(messageId: string, fate: PromptFate): void {
    this.#write(`prompt ${messageId} ${fate.kind}`, () => void this.store.settlePrompt(this.threadId, messageId, fate))
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
 *   session file never got it) is rejected `restart`, and a `prompt-rejected` is owed to its feed,
 *   with its text and images, so the user gets back all they sent;
 * - a prompt the transcript shows ran;
 * - a run still open ended aborted (`restart`), and a `settled {aborted: true}` is owed to its feed
 *   unless the transcript shows it stopped already (its end was written there, and lost here);
 * - a dialog still open settled `aborted`.
 * Returns undefined when nothing of the thread was open.
 */
export function reconcile(store: ThreadStore, threadId: string, threadRun: number, transcript: TranscriptEntry[]): Recovered | undefined {
  const prompts = store.openPrompts(threadId)
  const runs = store.openRuns(threadId)
  const dialogs = store.openDialogs(threadId)
  if (prompts.length === 0 && runs.length === 0 && dialogs.length === 0) return undefined
  const ran = new Map<string, number>()
  const stopped = new Set<number>()
  let transcriptRun = 0
  for (const e of transcript) {
    if (e.kind === 'stopped') stopped.add(e.run)
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
      owed.push({ type: 'prompt-rejected', messageId: p.messageId, reason: 'restart', text: p.text, ...(p.images?.length ? { images: p.images } : {}) })
      recovered.rejected.push(p.messageId)
    }
  }
  for (const r of runs) {
    store.endRun(threadId, r.run, true, now, 'restart')
    if (!stopped.has(r.run)) owed.push({ type: 'settled', run: r.run, aborted: true })
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
            ...(report.body.images?.length ? { images: report.body.images } : {}),
          }
    const next = out.findIndex((e) => e.kind === 'user' && e.run > report.afterRun)
    if (next === -1) out.push(entry)
    else out.splice(next, 0, entry)
  }
  return out
}

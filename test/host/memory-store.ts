/**
 * The store port in memory, for host tests: the same contract as the SQLite store, nothing durable.
 * `crash()` hands back a new store holding exactly what was "committed", as a restart would see it.
 */
import {
  IDEMPOTENCY_TTL_MS,
  JOURNAL_RETENTION_MS,
  type DialogRow,
  type IdempotencyClaim,
  type IdempotentAnswer,
  type PromptFate,
  type PromptRow,
  type Pruned,
  type RecoveryReport,
  type ReportBody,
  type RunRow,
  type ThreadRow,
  type ThreadStore,
} from '../../src/host/store/port.js'

const copy = <T>(value: T): T => structuredClone(value)

export class MemoryThreadStore implements ThreadStore {
  readonly kind = 'memory'
  readonly #threads = new Map<string, ThreadRow>()
  #prompts: PromptRow[] = []
  #runs: RunRow[] = []
  #dialogs: DialogRow[] = []
  #reports: RecoveryReport[] = []
  #idempotent = new Map<string, IdempotentAnswer>()
  #nextReport = 1
  #closed = false
  /** How many writes were made, by method: tests check the hot path stays quiet. */
  readonly writes = new Map<string, number>()

  /** A store with this one's state, as the next process would open it. */
  crash(): MemoryThreadStore {
    const next = new MemoryThreadStore()
    for (const [id, row] of this.#threads) next.#threads.set(id, copy(row))
    next.#prompts = copy(this.#prompts)
    next.#runs = copy(this.#runs)
    next.#dialogs = copy(this.#dialogs)
    next.#reports = copy(this.#reports)
    next.#nextReport = this.#nextReport
    next.#idempotent = new Map([...this.#idempotent].map(([k, v]) => [k, copy(v)]))
    this.#closed = true
    return next
  }

  #write(name: string): boolean {
    if (this.#closed) return false
    this.writes.set(name, (this.writes.get(name) ?? 0) + 1)
    return true
  }

  threads(): ThreadRow[] {
    return [...this.#threads.values()].map(copy)
  }

  putThread(row: ThreadRow): void {
    if (!this.#write('putThread')) return
    this.#put(row)
  }

  /** As the SQLite store: the seq ceiling and the run counter never go back. */
  #put(row: ThreadRow): void {
    const old = this.#threads.get(row.threadId)
    this.#threads.set(row.threadId, copy({ ...row, seq: Math.max(row.seq, old?.seq ?? 0), run: Math.max(row.run, old?.run ?? 0) }))
  }

  deleteThread(threadId: string): void {
    if (!this.#write('deleteThread')) return
    this.#threads.delete(threadId)
    this.#prompts = this.#prompts.filter((p) => p.threadId !== threadId)
    this.#runs = this.#runs.filter((r) => r.threadId !== threadId)
    this.#dialogs = this.#dialogs.filter((d) => d.threadId !== threadId)
    this.#reports = this.#reports.filter((r) => r.threadId !== threadId)
  }

  reserveSeq(threadId: string, ceiling: number): void {
    if (!this.#write('reserveSeq')) return
    const row = this.#threads.get(threadId)
    if (row && ceiling > row.seq) row.seq = ceiling
  }

  admitPrompt(prompt: PromptRow, thread: ThreadRow, claim?: IdempotencyClaim): void {
    if (!this.#write('admitPrompt')) return
    this.#prompts = this.#prompts.filter((p) => !(p.threadId === prompt.threadId && p.messageId === prompt.messageId))
    this.#prompts.push(copy(prompt))
    this.#put(thread)
    if (claim && !this.#idempotent.has(claim.key)) {
      const pending = { threadId: prompt.threadId, messageId: prompt.messageId }
      this.#idempotent.set(claim.key, { key: claim.key, fingerprint: claim.fingerprint, status: 0, body: '', at: prompt.acceptedAt, pending })
    }
  }

  promptAdmitted(threadId: string, messageId: string, admission: { run: number; queued: boolean }, thread: ThreadRow): void {
    if (!this.#write('promptAdmitted')) return
    const row = this.#prompts.find((p) => p.threadId === threadId && p.messageId === messageId)
    if (row) Object.assign(row, admission)
    this.#put(thread)
  }

  withdrawPrompt(threadId: string, messageId: string): void {
    if (!this.#write('withdrawPrompt')) return
    this.#prompts = this.#prompts.filter((p) => !(p.threadId === threadId && p.messageId === messageId))
  }

  settlePrompt(threadId: string, messageId: string, fate: PromptFate): boolean {
    if (!this.#write('settlePrompt')) return true
    const row = this.#prompts.find((p) => p.threadId === threadId && p.messageId === messageId)
    if (!row) return false
    if (!this.#final(row)) row.fate = copy(fate)
    return true
  }

  #final(p: PromptRow): boolean {
    if (!p.fate) return false
    if (p.fate.kind !== 'ran') return true
    const run = p.fate.run
    return this.#runs.some((r) => r.threadId === p.threadId && r.run === run && r.endedAt !== undefined)
  }

  openPrompts(threadId?: string): PromptRow[] {
    return this.#prompts.filter((p) => (threadId === undefined || p.threadId === threadId) && !this.#final(p)).map(copy)
  }

  startRun(threadId: string, run: number, at: number): void {
    if (!this.#write('startRun')) return
    if (!this.#runs.some((r) => r.threadId === threadId && r.run === run)) this.#runs.push({ threadId, run, startedAt: at })
    const row = this.#threads.get(threadId)
    if (row && run > row.run) row.run = run
  }

  endRun(threadId: string, run: number, aborted: boolean, at: number, by: 'settled' | 'restart'): void {
    if (!this.#write('endRun')) return
    let row = this.#runs.find((r) => r.threadId === threadId && r.run === run)
    if (!row) {
      row = { threadId, run, startedAt: at }
      this.#runs.push(row)
    }
    if (row.endedAt !== undefined) return
    Object.assign(row, { endedAt: at, aborted, endedBy: by })
  }

  openRuns(threadId?: string): RunRow[] {
    return this.#runs.filter((r) => (threadId === undefined || r.threadId === threadId) && r.endedAt === undefined).map(copy)
  }

  openDialog(row: DialogRow): void {
    if (!this.#write('openDialog')) return
    if (!this.#dialogs.some((d) => d.threadId === row.threadId && d.dialogId === row.dialogId)) this.#dialogs.push(copy(row))
  }

  settleDialog(threadId: string, dialogId: string, outcome: string): void {
    if (!this.#write('settleDialog')) return
    const row = this.#dialogs.find((d) => d.threadId === threadId && d.dialogId === dialogId)
    if (row && row.outcome === undefined) row.outcome = outcome
  }

  openDialogs(threadId?: string): DialogRow[] {
    return this.#dialogs.filter((d) => (threadId === undefined || d.threadId === threadId) && d.outcome === undefined).map(copy)
  }

  addReport(threadId: string, afterRun: number, body: ReportBody, options: { delivered?: boolean } = {}): void {
    if (!this.#write('addReport')) return
    this.#reports.push({ id: this.#nextReport++, threadId, afterRun, delivered: options.delivered ?? false, body: copy(body) })
  }

  reports(threadId: string): RecoveryReport[] {
    return this.#reports.filter((r) => r.threadId === threadId).map(copy)
  }

  markDelivered(threadId: string, ids: number[]): void {
    if (!this.#write('markDelivered')) return
    for (const r of this.#reports) if (r.threadId === threadId && ids.includes(r.id)) r.delivered = true
  }

  idempotent(key: string, since: number): IdempotentAnswer | undefined {
    const answer = this.#idempotent.get(key)
    return answer && answer.at >= since ? copy(answer) : undefined
  }

  recordIdempotent(answer: IdempotentAnswer, expireBefore: number): void {
    if (!this.#write('recordIdempotent')) return
    for (const [key, old] of this.#idempotent) if (old.at < expireBefore) this.#idempotent.delete(key)
    this.#idempotent.set(answer.key, copy(answer))
  }

  prune(now: number): Pruned {
    if (!this.#write('prune')) return { prompts: 0, runs: 0, dialogs: 0, idempotency: 0 }
    const before = now - JOURNAL_RETENTION_MS
    const counted = <T>(rows: T[], drop: (row: T) => boolean): [T[], number] => {
      const kept = rows.filter((row) => !drop(row))
      return [kept, rows.length - kept.length]
    }
    const named = (r: RunRow) =>
      this.#prompts.some((p) => p.threadId === r.threadId && p.fate?.kind === 'ran' && p.fate.run === r.run && !this.#final(p))
    const [prompts, p] = counted(this.#prompts, (row) => this.#final(row) && row.acceptedAt < before)
    const [runs, r] = counted(this.#runs, (row) => row.endedAt !== undefined && row.endedAt < before && !named(row))
    const [dialogs, d] = counted(this.#dialogs, (row) => row.outcome !== undefined && row.openedAt < before)
    let idempotency = 0
    for (const [key, old] of this.#idempotent) if (old.at < now - IDEMPOTENCY_TTL_MS) idempotency += Number(this.#idempotent.delete(key))
    // Runs are dropped after the prompts: a prompt is final because its run ended, read before either goes.
    this.#prompts = prompts
    this.#runs = runs
    this.#dialogs = dialogs
    return { prompts: p, runs: r, dialogs: d, idempotency }
  }

  /** Memory never fills up. */
  checkWritable(): void {}

  journal(threadId: string): { prompts: PromptRow[]; runs: RunRow[]; dialogs: DialogRow[] } {
    return {
      prompts: this.#prompts.filter((p) => p.threadId === threadId).map(copy),
      runs: this.#runs.filter((r) => r.threadId === threadId).map(copy),
      dialogs: this.#dialogs.filter((d) => d.threadId === threadId).map(copy),
    }
  }

  close(): void {
    this.#closed = true
  }
}

/**
 * The host's store port: what threadhost itself owns and must not lose, behind one interface.
 *
 * pi's session JSONL files are the transcripts; this store holds the rest — the threads (title,
 * model, thinking level, workspace, run counter, the seq ceiling) and a per-thread journal of the
 * commands the host accepted: every admitted prompt and its fate, every run and how it ended, every
 * dialog and its outcome, and the reports recovery still owes a feed. Every method is synchronous:
 * when it returns, the change is durable (the SQLite implementation commits before returning), so a
 * route can answer 2xx right after. No SQLite type or SQL leaves src/host/store/.
 */
import type { PromptImage, ThinkingLevel } from '../../schemas/index.js'
import type { PersistedFacts } from '../../runtime/port.js'

export interface ThreadRow {
  threadId: string
  title: string
  model: string
  /** Unset: pi's configured default for the model. */
  thinkingLevel?: ThinkingLevel
  /** The thread's workspace, fixed at creation. Absent in records from before workspaces: the default root. */
  cwd?: string
  createdAt: number
  updatedAt: number
  /** The highest run number started, so run numbers keep counting across restarts. */
  run: number
  /**
   * The seq ceiling: no frame of this thread was ever numbered above it. A new life of the thread
   * continues strictly above it, so no tab's Last-Event-ID is ever reused.
   */
  seq: number
  /** What its conversation says for its summary while no feed is loaded: first prompt, last message, names, fork link. */
  facts?: ThreadFacts
}

/** The runtime's `PersistedFacts`, as the store keeps them (thread-display.ts reads them). */
export type ThreadFacts = PersistedFacts

/** How an accepted prompt ended, when known. */
export type PromptFate =
  /** Delivered to the agent as run N's user message (final once run N ends, or once the transcript shows it). */
  | { kind: 'ran'; run: number }
  /** Handed back by a stop (`restored`). */
  | { kind: 'restored' }
  /** Reported `prompt-rejected` with this reason (`restart`: accepted before a crash, never started). */
  | { kind: 'rejected'; reason: string }
  /** An extension consumed it (`prompt-handled`). */
  | { kind: 'handled' }

export interface PromptRow {
  threadId: string
  messageId: string
  text: string
  admission: 'enqueue' | 'reject'
  deliverAs: 'steer' | 'followUp'
  /** Queued into a running run (else it started a run, or waited for a stop and then started one). */
  queued: boolean
  /** The run it was admitted into (queued) or started. */
  run: number
  acceptedAt: number
  /** The images sent with it (bounded by the route: 4 of 5 MB at most): a prompt handed back comes back whole. */
  images?: PromptImage[]
  fate?: PromptFate
}

export interface RunRow {
  threadId: string
  run: number
  startedAt: number
  endedAt?: number
  aborted?: boolean
  /** `settled`: the runtime's own settle; `restart`: in flight when the host died, ended by recovery. */
  endedBy?: 'settled' | 'restart'
}

export interface DialogRow {
  threadId: string
  dialogId: string
  run: number
  openedAt: number
  /** The dialog's settle outcome (`answered`, `cancelled`, `timeout`, `aborted`); `aborted` by recovery for one open at a crash. */
  outcome?: string
}

/** An observation recovery owes a thread's feed. */
export type ReportBody =
  | { type: 'prompt-rejected'; messageId: string; reason: string; text?: string; images?: PromptImage[] }
  | { type: 'settled'; run: number; aborted: true }

export interface RecoveryReport {
  id: number
  threadId: string
  /** The thread's last run when it was written: the report belongs after that run in the transcript. */
  afterRun: number
  /**
   * Not yet appended to a feed: the next feed of the thread appends it (a frame every follower
   * gets). Once delivered, it is folded into every later snapshot of the thread instead.
   */
  delivered: boolean
  body: ReportBody
}

export interface ThreadStore {
  /** `sqlite` or `memory`. */
  readonly kind: string
  threads(): ThreadRow[]
  /**
   * Inserts or replaces the thread row. `restored`: the row put back as it stood before a delete that
   * did not go through — copies of it elsewhere (a cluster's index) were never removed, and may be newer.
   */
  putThread(row: ThreadRow, options?: { restored?: boolean }): void
  /** The thread and its whole journal. */
  deleteThread(threadId: string): void
  /** Raises the seq ceiling (never lowers it). */
  reserveSeq(threadId: string, ceiling: number): void

  /**
   * An admitted prompt, with the thread's row (its updatedAt and run), in one commit. With the
   * request's `Idempotency-Key` claim, the same commit claims the key for this prompt (an answer
   * `pending` on it), unless the key is already known: a crash before the answer is recorded then
   * leaves the key pointing at the journaled prompt, and a retry is answered from it.
   */
  admitPrompt(prompt: PromptRow, thread: ThreadRow, claim?: IdempotencyClaim): void
  /**
   * Cluster mode (src/host/cluster/cluster-node.ts): resolves once the prompt `admitPrompt` journaled is
   * in the thread's log too, the record every node reads (false: another node owns the thread now). The
   * machine is given the prompt only then, as it is given it only once journaled. Absent in one process.
   */
  promptLogged?(threadId: string, messageId: string): Promise<boolean>
  /**
   * The machine's answer to a prompt journaled (by `admitPrompt`) before it was sent: its run and
   * whether it was queued, with the thread's row, in one commit.
   */
  promptAdmitted(threadId: string, messageId: string, admission: { run: number; queued: boolean }, thread: ThreadRow): void
  /** A prompt journaled before it was sent, and then refused: nothing of it stays. */
  withdrawPrompt(threadId: string, messageId: string): void
  /** Records a prompt's fate; `false` when no such prompt was journaled (yet). */
  settlePrompt(threadId: string, messageId: string, fate: PromptFate): boolean
  /** Prompts whose fate is not final yet: none known, or `ran` in a run that has not ended. */
  openPrompts(threadId?: string): PromptRow[]

  /** Run N started (the thread's run counter rises with it). */
  startRun(threadId: string, run: number, at: number): void
  /** Run N ended; its `ran` prompts become final. A run already ended is left as it was. */
  endRun(threadId: string, run: number, aborted: boolean, at: number, by: 'settled' | 'restart'): void
  openRuns(threadId?: string): RunRow[]

  openDialog(row: DialogRow): void
  settleDialog(threadId: string, dialogId: string, outcome: string): void
  openDialogs(threadId?: string): DialogRow[]

  /** `delivered`: the frame is on the feed already (it is kept for later snapshots, not owed to one). */
  addReport(threadId: string, afterRun: number, body: ReportBody, options?: { delivered?: boolean }): void
  reports(threadId: string): RecoveryReport[]
  markDelivered(threadId: string, ids: number[]): void

  /** The answer recorded for an `Idempotency-Key`, if it was recorded at or after `since` (epoch ms). */
  idempotent(key: string, since: number): IdempotentAnswer | undefined
  /** Records a keyed request's answer (one commit), dropping every answer recorded before `expireBefore`. */
  recordIdempotent(answer: IdempotentAnswer, expireBefore: number): void

  /**
   * Throws the error a write would throw now (ENOSPC, EROFS, SQLITE_FULL, SQLITE_READONLY…), so a
   * request that could not be made durable is refused before anything runs. Cheap when all is well:
   * no commit per call (the SQLite store checks the data dir's free space and write access, and
   * writes a probe only after a write has failed, to see whether the fault has cleared).
   */
  checkWritable(): void

  /**
   * Drops what nothing will need again (one commit): `Idempotency-Key` answers older than
   * IDEMPOTENCY_TTL_MS, and journal rows whose fate is settled and older than JOURNAL_RETENTION_MS —
   * final prompts, ended runs no open prompt names, settled dialogs. Open rows (what recovery reads)
   * and feed reports (folded into every snapshot) are never dropped. The SQLite store runs it at open
   * and every PRUNE_EVERY_MS.
   */
  prune(now: number): Pruned

  /** A thread's journal, oldest first (tests, the inspector). */
  journal(threadId: string): { prompts: PromptRow[]; runs: RunRow[]; dialogs: DialogRow[] }

  /** Further calls are ignored. */
  close(): void
}

/** A request's `Idempotency-Key`, as its answer will be recorded: the key and the request's digest. */
export interface IdempotencyClaim {
  key: string
  fingerprint: string
}

/** How long a keyed request's answer is kept and replayed. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000
/** How long settled journal rows are kept (history for the inspector); never less than IDEMPOTENCY_TTL_MS. */
export const JOURNAL_RETENTION_MS = 7 * 24 * 60 * 60 * 1000
export const PRUNE_EVERY_MS = 60 * 60 * 1000

/** What one `prune` dropped. */
export interface Pruned {
  prompts: number
  runs: number
  dialogs: number
  idempotency: number
}

/** What a failed write says, as the server words it: `full` → 507, `read-only` (or failing with I/O errors) → 503. */
export type WriteFault = { kind: 'full' | 'read-only'; code: string; message: string }

const FULL_CODES = new Set(['ENOSPC', 'EDQUOT', 'SQLITE_FULL'])
/**
 * An I/O error is a disk that cannot be written too: an ext4 disk switched read-only under the
 * process (`errors=remount-ro`) fails every write with EROFS, which SQLite reports as SQLITE_IOERR
 * (`disk I/O error`), while access() and statfs() still say writable.
 */
const READ_ONLY_CODES = new Set(['EROFS', 'EACCES', 'EPERM', 'EIO', 'SQLITE_READONLY', 'SQLITE_IOERR'])
/** SQLite's primary result codes (node:sqlite's `errcode` is the extended one: its low byte). */
const SQLITE_CODES: Record<number, string> = { 8: 'SQLITE_READONLY', 10: 'SQLITE_IOERR', 13: 'SQLITE_FULL' }

/**
 * Classifies an error thrown by a store write: a full disk or a data dir that cannot be written
 * (read-only, or failing with I/O errors), or `undefined` for anything else.
 */
export function writeFault(error: unknown): WriteFault | undefined {
  if (!error || typeof error !== 'object') return undefined
  const e = error as { code?: unknown; errcode?: unknown; errstr?: unknown; message?: unknown }
  const message = typeof e.message === 'string' ? e.message : String(error)
  const sqlite = typeof e.errcode === 'number' ? SQLITE_CODES[e.errcode & 0xff] : undefined
  const code = sqlite ?? (typeof e.code === 'string' ? e.code : '')
  if (FULL_CODES.has(code) || /disk is full|no space left/i.test(message)) return { kind: 'full', code: code || 'ENOSPC', message }
  if (READ_ONLY_CODES.has(code) || /read-only|readonly|disk I\/O error/i.test(message)) return { kind: 'read-only', code: code || 'EROFS', message }
  return undefined
}

/**
 * The first answer to a request that carried an `Idempotency-Key`: a repeat with the same key (and
 * the same request) gets exactly this back, and nothing runs again.
 */
export interface IdempotentAnswer {
  key: string
  /** A digest of the request (method, route, params, body): the same key with another request is refused. */
  fingerprint: string
  status: number
  /** The response body as sent ('' for none). */
  body: string
  at: number
  /**
   * Claimed with a prompt's admission, but its answer was never recorded (the process died between
   * the two): the answer is the journaled prompt's receipt. `status` and `body` are then meaningless.
   */
  pending?: { threadId: string; messageId: string }
}

/** How a store was opened: `fresh` (no data before), `kept`, `migrated` (from threads.json) or `rebuilt` (the file was unusable). */
export type StoreOrigin = 'fresh' | 'kept' | 'migrated' | 'rebuilt'

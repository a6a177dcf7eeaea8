/**
 * The only way a node writes a thread's log: records in order, one append in flight at a time, each
 * conditional on the position of this writer's own last record. What piles up while an append is in
 * flight goes together in the next one (one `batch` record: each append is a round trip to the engine
 * that the next one waits for). A refused append means another node owns the thread:
 * the writer stops for good and says so (`onFenced`); it never retries it. Any other failure (the
 * engine restarting) is tried again every 100 ms, in order: the same record under the same id, so an
 * append that landed but whose answer was lost is recognised by the engine, not written twice.
 * Once the writer stopped, it writes nothing: an append on its way that got no answer is only asked after (`#lastOutcome`).
 */
import { randomUUID } from 'node:crypto'
import type { Log } from '../store/journal.js'
import { Fenced, type ThreadLogs, type ThreadRecord } from './port.js'

const RETRY_MS = 100
/** How long the engine is asked whether an append on its way when the writer stopped landed. */
const SETTLE_FOR_MS = 5000
/** The position `#lastOutcome` asks at: no log is ever there, so only the duplicate window can answer it. */
const NEVER = Number.MAX_SAFE_INTEGER
/** What `#lastOutcome` sends: the engine answers by the id alone, and writes it nowhere. */
const ASK: ThreadRecord = { kind: 'frames', frames: [] }

export class LogWriter {
  /** Records not sent yet: frames pushed meanwhile may still join the last one. */
  #queue: ThreadRecord[] = []
  /** The record being appended (`count` records made), under the id every attempt at it carries; never changed once sent. */
  #inFlight?: { record: ThreadRecord; id: string; count: number }
  #pumping = false
  #fenced = false
  #closed = false
  /** Records made so far (a frame that joins a queued record makes none) and records in the log. */
  #made = 0
  #appended = 0
  /** How many records the append now on its way carries (the engine may take it after the writer stopped). */
  #carrying = 0
  /** Each waits for the records made before it asked, not for what is pushed after (a run streaming on). */
  #waiting: { upTo: number; resolve: (ok: boolean) => void }[] = []
  epochWritten = false

  constructor(
    readonly threadId: string,
    private readonly logs: ThreadLogs,
    /** The position of the last record this writer read: its first append must land right after it. */
    public position: number,
    private readonly onFenced: (error: Fenced) => void,
    private readonly log?: Log,
    /** Each record once it is in the log, at its position, in order. */
    private readonly onAppended?: (record: ThreadRecord, position: number) => void,
  ) {}

  get fenced(): boolean {
    return this.#fenced
  }

  push(record: ThreadRecord): void {
    // Dropped, and counted: a flush that covers it says it is in no log.
    if (this.#fenced || this.#closed) return void this.#made++
    const last = this.#queue.at(-1)
    if (record.kind === 'frames' && last?.kind === 'frames') last.frames.push(...record.frames)
    else {
      this.#queue.push(record.kind === 'frames' ? { kind: 'frames', frames: [...record.frames] } : record)
      this.#made++
    }
    void this.#pump()
  }

  /** How many records were made so far: `flushed(made)` waits for those alone. */
  get made(): number {
    return this.#made
  }

  /**
   * Resolves true once the first `upTo` records made (everything pushed so far, by default) are in the
   * log; false once they cannot get there (the writer stopped, and no append on its way carries them:
   * one sent before the stop may still land). What is pushed after is not waited for: a
   * prompt's 202 waits for its own record, not for the frames of the run it started.
   */
  flushed(upTo = this.#made): Promise<boolean> {
    // Records appended before the writer stopped are in the log all the same.
    if (this.#appended >= upTo) return Promise.resolve(true)
    if (upTo > this.#landing) return Promise.resolve(false)
    return new Promise((resolve) => this.#waiting.push({ upTo, resolve }))
  }

  /** Records that may still reach the log: all of them while the writer runs; once it stopped, those of the append on its way. */
  get #landing(): number {
    return this.#fenced || this.#closed ? this.#appended + this.#carrying : Infinity
  }

  /**
   * The thread is not this node's any more (another node appended first, or the lease was lost): as
   * `close`, and `fenced` from now on — what was written under it may be in no log.
   */
  lose(): void {
    this.#fenced = true
    this.close()
  }

  close(): void {
    this.#closed = true
    this.#queue = []
    this.#inFlight = undefined
    this.#settle()
  }

  async #pump(): Promise<void> {
    if (this.#pumping) return
    this.#pumping = true
    let failingSince: number | undefined
    try {
      while ((this.#inFlight || this.#queue.length > 0) && !this.#fenced && !this.#closed) {
        this.#inFlight ??= this.#take()
        const { record, id, count } = this.#inFlight
        this.#carrying = count
        try {
          this.position = await this.logs.append(this.threadId, record, this.position, id)
          this.#inFlight = undefined
          this.#carrying = 0
          this.#appended += count
          this.#settle()
          // Its own failure (a follower's fold) is not the append's: that is in the log, never retried.
          try {
            this.onAppended?.(record, this.position)
          } catch (error) {
            this.log?.('error', `[${this.threadId}] cluster: folding an appended record failed: ${String(error)}`)
          }
          if (failingSince !== undefined) {
            this.log?.('warn', `[${this.threadId}] cluster: appends go through again after ${Date.now() - failingSince} ms`)
            failingSince = undefined
          }
        } catch (error) {
          if (error instanceof Fenced) {
            this.#carrying = 0
            this.#fenced = true
            this.#queue = []
            this.#inFlight = undefined
            this.log?.('warn', error.message)
            this.onFenced(error)
            break
          }
          // No answer: the append may have landed all the same, so it still counts as on its way.
          if (!this.#closed) {
            if (failingSince === undefined) {
              failingSince = Date.now()
              this.log?.('warn', `[${this.threadId}] cluster: append failed (${String(error)}); retrying every ${RETRY_MS} ms`)
            }
            await new Promise((resolve) => setTimeout(resolve, RETRY_MS))
          }
          // Stopped before or while waiting to send it again: never sent again, only asked after.
          if (this.#closed) {
            await this.#lastOutcome(id, count)
            break
          }
        }
      }
    } finally {
      this.#pumping = false
      // A record pushed while the last append was being acknowledged.
      if ((this.#inFlight || this.#queue.length > 0) && !this.#fenced && !this.#closed) void this.#pump()
      else this.#settle()
    }
  }

  /**
   * The writer stopped while an append was on its way that failed with no answer from the engine (the
   * connection dropped): it may have landed, and a command's answer waits on it. The engine is asked
   * under the same id, at a position no log is ever at, every 100 ms for up to `SETTLE_FOR_MS`: its
   * duplicate window answers an append that landed with its position; anything else is refused, and the
   * record was never written — nor is it now: a writer that stopped writes nothing new. Unknown after
   * that, it counts as not in the log (the command is answered 503; a keyed retry is safe).
   */
  async #lastOutcome(id: string, count: number): Promise<void> {
    const until = Date.now() + SETTLE_FOR_MS
    for (let first = true; Date.now() < until; first = false) {
      if (!first) await new Promise((resolve) => setTimeout(resolve, RETRY_MS))
      try {
        await this.logs.append(this.threadId, ASK, NEVER, id)
        this.#appended += count
        break
      } catch (error) {
        if (error instanceof Fenced) break
      }
    }
    this.#carrying = 0
    this.#settle()
  }

  /**
   * Everything queued, as one record — up to a `deleted` record, which goes alone: a delete's forget
   * removes what is before its position, and what came after it is a new thread's.
   */
  #take(): { record: ThreadRecord; id: string; count: number } {
    const cut = this.#queue.findIndex((record) => record.kind === 'deleted')
    const records = this.#queue.splice(0, cut === 0 ? 1 : cut > 0 ? cut : this.#queue.length)
    return { record: records.length === 1 ? records[0] : { kind: 'batch', records }, id: randomUUID(), count: records.length }
  }

  /** Answers the waiters whose records are all in the log, and those whose records can no longer get there. */
  #settle(): void {
    if (this.#waiting.length === 0) return
    const landing = this.#landing
    const still: { upTo: number; resolve: (ok: boolean) => void }[] = []
    for (const waiter of this.#waiting) {
      if (waiter.upTo <= this.#appended) waiter.resolve(true)
      else if (waiter.upTo > landing) waiter.resolve(false)
      else still.push(waiter)
    }
    this.#waiting = still
  }
}

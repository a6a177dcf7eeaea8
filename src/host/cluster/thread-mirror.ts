/**
 * A thread as any node sees it from its log: the owner's frames folded into a `Feed` (ring, view,
 * followers), so the server's fan-out and resume work on it exactly as on the owner's own feed, and
 * every node sends the same bytes for the same seq. Also the prompts the log says were accepted and
 * have no fate yet: what a takeover reports back `owner-lost`.
 *
 * A new base (an epoch carrying one, over a view built otherwise) starts a new `Feed`: the old one's
 * followers are closed and reconnect with their last seq, getting a snapshot — never a gap.
 */
import type { Observation, ObservationInput } from '../../schemas/index.js'
import type { ThreadView } from '../../shared/projection.js'
import { Feed } from '../feed.js'
import type { Log } from '../store/journal.js'
import type { ThreadLogs, ThreadRecord } from './port.js'

/** The observation inside one SSE frame (`id:`, `event:`, one `data:` line). */
export function observationOf(frame: string): Observation {
  const data = frame.indexOf('\ndata: ')
  return JSON.parse(frame.slice(data + 7, frame.lastIndexOf('\n\n'))) as Observation
}

/** A keyed prompt's admission as the log holds it: the receipt its 202 carried. */
export interface KeyedAdmission {
  messageId: string
  fingerprint: string
  run: number
  queued: boolean
}

/** The keyed prompts a mirror remembers, newest first kept: a thread's every prompt is keyed by the web client. */
const MAX_KEYED = 1000

const FATES = new Set(['user-message', 'prompt-rejected', 'prompt-handled'])

/**
 * The bytes the feed just sent for `observation`, its newest frame (encoded once by the feed's append;
 * a second encoding per frame on every node would only repeat it). Undefined if it is not the newest.
 */
export function lastFrame(feed: Feed, observation: Observation): Buffer | undefined {
  if (feed.seq !== observation.seq) return undefined
  const resume = feed.resume(observation.seq - 1)
  return resume.kind === 'frames' && resume.frames.length === 1 ? resume.frames[0] : undefined
}

export class ThreadMirror {
  feed?: Feed
  /** The position of the last record folded (0: none). */
  position = 0
  /** Accepted prompts with no fate in the log yet, in order of acceptance. */
  readonly openPrompts = new Map<string, string>()
  /**
   * The prompts the log says were admitted under an `Idempotency-Key`, by key, with the receipt their
   * 202 carried: how a node that took the thread over answers a retry whose first owner died before
   * recording the answer. A withdrawn prompt (refused, nothing ran) leaves its key free.
   */
  readonly keyed = new Map<string, KeyedAdmission>()
  readonly #keyOf = new Map<string, string>()
  #framesSinceBase = 0
  #reader?: { stop(): void }
  #ready: Promise<void>
  #markReady!: () => void
  #stopTimer?: ReturnType<typeof setTimeout>

  constructor(
    readonly threadId: string,
    private readonly logs: ThreadLogs,
    /** The view from the thread's persisted transcript, for a log that holds nothing yet. */
    private readonly fileView: () => Promise<ThreadView>,
    private readonly options: { ringSize?: number; log?: Log; onIdle?: () => void } = {},
  ) {
    this.#ready = new Promise((resolve) => (this.#markReady = resolve))
  }

  start(): void {
    this.#reader = this.logs.read(
      this.threadId,
      (record, position) => this.appended(record, position),
      () => void this.#caughtUp(),
    )
  }

  /**
   * A record at its position in the log, folded once: the owner's own appends come here as soon as the
   * engine acknowledges them (its followers need not wait for the reader to bring them back), and the
   * reader's copy of each is then passed over.
   */
  appended(record: ThreadRecord, position: number): void {
    if (position > this.position) this.#apply(record, position)
  }

  /** Resolves once every record there was at the start is folded and there is a feed. */
  ready(): Promise<void> {
    return this.#ready
  }

  /** Resolves once the record at `position` (or a later one) is folded. */
  async reached(position: number): Promise<void> {
    while (this.position < position) await new Promise((resolve) => setTimeout(resolve, 2))
  }

  async #caughtUp(): Promise<void> {
    if (!this.feed) {
      const view = await this.fileView().catch(() => undefined)
      this.feed ??= this.#newFeed(view ?? undefined)
    }
    this.#markReady()
  }

  #newFeed(view: ThreadView | undefined): Feed {
    const base = view ?? ({ type: 'snapshot', threadId: this.threadId, seq: 0, status: { live: false, busy: false, run: 0 }, transcript: [], queue: { steering: [], followUp: [] }, openDialogs: [], statusItems: {}, widgets: {}, working: { visible: true } } as ThreadView)
    this.#framesSinceBase = 0
    return new Feed(base, { ringSize: this.options.ringSize, onUnfollowed: () => this.#unfollowed() })
  }

  #rebase(view: ThreadView): void {
    const old = this.feed
    this.feed = this.#newFeed(view)
    old?.close()
  }

  #apply(record: ThreadRecord, position: number): void {
    this.position = position
    switch (record.kind) {
      case 'batch':
        for (const one of record.records) this.#apply(one, position)
        return
      case 'epoch':
        // Only the first epoch of a log carries a base; one equal to the view already shown changes nothing.
        if (record.base && (!this.feed || this.#framesSinceBase > 0 || this.feed.seq !== (record.base as ThreadView).seq)) this.#rebase(record.base as ThreadView)
        return
      case 'prompt':
        this.#keyed(record)
        if (record.op === 'accepted') this.openPrompts.set(record.messageId, record.text)
        else if (record.op === 'settled') this.openPrompts.delete(record.messageId)
        return
      case 'frames':
        for (const frame of record.frames) this.#frame(frame)
        return
    }
  }

  #keyed(record: Extract<ThreadRecord, { kind: 'prompt' }>): void {
    if (record.op === 'accepted') {
      if (!record.key) return
      const { key, fingerprint, run, queued = false } = record.key
      this.#keyOf.set(record.messageId, key)
      // A retry comes within seconds of its first's owner dying: the newest keys are the ones asked for.
      if (this.keyed.size >= MAX_KEYED) this.keyed.delete(this.keyed.keys().next().value!)
      this.keyed.set(key, { messageId: record.messageId, fingerprint, run, queued })
      return
    }
    const key = this.#keyOf.get(record.messageId)
    // Settled: no record of this prompt follows.
    if (record.op === 'settled') this.#keyOf.delete(record.messageId)
    const admission = key === undefined ? undefined : this.keyed.get(key)
    if (!admission || admission.messageId !== record.messageId) return
    if (record.op === 'admitted') this.keyed.set(key!, { ...admission, run: record.run, queued: record.queued })
    else if (record.withdrawn) this.keyed.delete(key!)
  }

  #frame(frame: string): void {
    const observation = observationOf(frame)
    if ('messageId' in observation && FATES.has(observation.type)) this.openPrompts.delete(observation.messageId)
    this.feed ??= this.#newFeed(undefined)
    const feed = this.feed
    if (observation.seq <= feed.seq) return
    if (observation.seq !== feed.seq + 1) {
      this.options.log?.('error', `[${this.threadId}] cluster: frame ${observation.seq} after ${feed.seq} (a gap); followers get a snapshot`)
    }
    const { seq: _seq, ...input } = observation
    // Folded as the owner folded it; the bytes are the owner's encoding of the same observation.
    const appended = feed.append(input as ObservationInput)
    this.#framesSinceBase++
    if (appended.seq !== observation.seq || lastFrame(feed, appended)?.toString('utf8') !== frame) {
      this.options.log?.('error', `[${this.threadId}] cluster: frame ${observation.seq} folded differently from the owner's`)
    }
  }

  #unfollowed(): void {
    clearTimeout(this.#stopTimer)
    this.#stopTimer = setTimeout(() => {
      if ((this.feed?.followerCount ?? 0) === 0) this.options.onIdle?.()
    }, 30_000)
    this.#stopTimer.unref()
  }

  stop(): void {
    clearTimeout(this.#stopTimer)
    this.#reader?.stop()
    this.feed?.close()
  }
}

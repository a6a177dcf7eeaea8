/**
 * A thread as any node sees it from its log: the owner's frames folded into a `Feed` (ring, view,
 * followers), so the server's fan-out and resume work on it exactly as on the owner's own feed, and
 * every node sends the same bytes for the same seq. Also the prompts the log says were accepted and
 * have no fate yet: what a takeover reports back `owner-lost`.
 *
 * A new base (an epoch carrying one, over a view built otherwise) starts a new `Feed`: the old one's
 * followers are closed and reconnect with their last seq, getting a snapshot — never a gap.
 *
 * A mirror starts from the log's newest checkpoint, when there is one, and reads only the records after
 * it: a long thread's log is not read from its first record each time a node needs it. The thread's
 * owner keeps one every `checkpoints.every` records, when the thread is at rest (or after ten times as
 * many in one run), and the log is trimmed below the one before. A mirror that finds records missing
 * after the last it folded (it was on an older checkpoint, or on none) starts again from the newest; with
 * none it can read, from the thread's session file at the seq the log goes on from.
 */
import type { Observation, ObservationInput } from '../../schemas/index.js'
import type { ThreadView } from '../../shared/projection.js'
import { Feed } from '../feed.js'
import type { Log } from '../store/journal.js'
import { CHECKPOINT_FORMAT, parseMirrorState, type KeyedAdmission, type MirrorState } from './mirror-state.js'
import { EngineAway, type Checkpoint, type ThreadLogs, type ThreadRecord } from './port.js'

/** The observation inside one SSE frame (`id:`, `event:`, one `data:` line). */
export function observationOf(frame: string): Observation {
  const data = frame.indexOf('\ndata: ')
  return JSON.parse(frame.slice(data + 7, frame.lastIndexOf('\n\n'))) as Observation
}

/** The keyed prompts a mirror remembers, newest first kept: a thread's every prompt is keyed by the web client. */
const MAX_KEYED = 1000
/** A deleted thread's records and checkpoint the engine did not remove are tried again this often, for this long. */
const FORGET_RETRY_MS = 1000
const FORGET_FOR_MS = 5 * 60 * 1000
/** How many times a mirror that finds records missing asks for a checkpoint past them (FORGET_RETRY_MS apart) before it takes the gap. */
const REREAD_TRIES = 5

/** Adds to a map kept to its newest `MAX_KEYED` entries. */
function keepNewest<K, V>(map: Map<K, V>, key: K, value: V): void {
  if (!map.has(key) && map.size >= MAX_KEYED) map.delete(map.keys().next().value!)
  map.set(key, value)
}

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

/** A wait in `ThreadMirror.reached`. */
type Reaching = { position: number; resolve: (reached: boolean) => void; timer?: ReturnType<typeof setTimeout> }

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
  /** Records folded since the last checkpoint this mirror started from or kept. */
  #sinceCheckpoint = 0
  /** A checkpoint is on its way to the engine. */
  #keeping = false
  /**
   * What the node that writes the thread asks of the engine for it, one after another: its checkpoints,
   * and what a delete leaves (a checkpoint of the deleted thread still on its way is kept before it is forgotten).
   */
  #chores: Promise<void> = Promise.resolve()
  /** The position of the last `deleted` record folded, and up to where the engine forgot the records before one. */
  #deletedAt = 0
  #forgottenAt = 0
  /** The engine said the thread has no checkpoint (not: it could not be read). */
  #noCheckpoint = false
  /** Whether the thread is mid-run, as its last status frame said. */
  #busy = false
  #stopped = false
  #reader?: { stop(): void }
  /** Counts the readers started: what an older one still delivers is passed over. */
  #readers = 0
  /** Reading again from the newest checkpoint: records missing after the last one folded. */
  #rereading = false
  /** A gap in the log no checkpoint covers is taken as it is: the feed starts again at the next frame, from this view. */
  #gapBase?: ThreadView
  #ready: Promise<void>
  #markReady!: () => void
  #stopTimer?: ReturnType<typeof setTimeout>
  /** Waiting in `reached` for a position not folded yet. */
  #reaching?: Set<Reaching>

  constructor(
    readonly threadId: string,
    private readonly logs: ThreadLogs,
    /** The view from the thread's persisted transcript, for a log that holds nothing yet. */
    private readonly fileView: () => Promise<ThreadView>,
    private readonly options: {
      ringSize?: number
      log?: Log
      onIdle?: () => void
      /** `writes`: whether this node keeps the thread's checkpoints now (its owner does). */
      checkpoints?: { every: number; writes: () => boolean }
    } = {},
  ) {
    this.#ready = new Promise((resolve) => (this.#markReady = resolve))
  }

  start(): void {
    this.#start().catch((error: unknown) => this.options.log?.('error', `[${this.threadId}] cluster: the thread's log could not be read: ${String(error)}`))
  }

  async #start(): Promise<void> {
    // Without it (the engine is away, or the object is damaged) the log is read from its first record.
    let unread = false
    const kept = await this.logs.checkpoint(this.threadId).catch((error: unknown) => {
      if (!(error instanceof EngineAway)) this.options.log?.('warn', `[${this.threadId}] cluster: the log's checkpoint could not be read (${String(error)}); reading the log from its first record`)
      unread = true
      return undefined
    })
    this.#noCheckpoint = !unread && kept === undefined
    if (this.#stopped) return
    // Nothing is folded before the reader starts: the owner appends only once its mirror is ready.
    if (kept && kept.position > 0 && this.position === 0) this.#restore(kept)
    this.#read()
  }

  /** Reads the log on from this mirror's position. */
  #read(): void {
    const reader = ++this.#readers
    const handle = this.logs.read(
      this.threadId,
      (record, position, previous) => void (reader === this.#readers && this.appended(record, position, previous)),
      () => void (reader === this.#readers && this.#caughtUp()),
      this.position,
    )
    // An adapter delivers what it has within the call: one that found records missing is over already.
    if (reader === this.#readers) this.#reader = handle
    else handle.stop()
  }

  /**
   * The log no longer holds the records between this mirror's position and `previous` (trimmed below a
   * checkpoint past them): the mirror starts again from the newest checkpoint, if it reaches past them and
   * this node reads it; else it takes the gap (`#gapBase`). Its followers reconnect and resume from the
   * new feed (a snapshot), as at any new base.
   */
  async #readAgain(previous: number): Promise<void> {
    this.#rereading = true
    this.#reader?.stop()
    ++this.#readers
    this.options.log?.('warn', `[${this.threadId}] cluster: the log no longer holds the records after ${this.position} (trimmed below a checkpoint); reading it again from its newest checkpoint`)
    // While the engine is away, asked again until it is back; a read that failed otherwise (its object
    // gone meanwhile, a timeout), or one from before the gap, a few times: a checkpoint past the gap is kept.
    for (let misses = 0; ; ) {
      const kept = await this.logs.checkpoint(this.threadId).catch((error: unknown) => (error instanceof EngineAway ? ('away' as const) : ('failed' as const)))
      if (this.#stopped) return
      if (kept === 'away' || ((kept === 'failed' || kept === undefined || kept.position < previous) && ++misses < REREAD_TRIES)) {
        await new Promise((resolve) => setTimeout(resolve, FORGET_RETRY_MS).unref())
        continue
      }
      if (typeof kept === 'object' && kept.position >= previous && this.#restore(kept)) break
      this.options.log?.('error', `[${this.threadId}] cluster: no checkpoint this node reads covers the records the log no longer holds after ${this.position}; the thread is shown from its session file from the log's next frame on`)
      const view = await this.fileView().catch(() => undefined)
      if (this.#stopped) return
      this.openPrompts.clear()
      this.keyed.clear()
      this.#keyOf.clear()
      this.position = previous
      this.#sinceCheckpoint = 0
      this.#gapBase = view ?? this.#emptyView(0)
      break
    }
    if (this.#reaching) this.#wakeReaching()
    this.#rereading = false
    this.#read()
  }

  /** The mirror as the checkpoint holds it: true; one this node cannot read leaves it as it was, and says so. */
  #restore({ position, state }: Checkpoint): boolean {
    try {
      const restored = parseMirrorState(state)
      const feed = this.#newFeed(restored.view)
      const openPrompts = new Map(restored.openPrompts)
      const keyed = new Map(restored.keyed)
      const keyOf = new Map(restored.keyOf)
      // A base after it (a first epoch's) cannot come: the log held records before the checkpoint.
      // Over a mirror that read some of the log already, what it held goes: its followers resume on this feed.
      const old = this.feed
      this.feed = feed
      old?.close()
      this.#busy = restored.view.status.busy
      for (const [map, entries] of [[this.openPrompts, openPrompts], [this.keyed, keyed], [this.#keyOf, keyOf]] as const) {
        map.clear()
        for (const [key, value] of entries) (map as Map<string, unknown>).set(key, value)
      }
      this.position = position
      this.#sinceCheckpoint = 0
      this.#gapBase = undefined
      return true
    } catch (error) {
      this.options.log?.('warn', `[${this.threadId}] cluster: the log's checkpoint at ${position} is not one this node reads (${String(error)}); reading the log from its first record`)
      return false
    }
  }

  /** Keeps a checkpoint of the log at this mirror's position, when one is due and this node keeps them. */
  #checkpoint(): void {
    const policy = this.options.checkpoints
    // One at a time: a slow engine does not pile them up.
    // None while a delete's forget is owed: a checkpoint past the `deleted` record would hide it from the next owner.
    // None while a gap waits for its next frame: the feed is not yet what the position says.
    if (!policy || !this.feed || this.#keeping || this.#gapBase || this.#sinceCheckpoint < policy.every || this.#deletedAt > this.#forgottenAt) return
    if ((this.#busy && this.#sinceCheckpoint < policy.every * 10) || !policy.writes()) return
    this.#sinceCheckpoint = 0
    // Taken now, at this position (the snapshot is immutable); its JSON, a few ms on a long thread, is
    // made after the owner's append loop has gone on.
    const state: MirrorState = {
      format: CHECKPOINT_FORMAT,
      view: this.feed.snapshot(),
      openPrompts: [...this.openPrompts],
      keyed: [...this.keyed],
      keyOf: [...this.#keyOf],
    }
    const position = this.position
    this.#keeping = true
    this.#chores = this.#chores
      .then(() => new Promise((resolve) => setImmediate(resolve)))
      .then(() => this.logs.keepCheckpoint(this.threadId, { position, state: JSON.stringify(state) }))
      .catch((error: unknown) => {
        if (error instanceof EngineAway) return
        this.options.log?.('warn', `[${this.threadId}] cluster: the log's checkpoint at ${position} was not kept (${String(error)}); the next one is tried after as many records`)
      })
      .finally(() => (this.#keeping = false))
  }

  /**
   * A delete's `deleted` record at `position`: what the thread wrote before it (records, checkpoint) is
   * removed from the engine, tried again while the engine does not answer. Until then the record alone
   * keeps it from any thread.
   */
  #forgetBefore(position: number): void {
    const until = Date.now() + FORGET_FOR_MS
    const attempt = async (): Promise<void> => {
      if (this.#forgottenAt >= position) return
      try {
        await this.logs.forget(this.threadId, position)
        this.#forgottenAt = Math.max(this.#forgottenAt, position)
      } catch (error) {
        if (Date.now() >= until || this.#stopped) {
          this.options.log?.('warn', `[${this.threadId}] cluster: the deleted thread's records before ${position} were not removed from the engine (${String(error)}); its \`deleted\` record keeps them from any thread`)
          return
        }
        await new Promise((resolve) => setTimeout(resolve, FORGET_RETRY_MS).unref())
        return attempt()
      }
    }
    this.#chores = this.#chores.then(attempt)
  }

  /**
   * A record at its position in the log, folded once: the owner's own appends come here as soon as the
   * engine acknowledges them (its followers need not wait for the reader to bring them back), and the
   * reader's copy of each is then passed over.
   */
  appended(record: ThreadRecord, position: number, previous?: number): void {
    if (position <= this.position || this.#rereading) return
    // Records missing before it (trimmed) — but a `deleted` record needs nothing before it.
    if (previous !== undefined && previous > this.position && record.kind !== 'deleted') return void this.#readAgain(previous)
    // A log that starts at a `deleted` record, with no checkpoint of what came before, was forgotten below it.
    if (this.position === 0 && this.#noCheckpoint && record.kind === 'deleted') this.#forgottenAt = position
    this.#apply(record, position)
    this.#sinceCheckpoint++
    this.#checkpoint()
    if (this.#reaching) this.#wakeReaching()
  }

  /**
   * The node now writes the thread: a `deleted` record it folded while another node did (one that died,
   * or stopped, before the engine forgot what came before it) has it forgotten now.
   */
  forgetDeleted(): void {
    if (this.#deletedAt > this.#forgottenAt) this.#forgetBefore(this.#deletedAt)
  }

  /** Settles once what this mirror asked of the engine so far (checkpoints, forgets) is done or given up. */
  chores(): Promise<void> {
    return this.#chores
  }

  /** Resolves once every record there was at the start is folded and there is a feed — or once the mirror is stopped (check `stopped`). */
  ready(): Promise<void> {
    return this.#ready
  }

  /**
   * Resolves once the record at `position` (or a later one) is folded: true, or false when `withinMs`
   * passed first. Woken by the fold, not polled: a node's death can send hundreds of tabs to wait here at once.
   */
  reached(position: number, withinMs = Infinity): Promise<boolean> {
    if (this.position >= position) return Promise.resolve(true)
    if (this.#stopped) return Promise.resolve(false)
    return new Promise((resolve) => {
      const waiter: Reaching = { position, resolve }
      ;(this.#reaching ??= new Set()).add(waiter)
      if (withinMs === Infinity) return
      waiter.timer = setTimeout(() => {
        this.#reaching?.delete(waiter)
        resolve(false)
      }, withinMs)
      waiter.timer.unref()
    })
  }

  #wakeReaching(): void {
    for (const waiter of this.#reaching!) {
      if (waiter.position > this.position) continue
      this.#reaching!.delete(waiter)
      clearTimeout(waiter.timer)
      waiter.resolve(true)
    }
    if (this.#reaching!.size === 0) this.#reaching = undefined
  }

  async #caughtUp(): Promise<void> {
    if (!this.feed && !this.#stopped) {
      const view = await this.fileView().catch(() => undefined)
      // Not once stopped meanwhile: nothing would close it.
      if (!this.#stopped) this.feed ??= this.#newFeed(view ?? undefined)
    }
    this.#markReady()
  }

  /** A thread with nothing in it, at `seq`. */
  #emptyView(seq: number): ThreadView {
    return { type: 'snapshot', threadId: this.threadId, seq, status: { live: false, busy: false, run: 0 }, transcript: [], queue: { steering: [], followUp: [] }, openDialogs: [], statusItems: {}, widgets: {}, working: { visible: true } }
  }

  #newFeed(view: ThreadView | undefined): Feed {
    const base = view ?? this.#emptyView(0)
    this.#framesSinceBase = 0
    return new Feed(base, { ringSize: this.options.ringSize, onUnfollowed: () => this.idleSoon() })
  }

  #rebase(view: ThreadView): void {
    // A view from the file that was to come at the next frame is not this one's (a `deleted` record's, say).
    this.#gapBase = undefined
    const old = this.feed
    this.feed = this.#newFeed(view)
    this.#busy = view.status.busy
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
      case 'deleted':
        // Its followers are closed (as the owner's are), and nothing before is carried on: a thread made
        // again under the id starts empty, its seqs after the deleted one's.
        this.#rebase(this.#emptyView(record.seq))
        this.openPrompts.clear()
        this.keyed.clear()
        this.#keyOf.clear()
        this.#deletedAt = position
        if (this.options.checkpoints?.writes()) this.#forgetBefore(position)
        return
    }
  }

  #keyed(record: Extract<ThreadRecord, { kind: 'prompt' }>): void {
    if (record.op === 'accepted') {
      if (!record.key) return
      const { key, fingerprint, run, queued = false } = record.key
      // A prompt reported owner-lost has no settled record to end this entry: it is kept to the newest too.
      keepNewest(this.#keyOf, record.messageId, key)
      // A retry comes within seconds of its first's owner dying: the newest keys are the ones asked for.
      keepNewest(this.keyed, key, { messageId: record.messageId, fingerprint, run, queued })
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
    else if (observation.type === 'status') this.#busy = observation.busy
    // The frames the log no longer holds are skipped: the feed goes on from this one's seq (the rebase ends the wait).
    if (this.#gapBase) this.#rebase({ ...this.#gapBase, seq: observation.seq - 1 })
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

  /** Nobody follows the mirror (any more): it asks to be stopped (`onIdle`) in 30 s unless someone follows it meanwhile. */
  idleSoon(): void {
    clearTimeout(this.#stopTimer)
    this.#stopTimer = setTimeout(() => {
      if ((this.feed?.followerCount ?? 0) === 0) this.options.onIdle?.()
    }, 30_000)
    this.#stopTimer.unref()
  }

  stop(): void {
    this.#stopped = true
    clearTimeout(this.#stopTimer)
    // Nothing more is folded: whoever waits for a position is told it will not come.
    for (const waiter of this.#reaching ?? []) {
      clearTimeout(waiter.timer)
      waiter.resolve(false)
    }
    this.#reaching = undefined
    // Nor is its first read finished: whoever waits for it goes on, to find the mirror stopped.
    this.#markReady()
    this.#reader?.stop()
    this.feed?.close()
  }

  /** Whether the mirror was stopped: it folds nothing more, and a feed it never made stays undefined. */
  get stopped(): boolean {
    return this.#stopped
  }
}

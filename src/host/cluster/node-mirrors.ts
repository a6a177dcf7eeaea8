/**
 * The thread mirrors one node keeps (thread-mirror.ts): one per thread it owns or serves follows of,
 * started as the first one needs it and stopped 30 s after nobody follows a thread it does not hold. Follows,
 * and the feed an owner starts from, are read from them.
 */
import type { ThreadView } from '../../shared/projection.js'
import type { Feed } from '../feed.js'
import type { Log } from '../store/journal.js'
import type { ThreadLogs } from './port.js'
import { ThreadMirror } from './thread-mirror.js'

/** How long a follow resuming past this node's copy of the log waits for the copy to catch up before it is refused. */
const FOLLOW_CATCH_UP_MS = 2000
/**
 * A thread's owner keeps a checkpoint of its log every this many records (thread-mirror.ts): a node
 * that starts to mirror the thread then folds at most about as many (≈ 15 µs each on the 2-vCPU VM)
 * after reading the checkpoint, instead of the whole log.
 */
const CHECKPOINT_EVERY = 1000
/** How long a stop waits for what its mirrors still ask of the engine (a checkpoint, a delete's forget). */
const STOP_CHORES_MS = 1000

export interface NodeMirrorsOptions {
  fileView: (threadId: string) => Promise<ThreadView>
  /** Whether this node owns the thread now: it keeps the log's checkpoints. */
  owns: (threadId: string) => boolean
  /** Whether this node holds the thread (owns it, or has not let it go yet): its mirror is kept while it does. */
  holds: (threadId: string) => boolean
  ringSize?: number
  log?: Log
  /** How many of a thread's records its log's checkpoints are apart at least (CHECKPOINT_EVERY). */
  checkpointEvery?: number
}

export class NodeMirrors {
  readonly #mirrors = new Map<string, ThreadMirror>()
  #stopped = false

  constructor(
    private readonly logs: ThreadLogs,
    private readonly options: NodeMirrorsOptions,
  ) {}

  /** The thread's mirror, if this node keeps one now. */
  get(threadId: string): ThreadMirror | undefined {
    return this.#mirrors.get(threadId)
  }

  /** The thread's mirror, started if this node keeps none; once the node's mirrors are stopped, one that is stopped too. */
  of(threadId: string): ThreadMirror {
    const kept = this.#mirrors.get(threadId)
    if (kept) return kept
    const mirror: ThreadMirror = new ThreadMirror(threadId, this.logs, () => this.options.fileView(threadId), {
      ringSize: this.options.ringSize,
      log: this.options.log,
      checkpoints: { every: this.options.checkpointEvery ?? CHECKPOINT_EVERY, writes: () => this.options.owns(threadId) },
      // Followed by nobody for 30 s: dropped, unless the node holds the thread — then asked again in 30 s,
      // so a mirror the node kept while it ran the thread goes once it lets the thread go.
      onIdle: () => {
        if (this.#mirrors.get(threadId) !== mirror) return
        if (this.options.holds(threadId)) return mirror.idleSoon()
        this.drop(threadId)
      },
    })
    if (this.#stopped) {
      mirror.stop()
      return mirror
    }
    this.#mirrors.set(threadId, mirror)
    mirror.start()
    // Counted from now, not from a first follower that may never come (a feed's base, a take that failed).
    mirror.idleSoon()
    return mirror
  }

  /** The thread's mirror stops and goes (a newer one is started for the next who needs it). */
  drop(threadId: string): void {
    const mirror = this.#mirrors.get(threadId)
    this.#mirrors.delete(threadId)
    mirror?.stop()
  }

  /**
   * Followers of the thread, on this node. A tab resuming `after` a seq this node has not read yet came
   * from another node (the owner's followers get a record from its append's acknowledgement, before any
   * other node reads it back): it waits for this node to read the log to its end, since a snapshot older
   * than what the tab has shown would take its seq back. `behind`: the log could not be read that far
   * within FOLLOW_CATCH_UP_MS (the engine away, or this node's reading of it behind); the tab retries.
   */
  async follow(threadId: string, after?: number): Promise<Feed | 'behind' | undefined> {
    const mirror = this.of(threadId)
    await mirror.ready()
    // Stopped (the node stopping, the thread lost here, or idle) before or while this follow waited: the tab comes again, to another mirror of it.
    if (mirror.stopped) return 'behind'
    if (after !== undefined && (mirror.feed?.seq ?? 0) < after) {
      const end = await this.logs.last(threadId).catch(() => undefined)
      // Read to the end and still short of `after`: the log never had it (a thread deleted and made again); a snapshot is right.
      if (end === undefined || !(await mirror.reached(end, FOLLOW_CATCH_UP_MS))) {
        // No follow of it here may come after this one (the tab may retry on another node): it is not kept for good.
        if ((mirror.feed?.followerCount ?? 0) === 0) mirror.idleSoon()
        return 'behind'
      }
    }
    return mirror.stopped ? 'behind' : mirror.feed
  }

  /**
   * Where this node's feed of a thread starts: the fold of its log, when the log holds anything. A
   * mirror stopped before it read the log (the thread lost here meanwhile) tells nothing: the next one
   * is asked while this node holds the thread (it took it again); otherwise the feed is one the loss
   * closes, and no mirror is started for it.
   */
  async base(threadId: string): Promise<ThreadView | undefined> {
    for (let mirror = this.of(threadId); ; mirror = this.of(threadId)) {
      await mirror.ready()
      if (!mirror.stopped) return mirror.position > 0 ? mirror.feed?.view : undefined
      if (this.#stopped || !this.options.holds(threadId)) return undefined
    }
  }

  /** Every mirror stops, once what they asked of the engine (a delete's forget on its way) landed or STOP_CHORES_MS passed: past it, the next owner of the id does it. */
  async stop(): Promise<void> {
    this.#stopped = true
    let waited: ReturnType<typeof setTimeout> | undefined
    const chores = Promise.all([...this.#mirrors.values()].map((mirror) => mirror.chores()))
    await Promise.race([chores, new Promise((resolve) => (waited = setTimeout(resolve, STOP_CHORES_MS)))])
    clearTimeout(waited)
    for (const mirror of this.#mirrors.values()) mirror.stop()
    this.#mirrors.clear()
  }
}

/**
 * Each thread's feed: loaded from its persisted transcript when somebody follows it or a runtime is
 * built for it, and let go when its thread is cold and nobody follows it — so memory stays with the
 * threads people are using. Also the facts a cold thread's summary reads (pi's session name, the fork
 * link, first prompt and last message), kept on its row so no summary reads a file.
 */
import { isDeepStrictEqual } from 'node:util'
import type { RuntimeFactory } from '../runtime/port.js'
import type { Observation, ThreadChanges } from '../schemas/index.js'
import { SessionDamaged } from '../runtime/port.js'
import { initialView, type ThreadView } from '../shared/projection.js'
import { Feed } from './feed.js'
import { withReports, type Log } from './store/journal.js'
import type { ThreadFacts, ThreadStore } from './store/port.js'
import { factsOf } from './thread-display.js'
import type { ThreadSlot } from './thread-slot.js'

export interface ThreadFeedsOptions {
  store: ThreadStore
  runtimes: RuntimeFactory
  ringSize?: number
  log?: Log
  /** The session file was found damaged while its transcript was read. */
  onDamaged: (slot: ThreadSlot, damage: SessionDamaged) => void
  /** Writes the slot's row (skipped for a deleted thread). */
  persist: (slot: ThreadSlot) => void
  /** What the thread's runs changed in its workspace, as its view starts (checkpoints/). */
  changes?: (threadId: string) => ThreadChanges | undefined
}

export class ThreadFeeds {
  readonly #watchers = new Set<(threadId: string, feed: Feed) => void>()
  readonly #observers = new Set<(threadId: string, feed: Feed, o: Observation) => void>()
  /** Every feed's one observer beside its own (feed.ts): made once, shared by all feeds. */
  readonly #everyFeed = (feed: Feed, o: Observation): void => {
    for (const observer of this.#observers) observer(feed.threadId, feed, o)
  }
  /**
   * Cluster mode (src/host/cluster): where a thread's feed starts when its log holds its history —
   * the fold of the log, not the transcript — so its seq continues the log's. Undefined: the transcript.
   */
  base?: (threadId: string) => Promise<ThreadView | undefined>

  constructor(private readonly options: ThreadFeedsOptions) {}

  /**
   * What every thread's feed is made with. An idle thread nobody follows keeps no frames for a
   * resume (its ring's last frames were ≈ 1.6 KiB of every idle live thread's heap): a tab that
   * comes back having seen everything gets nothing to catch up on, one that missed frames a
   * snapshot — as the follow contract allows (docs/flows/follow.md).
   */
  #feedOptions(slot: ThreadSlot) {
    return { ringSize: this.options.ringSize, idleRingSize: 0, onUnfollowed: () => this.release(slot), everyFeed: this.#everyFeed }
  }

  /**
   * Every feed as it is loaded (and, at once, those in `loaded`): for watchers outside the host
   * (metrics). A watcher must not be what keeps a feed alive.
   */
  watch(watcher: (threadId: string, feed: Feed) => void, loaded: Iterable<ThreadSlot>): () => void {
    this.#watchers.add(watcher)
    for (const slot of loaded) if (slot.feed) watcher(slot.threadId, slot.feed)
    return () => this.#watchers.delete(watcher)
  }

  /**
   * Every observation of every feed, after the feed's own observers (its journal first) and before
   * its followers: for what watches all threads (metrics, search, push), one registration here
   * rather than a closure on each feed.
   */
  observe(observer: (threadId: string, feed: Feed, o: Observation) => void): () => void {
    this.#observers.add(observer)
    return () => this.#observers.delete(observer)
  }

  /** The slot's feed, loading its persisted transcript (and owed reports) the first time. */
  of(slot: ThreadSlot): Promise<Feed> {
    if (slot.feed) return Promise.resolve(slot.feed)
    if (this.base) {
      const base = this.base
      slot.feedLoading ??= base(slot.threadId).then((view) => (view ? this.#fromView(slot, view) : this.#fromTranscript(slot)))
    }
    return (slot.feedLoading ??= this.#fromTranscript(slot))
  }

  #fromView(slot: ThreadSlot, view: ThreadView): Feed {
    if (slot.feed) return slot.feed
    const feed = new Feed(view, this.#feedOptions(slot))
    feed.observe((o) => slot.journal.observe(o))
    slot.feed = feed
    for (const watcher of this.#watchers) watcher(slot.threadId, feed)
    return feed
  }

  #fromTranscript(slot: ThreadSlot): Promise<Feed> {
    return this.options.runtimes.readTranscript(slot.threadId).then(
      (transcript) => this.#make(slot, transcript),
      (error: unknown) => {
        if (error instanceof SessionDamaged) this.options.onDamaged(slot, error)
        return this.#make(slot, [])
      },
    )
  }

  #make(slot: ThreadSlot, transcript: Awaited<ReturnType<RuntimeFactory['readTranscript']>>): Feed {
    if (slot.feed) return slot.feed
    const { store } = this.options
    const threadId = slot.threadId
    const reports = store.reports(threadId)
    // Reports an earlier feed delivered are part of the transcript; the ones still owed are appended below.
    const view = initialView(threadId, withReports(transcript, reports.filter((r) => r.delivered)), slot.record.seq)
    const changes = this.options.changes?.(threadId)
    if (changes) view.changes = changes
    const feed = new Feed({ ...view, status: { live: false, busy: false, run: slot.record.run } }, this.#feedOptions(slot))
    // First observer: the seq ceiling is reserved (and the journal written) before any follower gets a frame.
    feed.observe((o) => slot.journal.observe(o))
    slot.feed = feed
    for (const watcher of this.#watchers) watcher(threadId, feed)
    const owed = reports.filter((r) => !r.delivered)
    if (owed.length > 0) {
      for (const report of owed) feed.append(report.body)
      store.markDelivered(threadId, owed.map((r) => r.id))
    }
    return feed
  }

  /**
   * A cold thread nobody follows keeps no feed: its transcript is on disk and its seq in the row
   * (the store holds the ceiling above it). `atRest`: the slot machine says so as it enters cold or
   * unavailable (its state is still the one it leaves).
   */
  release(slot: ThreadSlot, atRest = !slot.building && (slot.state === 'cold' || slot.state === 'releasing' || slot.state === 'unavailable')): void {
    const feed = slot.feed
    if (!feed || feed.followerCount > 0 || !atRest) return
    slot.record = { ...slot.record, seq: feed.seq, facts: factsOf(feed.view.transcript, slot.record.facts) }
    // pi's session name is in the file alone (an extension's pi.setSessionName).
    void this.describe(slot)
    slot.feed = undefined
    slot.feedLoading = undefined
  }

  /** Refreshes what the thread's persisted conversation says (its pi session name, its fork link), off the summary's path. */
  async describe(slot: ThreadSlot): Promise<void> {
    const facts = await this.options.runtimes.describe?.(slot.threadId).catch(() => undefined)
    if (facts) this.keepFacts(slot, { ...slot.record.facts, ...facts })
  }

  keepFacts(slot: ThreadSlot, facts: ThreadFacts): void {
    if (isDeepStrictEqual(facts, slot.record.facts)) return
    slot.record = { ...slot.record, facts }
    try {
      this.options.persist(slot)
    } catch (error) {
      // A summary's preview is not worth a refusal: the next write of the row carries it.
      this.options.log?.('warn', `store write failed: ${String(error)}`)
    }
  }
}

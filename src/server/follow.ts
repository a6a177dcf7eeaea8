/**
 * GET /api/threads/:id/follow — a snapshot, then every observation of the thread in order.
 *
 * Frames come from the feed already encoded. All the follows of one feed share one `FanOut`, the
 * feed's single follower: a frame that comes alone is written at once; the frames of a burst
 * (many appended in one turn of the event loop) are joined into one buffer once and that same
 * buffer goes to every follow — one socket write per follower per turn, however many frames the
 * turn produced, and no bytes copied per follower.
 *
 * A streamed frame (a text delta, a tool's partial result) never goes alone: it waits for the end
 * of its turn like the rest of a burst. Many threads streaming at once each produce a chunk per
 * turn, and their writes then go out back to back at the end of the turn instead of one between
 * every two chunks' trips through pi — a socket write costs far less in a run of writes (the
 * kernel's path and the reader are already awake) than alone. A chunk waits at most the rest of
 * its turn; everything else (a dialog settled, a status) is still written at once. One immediate
 * per turn serves every fan-out whose window is open, not one per fan-out.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Feed } from '../host/feed.js'
import type { Observation } from '../schemas/index.js'
import { openEventStream, type EventStream, type StreamOptions } from './event-stream.js'

/** Streamed frames: written with the rest of their turn, never alone (see the header). */
const streamed = (o: Observation) => o.type === 'assistant-delta' || o.type === 'tool-update'

/** The fan-outs whose window is open; one immediate at the end of each turn serves them all. */
const windows = new Set<FanOut>()
let turnEnd: NodeJS.Immediate | undefined

function endOfTurn(): void {
  turnEnd = undefined
  try {
    for (const fanOut of windows) fanOut.turnEnded()
  } finally {
    // Every feed's frames wait on this one immediate: it must come back while any window is open.
    if (windows.size > 0) turnEnd ??= setImmediate(endOfTurn)
  }
}

/** Streams `feed` from `after` (the request's resume point, `resumePoint`). */
export function streamFeed(request: FastifyRequest, reply: FastifyReply, feed: Feed, after: number | undefined, options: StreamOptions): void {
  const fanOut = FanOut.of(feed)
  let leave = () => {}
  const stream = openEventStream(request, reply, options, () => leave())
  leave = fanOut.join(stream, after)
  options.onJoined?.(reply.raw)
}

export class FanOut {
  static readonly #byFeed = new WeakMap<Feed, FanOut>()

  /** The fan-out of `feed`, made when its first follow opens. */
  static of(feed: Feed): FanOut {
    let fanOut = FanOut.#byFeed.get(feed)
    if (!fanOut) {
      fanOut = new FanOut(feed)
      FanOut.#byFeed.set(feed, fanOut)
    }
    return fanOut
  }

  readonly #feed: Feed
  readonly #streams = new Set<EventStream>()
  #pending: Buffer[] = []
  #pendingBytes = 0
  /** Frames of this turn wait for its end (see `#add`). */
  #windowOpen = false
  #unfollow: (() => void) | undefined

  private constructor(feed: Feed) {
    this.#feed = feed
  }

  get size(): number {
    return this.#streams.size
  }

  /**
   * Starts a stream at `after` (a snapshot, or the frames it missed) and adds it to the fan-out.
   * Returns what ends its membership; the last one to leave unfollows the feed.
   */
  join(stream: EventStream, after: number | undefined): () => void {
    // Frames of this turn not yet written belong to the streams already here, and the resume below
    // starts after them: write them out first, so the new stream neither misses nor doubles one.
    this.flush()
    const resume = this.#feed.resume(after)
    this.#streams.add(stream)
    this.#unfollow ??= this.#feed.follow({ send: (frame, observation) => this.#add(frame, observation), close: () => this.#close() })
    if (resume.kind === 'snapshot') stream.send(this.#feed.snapshotFrame())
    else if (resume.frames.length) stream.send(resume.frames.length === 1 ? resume.frames[0] : Buffer.concat(resume.frames))
    return () => this.#leave(stream)
  }

  /** Writes the frames gathered so far to every stream, as one buffer. */
  flush(): void {
    if (this.#pending.length === 0) return
    const bytes = this.#pending.length === 1 ? this.#pending[0] : Buffer.concat(this.#pending, this.#pendingBytes)
    this.#pending = []
    this.#pendingBytes = 0
    for (const stream of this.#streams) stream.send(bytes)
  }

  /**
   * A frame that comes alone (a dialog settled, a status changed) is written at once. Frames that
   * follow it in the same turn of the event loop (a burst of streamed deltas) wait for the end of
   * the turn and go out together; while turns keep producing frames the window stays open, and it
   * closes after the first turn that produced none. A streamed frame opens the window itself.
   */
  #add(frame: Buffer, observation: Observation): void {
    if (!this.#windowOpen) {
      this.#openWindow()
      if (!streamed(observation)) {
        for (const stream of this.#streams) stream.send(frame)
        return
      }
    }
    this.#pending.push(frame)
    this.#pendingBytes += frame.length
  }

  #openWindow(): void {
    this.#windowOpen = true
    windows.add(this)
    turnEnd ??= setImmediate(endOfTurn)
  }

  /** Called by `endOfTurn` alone: the turn's frames go out, or the window closes after a turn that had none. */
  turnEnded(): void {
    if (this.#pending.length > 0) return this.flush()
    this.#windowOpen = false
    windows.delete(this)
  }

  #leave(stream: EventStream): void {
    if (!this.#streams.delete(stream) || this.#streams.size > 0) return
    this.#pending = []
    this.#pendingBytes = 0
    this.#windowOpen = false
    windows.delete(this)
    FanOut.#byFeed.delete(this.#feed)
    const unfollow = this.#unfollow
    this.#unfollow = undefined
    unfollow?.()
  }

  /** The thread is gone: what was appended still goes out, then every follow ends. */
  #close(): void {
    this.flush()
    for (const stream of [...this.#streams]) stream.close()
  }
}

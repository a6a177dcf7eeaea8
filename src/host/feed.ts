/**
 * A thread's feed: the append-only, numbered log of observations every follower reads.
 *
 * Appending numbers the observation, folds it into the live view (the snapshot a new follower
 * gets), keeps its encoded frame in a bounded ring for resume, and hands the same bytes to each
 * follower. Followers never push back: a slow one is the server's to drop, not the run's to wait on.
 *
 * The cost of an append does not grow with the thread: the view is folded incrementally (O(1) per
 * streamed delta, see `IncrementalView`), the ring is a circular buffer, and the snapshot (and its
 * encoded frame) is materialised only when someone asks, then shared until the next append.
 *
 * An idle thread nobody follows keeps only the tail of its ring (`idleRingSize` frames, copied
 * into one buffer): a long reply's 2000 frames would otherwise stay in memory for as long as the
 * thread stays live, for a resume that a snapshot serves as well (a tab that missed more than the
 * tail gets one, as a tab beyond the ring always did).
 */
import type { Observation, ObservationInput, Snapshot } from '../schemas/index.js'
import { encodeObservation, encodeSnapshot } from './frame.js'
import { IncrementalView, type ThreadView } from '../shared/projection.js'

export interface Follower {
  /** Takes one encoded frame. Must not block; the server drops followers that fall behind. */
  send(frame: Buffer, observation: Observation): void
  /** The thread is gone (deleted, or the host is shutting down): end the follow. */
  close(): void
}

export type Resume =
  | { kind: 'frames'; frames: Buffer[] }
  /** The follower is too far behind (or ahead, after a restart): it needs a fresh snapshot. */
  | { kind: 'snapshot'; snapshot: Snapshot }

export class Feed {
  readonly #view: IncrementalView
  /**
   * A circular buffer of the last frames (at most `ringSize`); `#ringStart` is the oldest one's
   * index. Seqs are consecutive, so the newest frame is the head's and no seq is kept per frame.
   */
  #ring: Buffer[] = []
  #ringStart = 0
  /** Whether a run is in flight, as the last `status` said: an idle feed with no followers trims its ring. */
  #busy: boolean
  /**
   * The trimmed ring of an idle feed nobody follows (nothing appended since): its frames' bytes in
   * one buffer and where each ends, rather than a Buffer view per frame (≈ 100 bytes each, kept by
   * every idle live thread); `#ring` is empty meanwhile.
   */
  #packed?: { bytes: Buffer; ends: Uint32Array }
  /** Made at the first follow and let go with the last: most idle threads have nobody following. */
  #followers?: Set<Follower>
  readonly #observers = new Set<(o: Observation) => void>()
  #snapshotFrame: { seq: number; frame: Buffer } | undefined

  readonly ringSize: number
  readonly idleRingSize: number
  readonly #onUnfollowed?: () => void
  /**
   * The observer of every feed (thread-feeds.ts): one function all feeds share, dispatching to what
   * watches all threads (metrics, search, push), rather than a closure of each on every feed.
   */
  readonly #everyFeed?: (feed: Feed, o: Observation) => void
  readonly threadId: string

  constructor(
    initial: ThreadView,
    options: { ringSize?: number; idleRingSize?: number; onUnfollowed?: () => void; everyFeed?: (feed: Feed, o: Observation) => void } = {},
  ) {
    this.threadId = initial.threadId
    this.#view = new IncrementalView(initial)
    this.ringSize = Math.max(1, options.ringSize ?? 2000)
    this.idleRingSize = Math.min(this.ringSize, Math.max(0, options.idleRingSize ?? 32))
    this.#busy = initial.status.busy
    this.#onUnfollowed = options.onUnfollowed
    this.#everyFeed = options.everyFeed
  }

  get seq(): number {
    return this.#view.seq
  }

  /** The view at the current seq (an immutable snapshot, shared until the next append). */
  get view(): ThreadView {
    return this.#view.snapshot()
  }

  get followerCount(): number {
    return this.#followers?.size ?? 0
  }

  append(input: ObservationInput): Observation {
    const observation = { ...input, seq: this.#view.seq + 1 } as Observation
    this.#view.apply(observation)
    const frame = encodeObservation(observation)
    this.#unpack()
    if (this.#ring.length < this.ringSize) this.#ring.push(frame)
    else {
      this.#ring[this.#ringStart] = frame
      this.#ringStart = (this.#ringStart + 1) % this.ringSize
    }
    for (const observer of this.#observers) observer(observation)
    this.#everyFeed?.(this, observation)
    if (this.#followers) for (const follower of this.#followers) follower.send(frame, observation)
    if (observation.type === 'status') {
      this.#busy = observation.busy
      this.#trimIfIdle()
    }
    return observation
  }

  snapshot(): Snapshot {
    return this.#view.snapshot()
  }

  /** `snapshot()` encoded as an SSE frame, encoded once per seq however many followers join. */
  snapshotFrame(): Buffer {
    const seq = this.#view.seq
    if (this.#snapshotFrame?.seq !== seq) this.#snapshotFrame = { seq, frame: encodeSnapshot(this.snapshot()) }
    return this.#snapshotFrame.frame
  }

  /** What a follower that has seen everything up to `after` needs next. */
  resume(after: number | undefined): Resume {
    const head = this.#view.seq
    if (after === undefined || after > head) return { kind: 'snapshot', snapshot: this.snapshot() }
    if (after === head) return { kind: 'frames', frames: [] }
    const count = this.#count
    // Seqs in the ring are consecutive and end at the head, so the missed frames are its last `head - after`.
    const oldest = head - count + 1
    if (after + 1 < oldest) return { kind: 'snapshot', snapshot: this.snapshot() }
    const frames: Buffer[] = []
    for (let i = count - (head - after); i < count; i++) frames.push(this.#frameAt(i))
    return { kind: 'frames', frames }
  }

  follow(follower: Follower): () => void {
    const followers = (this.#followers ??= new Set())
    followers.add(follower)
    return () => {
      if (!followers.delete(follower) || followers.size > 0) return
      if (this.#followers === followers) this.#followers = undefined
      this.#trimIfIdle()
      this.#onUnfollowed?.()
    }
  }

  /**
   * No run and nobody following: keep only the newest `idleRingSize` frames (none when it is 0),
   * copied into one buffer of their exact size (a small frame is a view into an 8 KiB pool slab it
   * would otherwise keep alive).
   */
  #trimIfIdle(): void {
    const count = this.#ring.length
    if (this.#busy || this.followerCount > 0 || this.#packed || count === 0) return
    if (this.idleRingSize === 0) {
      this.#ring = []
      this.#ringStart = 0
      return
    }
    const tail: Buffer[] = []
    for (let i = Math.max(0, count - this.idleRingSize); i < count; i++) tail.push(this.#ring[(this.#ringStart + i) % count])
    const bytes = Buffer.allocUnsafeSlow(tail.reduce((n, f) => n + f.length, 0))
    const ends = new Uint32Array(tail.length)
    let at = 0
    tail.forEach((frame, i) => {
      frame.copy(bytes, at)
      ends[i] = at += frame.length
    })
    this.#packed = { bytes, ends }
    this.#ring = []
    this.#ringStart = 0
  }

  /** Frames in the ring, packed or not. */
  get #count(): number {
    return this.#packed ? this.#packed.ends.length : this.#ring.length
  }

  /** The ring's i-th frame, oldest first. */
  #frameAt(i: number): Buffer {
    if (!this.#packed) return this.#ring[(this.#ringStart + i) % this.#ring.length]
    const { bytes, ends } = this.#packed
    return bytes.subarray(i === 0 ? 0 : ends[i - 1], ends[i])
  }

  /** Back to a frame per slot before an append (the packed tail's frames become views into its buffer). */
  #unpack(): void {
    if (!this.#packed) return
    this.#ring = Array.from(this.#packed.ends, (_, i) => this.#frameAt(i))
    this.#ringStart = 0
    this.#packed = undefined
  }

  close(): void {
    const followers = this.#followers
    this.#followers = undefined
    if (!followers) return
    for (const follower of followers) follower.close()
    // An unfollow after the close changes nothing.
    followers.clear()
  }

  /** In-process observers (the journal, the registry's waiters, tests); called before the observer of every feed and followers. */
  observe(observer: (o: Observation) => void): () => void {
    this.#observers.add(observer)
    return () => this.#observers.delete(observer)
  }
}

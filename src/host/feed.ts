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
  /** A circular buffer of the last `ringSize` frames; `#ringStart` is the oldest one's index. */
  readonly #ring: { seq: number; frame: Buffer }[] = []
  #ringStart = 0
  readonly #followers = new Set<Follower>()
  readonly #observers = new Set<(o: Observation) => void>()
  #snapshotFrame: { seq: number; frame: Buffer } | undefined

  readonly ringSize: number
  readonly #onUnfollowed?: () => void

  constructor(initial: ThreadView, options: { ringSize?: number; onUnfollowed?: () => void } = {}) {
    this.#view = new IncrementalView(initial)
    this.ringSize = Math.max(1, options.ringSize ?? 2000)
    this.#onUnfollowed = options.onUnfollowed
  }

  get seq(): number {
    return this.#view.seq
  }

  /** The view at the current seq (an immutable snapshot, shared until the next append). */
  get view(): ThreadView {
    return this.#view.snapshot()
  }

  get followerCount(): number {
    return this.#followers.size
  }

  append(input: ObservationInput): Observation {
    const observation = { ...input, seq: this.#view.seq + 1 } as Observation
    this.#view.apply(observation)
    const frame = encodeObservation(observation)
    if (this.#ring.length < this.ringSize) this.#ring.push({ seq: observation.seq, frame })
    else {
      this.#ring[this.#ringStart] = { seq: observation.seq, frame }
      this.#ringStart = (this.#ringStart + 1) % this.ringSize
    }
    for (const observer of this.#observers) observer(observation)
    for (const follower of this.#followers) follower.send(frame, observation)
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
    const count = this.#ring.length
    const oldest = count ? this.#ring[this.#ringStart].seq : head + 1
    if (after + 1 < oldest) return { kind: 'snapshot', snapshot: this.snapshot() }
    // Seqs in the ring are consecutive, so the missed frames are its last `head - after`.
    const frames: Buffer[] = []
    for (let i = count - (head - after); i < count; i++) frames.push(this.#ring[(this.#ringStart + i) % count].frame)
    return { kind: 'frames', frames }
  }

  follow(follower: Follower): () => void {
    this.#followers.add(follower)
    return () => {
      if (this.#followers.delete(follower) && this.#followers.size === 0) this.#onUnfollowed?.()
    }
  }

  close(): void {
    for (const follower of this.#followers) follower.close()
    this.#followers.clear()
  }

  /** In-process observers (the registry's waiters, tests); called before followers. */
  observe(observer: (o: Observation) => void): () => void {
    this.#observers.add(observer)
    return () => this.#observers.delete(observer)
  }
}

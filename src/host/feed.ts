/**
 * A thread's feed: the append-only, numbered log of observations every follower reads.
 *
 * Appending numbers the observation, folds it into the live view (the snapshot a new follower
 * gets), keeps its encoded frame in a bounded ring for resume, and hands the same bytes to each
 * follower. Followers never push back: a slow one is the server's to drop, not the run's to wait on.
 */
import type { Observation, ObservationInput, Snapshot } from '../schemas/index.js'
import { encodeObservation } from './frame.js'
import { project, type ThreadView } from '../shared/projection.js'

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
  #view: ThreadView
  readonly #ring: { seq: number; frame: Buffer }[] = []
  readonly #followers = new Set<Follower>()
  readonly #observers = new Set<(o: Observation) => void>()

  readonly ringSize: number
  readonly #onUnfollowed?: () => void

  constructor(initial: ThreadView, options: { ringSize?: number; onUnfollowed?: () => void } = {}) {
    this.#view = initial
    this.ringSize = options.ringSize ?? 2000
    this.#onUnfollowed = options.onUnfollowed
  }

  get seq(): number {
    return this.#view.seq
  }

  get view(): ThreadView {
    return this.#view
  }

  get followerCount(): number {
    return this.#followers.size
  }

  append(input: ObservationInput): Observation {
    const observation = { ...input, seq: this.#view.seq + 1 } as Observation
    this.#view = project(this.#view, observation)
    const frame = encodeObservation(observation)
    this.#ring.push({ seq: observation.seq, frame })
    if (this.#ring.length > this.ringSize) this.#ring.shift()
    for (const observer of this.#observers) observer(observation)
    for (const follower of this.#followers) follower.send(frame, observation)
    return observation
  }

  snapshot(): Snapshot {
    return this.#view
  }

  /** What a follower that has seen everything up to `after` needs next. */
  resume(after: number | undefined): Resume {
    const head = this.#view.seq
    if (after === undefined || after > head) return { kind: 'snapshot', snapshot: this.snapshot() }
    if (after === head) return { kind: 'frames', frames: [] }
    const oldest = this.#ring[0]?.seq ?? head + 1
    if (after + 1 < oldest) return { kind: 'snapshot', snapshot: this.snapshot() }
    return { kind: 'frames', frames: this.#ring.filter((f) => f.seq > after).map((f) => f.frame) }
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

/**
 * `Idempotency-Key`s across the nodes of a cluster (docs/flows/cluster.md): a keyed request runs on
 * the node that first claims its key in the engine (`th_idem`); every other node, and the same node
 * after a change of owner, answers a repeat from the answer recorded there. A repeat that arrives
 * while the claimer is still running waits for its answer; a claim whose node died (its lease
 * lapsed) before it recorded an answer is taken over by compare-and-set, and then either answered
 * from the thread's log — a prompt admitted under the key claims it in its own admission record, so
 * it is never run twice — or, when the log shows nothing done under it, the request runs again.
 */
import type { IdempotentAnswer } from '../store/port.js'
import type { ClusterEngine, KeyClaim } from './port.js'
import type { KeyedAdmission } from './mirror-state.js'

/** What a keyed request gets from the cluster's keys. */
export type SharedClaim =
  /** Run it: this node holds the key (`revision`) until it records the answer or releases it. */
  | { kind: 'run'; revision: number }
  /** Replay this (its fingerprint may be another request's: then the key was reused). */
  | { kind: 'answer'; answer: IdempotentAnswer }
  /** Another node is still running it after `waitMs`: answered 503, the retry is safe. */
  | { kind: 'busy' }
  /**
   * Its claimer died before answering, but the thread's log shows the prompt it admitted under the key:
   * answer with that prompt's receipt and record it under `revision` (this node's claim now); nothing runs.
   */
  | { kind: 'admitted'; revision: number; admission: KeyedAdmission }

/** A prompt admitted under a key on a thread, as the thread's log says (on the thread's owner). */
export type AdmissionLookup = (threadId: string, key: string) => KeyedAdmission | undefined

/**
 * Whether an answer of this route (`METHOD /path`) with this status is in the thread's log before it
 * is sent (a keyed prompt's 202: its admission holds the key and the receipt), so a repeat on the
 * thread's next owner is answered from the log whatever the engine's keys hold.
 */
export type AnsweredInLog = (route: string, status: number) => boolean

const POLL_MS = 50
const RETRY_EVERY_MS = 1000
const RETRY_FOR_MS = 5 * 60 * 1000

export class ClusterKeys {
  constructor(
    private readonly engine: ClusterEngine,
    private readonly waitMs = 10_000,
    private readonly admitted: AdmissionLookup = () => undefined,
    readonly answeredInLog: AnsweredInLog = () => false,
  ) {}

  /** First attempts at claims, started as a command passed on by another node arrived here (`early`), by key. */
  readonly #early = new Map<string, { fingerprint: string; first: Promise<KeyClaim> }>()

  /**
   * Starts the key's claim as a command passed on by another node reaches the thread's owner, so its
   * round trip to the engine overlaps the command's way through fastify to its write guard, whose
   * `claim` with the same key and fingerprint takes the attempt up. The fingerprint is the receiving
   * node's, of the same validated request. Returns what to call once the command is over: an attempt
   * nobody took up (the command was refused before its guard, or answered from this node's store)
   * lets the key go again if it claimed it.
   */
  early(key: string, fingerprint: string): () => void {
    // A claim under way here reads the early attempts only as it starts: it would never take this one up.
    if (this.#early.has(key) || this.#claiming.has(key)) return () => {}
    const entry = { fingerprint, first: this.engine.keys.claim(key, fingerprint, this.engine.membership.self.id) }
    // A failed attempt fails the claim that takes it up (the guard answers 503); untaken, it is nobody's.
    entry.first.catch(() => {})
    this.#early.set(key, entry)
    return () => {
      if (this.#early.get(key) !== entry) return
      this.#early.delete(key)
      void this.#letGo(key, entry.first)
    }
  }

  /**
   * An early attempt that claimed the key, given back: nothing ran under it. A release the engine did not
   * take is tried again in the background: left, the key would look running on a live node to every retry.
   */
  async #letGo(key: string, first: Promise<KeyClaim>): Promise<void> {
    const attempt = await first.catch(() => undefined)
    if (!attempt?.claimed) return
    const release = () => this.engine.keys.release(key, attempt.revision)
    await release().catch(() => this.#again(release, Date.now() + RETRY_FOR_MS))
  }

  /** How many `claim`s of each key are under way here. */
  readonly #claiming = new Map<string, number>()

  /** `threadId`: the thread a thread-scoped request names, whose log may hold what a dead claimer did under the key. */
  async claim(key: string, fingerprint: string, threadId?: string): Promise<SharedClaim> {
    this.#claiming.set(key, (this.#claiming.get(key) ?? 0) + 1)
    try {
      return await this.#claim(key, fingerprint, threadId)
    } finally {
      const left = this.#claiming.get(key)! - 1
      if (left > 0) this.#claiming.set(key, left)
      else this.#claiming.delete(key)
    }
  }

  async #claim(key: string, fingerprint: string, threadId?: string): Promise<SharedClaim> {
    const { keys, membership } = this.engine
    const self = membership.self.id
    const deadline = Date.now() + this.waitMs
    const early = this.#early.get(key)
    this.#early.delete(key)
    // Started for another request under the key (or this one digested otherwise): let go first, or this claim would wait on it.
    if (early && early.fingerprint !== fingerprint) await this.#letGo(key, early.first)
    let claim = await (early?.fingerprint === fingerprint ? early.first : keys.claim(key, fingerprint, self))
    let takenOver = false
    for (;;) {
      if (claim.claimed) {
        const admission = takenOver && threadId !== undefined ? this.admitted(threadId, key) : undefined
        if (admission?.fingerprint === fingerprint) return { kind: 'admitted', revision: claim.revision, admission }
        return { kind: 'run', revision: claim.revision }
      }
      const { record, revision } = claim
      if (record.answer) return { kind: 'answer', answer: { key, fingerprint: record.fingerprint, ...record.answer, at: record.at } }
      if (record.fingerprint !== fingerprint) return { kind: 'answer', answer: { key, fingerprint: record.fingerprint, status: 0, body: '', at: record.at } }
      // Its claimer died before answering: taken here, then answered from the log or run.
      if (record.node !== self && !(await membership.isLive(record.node))) {
        takenOver = true
        claim = await keys.claim(key, fingerprint, self, revision)
      }
      else if (Date.now() >= deadline) return { kind: 'busy' }
      else {
        await new Promise((resolve) => setTimeout(resolve, POLL_MS))
        claim = await keys.claim(key, fingerprint, self)
      }
    }
  }

  /**
   * The answer this node's claim led to (a 5xx is released instead: nothing was done, a retry runs).
   * One the engine refused now (it is down) is written again in the background: until it is, this
   * node replays it from its own store and the others wait on a claim that looks still running.
   */
  async settle(revision: number, answer: IdempotentAnswer): Promise<void> {
    const { keys, membership } = this.engine
    const { fingerprint, status, body, at } = answer
    const write = () =>
      status >= 500 ? keys.release(answer.key, revision) : keys.record(answer.key, revision, { fingerprint, node: membership.self.id, answer: { status, body }, at })
    try {
      await write()
    } catch (error) {
      this.#again(write, Date.now() + RETRY_FOR_MS)
      throw error
    }
  }

  #again(write: () => Promise<void>, until: number): void {
    const timer = setTimeout(() => {
      write().catch(() => {
        if (Date.now() < until) this.#again(write, until)
      })
    }, RETRY_EVERY_MS)
    timer.unref()
  }
}

/**
 * One thread as the registry holds it: its row, its journal writer, its feed while anybody uses it,
 * and its slot machine (src/machines/thread-slot.machine.ts), which alone says whether the thread is
 * live and which LiveThread that is.
 *
 * A slot keeps an actor only while its machine is at work (building, releasing, deleting). At rest —
 * cold, live, unavailable: states that invoke nothing and keep no timer — the actor is let go and the
 * slot keeps the state and context it rested in (cold: nothing), from which the actor is made again
 * for the next event. So thousands of cold threads cost their rows, and a live one its LiveThread,
 * not an actor and an actor system each (≈ 4 KiB a live thread, measured by bench/heap-owners.mjs).
 */
import { createActor, waitFor, type AnyActorLogic } from 'xstate'
import type { SlotContext, ThreadSlotActor, ThreadSlotMachine, SlotSnapshot } from '../machines/thread-slot.machine.js'
import { SessionDamaged } from '../runtime/port.js'
import type { Feed } from './feed.js'
import type { LiveThread } from './live-thread.js'
import type { ThreadJournal } from './store/journal.js'
import type { ThreadRow } from './store/port.js'

export type SlotState = 'cold' | 'building' | 'live' | 'releasing' | 'unavailable' | 'deleting' | 'gone'

/** Why a runtime that was being built will not be used. */
export class ThreadGone extends Error {
  constructor(readonly reason: 'deleted' | 'closing') {
    super(reason === 'deleted' ? 'the thread was deleted' : 'threadhost is shutting down')
  }
}

import type { SessionStart } from '../runtime/port.js'

export class ThreadSlot {
  record: ThreadRow
  /** Writes the thread's journal and reserves its seq ceiling, from every feed it gets. */
  readonly journal: ThreadJournal
  /** The feed, while it is loaded: a cold thread keeps one while anybody follows it. */
  feed?: Feed
  feedLoading?: Promise<Feed>
  /** Prompts between the request and the machine's answer: a model change meanwhile is refused busy. */
  admitting = 0
  /** How its session began (a fork, an extension's new session), told to its extensions on its first build only. */
  begun?: SessionStart
  #actor?: ThreadSlotActor
  /** Where the machine rests without an actor (live, unavailable); undefined with an actor, or cold. */
  #resting?: { value: 'live' | 'unavailable'; context: SlotContext }
  /** Waiting for `idle()`: a slot leaves a runtime behind only through its actor, whose transitions resolve them. */
  #idleWaiters?: (() => void)[]

  constructor(
    record: ThreadRow,
    journal: ThreadJournal,
    /** The slot machine with the registry's actors and actions, provided once for every slot. */
    private readonly machine: ThreadSlotMachine,
  ) {
    this.record = record
    this.journal = journal
  }

  get threadId(): string {
    return this.record.threadId
  }

  get #snapshot(): SlotSnapshot | undefined {
    return this.#actor?.getSnapshot()
  }

  /** The machine's context, awake or resting (cold: none). */
  get #context(): SlotContext | undefined {
    return this.#actor?.getSnapshot().context ?? this.#resting?.context
  }

  get state(): SlotState {
    const snapshot = this.#snapshot
    return snapshot ? (snapshot.value as SlotState) : (this.#resting?.value ?? 'cold')
  }

  /** A thread that may be named by a request: a deleting one is already gone for callers. */
  get present(): boolean {
    const state = this.state
    return state !== 'deleting' && state !== 'gone' && !this.doomed
  }

  /** A runtime is being built, or will be once the old one is released: the slot is not at rest. */
  get building(): boolean {
    const snapshot = this.#snapshot
    return snapshot !== undefined && (snapshot.matches('building') || (snapshot.matches('releasing') && snapshot.context.rebuild))
  }

  /** The LiveThread while the slot is live: the one a request may reach. */
  get live(): LiveThread | undefined {
    return this.state === 'live' ? (this.#context!.thread as LiveThread) : undefined
  }

  /** The LiveThread of a live or releasing slot (its machine still answers stops while it releases). */
  get thread(): LiveThread | undefined {
    const state = this.state
    return state === 'live' || state === 'releasing' ? (this.#context!.thread as LiveThread) : undefined
  }

  /** A delete arrived while the runtime was being built: the build disposes what it made. */
  get doomed(): boolean {
    return this.#context?.doomed ?? false
  }

  /** Why the thread is unavailable, when it is. */
  get damage(): string | undefined {
    return this.state === 'unavailable' ? this.#context!.damage : undefined
  }

  /** The run number: the live thread's machine owns it while there is one, the row otherwise. */
  get run(): number {
    return this.thread?.run ?? this.record.run
  }

  /** The live thread, building one if needed; rejects with why there is none (the build's error, a delete, damage). */
  async ensureLive(): Promise<LiveThread> {
    const actor = this.#wake()
    actor.send({ type: 'BUILD' })
    const settled = await waitFor(actor, (s) => !s.matches('building') && !s.matches('releasing'), { timeout: Infinity })
    return this.#liveOrThrow(settled)
  }

  /** Resolves once no runtime is live here, being built or being released. */
  idle(): Promise<void> {
    if (!withRuntime(this.state)) return Promise.resolve()
    return new Promise((resolve) => (this.#idleWaiters ??= []).push(resolve))
  }

  /** The live thread, waiting for one that is being built; never builds. */
  async currentLive(): Promise<LiveThread | undefined> {
    if (!this.building) return this.live
    const settled = await waitFor(this.#actor!, (s) => !s.matches('building') && !s.matches('releasing'), { timeout: Infinity })
    return settled.matches('live') ? (settled.context.thread as LiveThread) : undefined
  }

  #liveOrThrow(snapshot: SlotSnapshot): LiveThread {
    if (snapshot.matches('live')) return snapshot.context.thread as LiveThread
    if (snapshot.matches('unavailable')) throw new SessionDamaged(this.threadId, snapshot.context.damage ?? 'damaged')
    if (snapshot.matches('deleting') || snapshot.matches('gone')) throw new ThreadGone('deleted')
    throw snapshot.context.buildError ?? new Error('the runtime could not be built')
  }

  /** The live thread's machine went cold or was disposed. */
  retired(): void {
    if (this.state !== 'cold') this.#wake().send({ type: 'RETIRED' })
  }

  /** The session file was found damaged: a cold thread becomes unavailable (a live one is left be). */
  damaged(reason: string): void {
    if (this.state === 'cold') this.#wake().send({ type: 'DAMAGED', reason })
  }

  /** Starts the delete and resolves once the thread's files are gone (rejects if removing failed). */
  async delete(): Promise<void> {
    const actor = this.#wake()
    actor.send({ type: 'DELETE' })
    const done = await waitFor(actor, (s) => s.status === 'done', { timeout: Infinity })
    if (done.context.removeError !== undefined) throw done.context.removeError
  }

  /** The slot's actor, made for an event to a slot at rest: in the state it rested in (cold: the initial one). */
  #wake(): ThreadSlotActor {
    if (this.#actor) return this.#actor
    const resting = this.#resting
    // A resting state invokes nothing and keeps no timer, so the actor made from it is the one that rested.
    const snapshot = resting && this.machine.resolveState(resting)
    const actor = createActor(this.machine as AnyActorLogic, { input: { threadId: this.threadId }, ...(snapshot ? { snapshot } : {}) }) as ThreadSlotActor
    this.#actor = actor
    this.#resting = undefined
    // At rest: the actor goes, once whoever waits on this transition (or on this event, taken with none) has seen it.
    const rest = () => queueMicrotask(() => this.#rest(actor))
    actor.subscribe({
      next: (s) => {
        if (this.#idleWaiters && !withRuntime(s.value)) {
          const waiters = this.#idleWaiters
          this.#idleWaiters = undefined
          for (const resolve of waiters) resolve()
        }
        if (restsIn(s.value)) rest()
      },
      // The provided work never throws past the machine's onError; were it to, say so rather than crash.
      error: (error) => console.error(`thread ${this.threadId}: slot machine failed: ${String(error)}`),
    })
    actor.start()
    rest()
    return actor
  }

  #rest(actor: ThreadSlotActor): void {
    const { value, context } = actor.getSnapshot()
    if (this.#actor !== actor || !restsIn(value)) return
    actor.stop()
    this.#actor = undefined
    this.#resting = value === 'cold' ? undefined : { value, context }
  }
}

/** The slot machine's states that invoke nothing and keep no timer: an actor there only waits for the next event. */
function restsIn(value: unknown): value is 'cold' | 'live' | 'unavailable' {
  return value === 'cold' || value === 'live' || value === 'unavailable'
}

/** The slot machine's states with a runtime live, being built or being released. */
function withRuntime(value: unknown): boolean {
  return value === 'live' || value === 'building' || value === 'releasing'
}

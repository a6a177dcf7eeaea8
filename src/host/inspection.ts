/**
 * The machine inspector's server side: what every thread, dialog and ask-queue actor did, as
 * compact numbered records with a bounded history per actor.
 *
 * Cost rule: nothing is observed while nobody watches. `system.inspect` is attached to the live
 * threads' actor systems only while at least one client is connected, and detached when the last
 * one leaves; xstate's own dispatcher returns early when a system has no observer, so an unwatched
 * run makes no record, no digest and no closure. The price is a gap in the history between two
 * inspector sessions; on attach each actor is re-read (an `attached` snapshot) so the gap is
 * visible and the picture is current. See docs/inspector.md.
 *
 * Threads share an actor system (thread-system.ts): it is observed once, however many of its
 * threads are attached, and an event is a thread's when its actor or an ancestor is that thread's
 * root actor — the actor the registry names, whose own parent (the system's root) is not the thread's.
 */
import type { AnyActorRef, InspectionEvent, Subscription } from 'xstate'
import { transitionKey } from '../machines/diagram.js'
import type { ActorStatus, EventDigest, InspectionRecord, RecordBase } from '../schemas/inspection.js'
import { machineIdOf, microstepTransitions, parentOf, snapshotOf, systemIdOf, type SnapshotView } from '../shared/xstate-internals.js'

export type { ActorStatus, EventDigest, InspectionRecord } from '../schemas/inspection.js'

/** The event type of the snapshot read when an inspector attaches to an actor already running. */
export const ATTACHED = '(attached)'

/** What inspection needs from the registry: the live threads, and news of threads starting and retiring. */
export interface LiveSource {
  liveThreads(): { threadId: string; actor: AnyActorRef }[]
  onLiveChange(listener: (thread: { threadId: string; actor: AnyActorRef }, event: 'started' | 'retired') => void): () => void
}

export interface InspectionOptions {
  /** Records kept per actor. */
  historySize?: number
  /** Histories of stopped actors kept; the oldest are forgotten first. */
  retiredActors?: number
  now?: () => number
}

interface History {
  threadId: string
  records: InspectionRecord[]
  live: boolean
}

type Listener = (record: InspectionRecord) => void

export class Inspection {
  readonly #histories = new Map<string, History>()
  readonly #listeners = new Set<Listener>()
  /** The attached threads' root actors, by thread. */
  readonly #attached = new Map<string, AnyActorRef>()
  /** Every thread root ever attached, to its thread: where an actor's path and parents stop. */
  readonly #roots = new WeakMap<object, string>()
  /** The observed actor systems, with how many attached threads run in each. */
  readonly #systems = new Map<object, { subscription: Subscription; threads: number }>()
  /** Transition keys taken in the microsteps of the macrostep under way, per actor. */
  readonly #taken = new WeakMap<object, string[]>()
  readonly #paths = new WeakMap<object, string>()
  readonly #historySize: number
  readonly #retiredActors: number
  readonly #now: () => number
  readonly #stopWatching: () => void
  #seq = 0
  /** How many records were ever made; the zero-cost test reads it. */
  allocated = 0

  constructor(
    readonly source: LiveSource,
    options: InspectionOptions = {},
  ) {
    this.#historySize = options.historySize ?? 500
    this.#retiredActors = options.retiredActors ?? 200
    this.#now = options.now ?? Date.now
    this.#stopWatching = source.onLiveChange((thread, event) => {
      // The one cost an unwatched host pays: a set-size check per thread start or retire.
      if (this.#listeners.size === 0) return
      if (event === 'started') this.#attach(thread.threadId, thread.actor)
      // A thread built again before its old actor retired is already attached as the new one.
      else if ((this.#attached.get(thread.threadId) ?? thread.actor) === thread.actor) this.#detach(thread.threadId, true)
    })
  }

  /** Threads whose actor systems are being observed right now. */
  get attachedThreads(): string[] {
    return [...this.#attached.keys()]
  }

  get head(): number {
    return this.#seq
  }

  /**
   * A client starts watching: it gets the retained records after `after` (all when undefined),
   * then every new one. The first client attaches the observers; the last to leave detaches them.
   */
  connect(listener: Listener, after?: number, threadId?: string): { replay: InspectionRecord[]; close: () => void } {
    const replay = this.records(after, threadId)
    this.#listeners.add(listener)
    if (this.#listeners.size === 1) for (const t of this.source.liveThreads()) this.#attach(t.threadId, t.actor)
    return {
      replay,
      close: () => {
        if (!this.#listeners.delete(listener) || this.#listeners.size > 0) return
        for (const threadId of [...this.#attached.keys()]) this.#detach(threadId, false)
      },
    }
  }

  /** Retained records numbered after `after`, oldest first, optionally of one thread. */
  records(after = 0, threadId?: string): InspectionRecord[] {
    const out: InspectionRecord[] = []
    for (const h of this.#histories.values()) {
      if (threadId !== undefined && h.threadId !== threadId) continue
      for (const r of h.records) if (r.id > after) out.push(r)
    }
    return out.sort((a, b) => a.id - b.id)
  }

  /** One actor's retained records, oldest first. */
  history(actorId: string): InspectionRecord[] {
    return [...(this.#histories.get(actorId)?.records ?? [])]
  }

  dispose(): void {
    this.#stopWatching()
    this.#listeners.clear()
    for (const threadId of [...this.#attached.keys()]) this.#detach(threadId, false)
  }

  // ——— observing ———

  #attach(threadId: string, actor: AnyActorRef): void {
    const existing = this.#attached.get(threadId)
    if (existing === actor) return
    if (existing) this.#detach(threadId, true)
    this.#attached.set(threadId, actor)
    this.#roots.set(actor, threadId)
    const observed = this.#systems.get(actor.system)
    if (observed) observed.threads++
    else this.#systems.set(actor.system, { subscription: actor.system.inspect((e: InspectionEvent) => this.#onInspection(e)), threads: 1 })
    // Whatever happened before we looked (or while nobody looked): read each actor as it is now.
    const seen = new Set<string>()
    const walk = (ref: AnyActorRef) => {
      if (!runsMachine(ref)) return
      const actorId = this.#pathOf(ref)
      seen.add(actorId)
      const snapshot = snapshotOf(ref)
      if (!this.#histories.get(actorId)?.live) this.#started(threadId, ref)
      this.#snapshot(threadId, ref, ATTACHED, snapshot, [])
      for (const child of snapshot.children) walk(child)
    }
    walk(actor)
    this.#stopMissing(threadId, seen)
  }

  #detach(threadId: string, threadGone: boolean): void {
    const actor = this.#attached.get(threadId)
    this.#attached.delete(threadId)
    const observed = actor && this.#systems.get(actor.system)
    if (observed && --observed.threads === 0) {
      observed.subscription.unsubscribe()
      this.#systems.delete(actor.system)
    }
    if (threadGone) this.#stopMissing(threadId, new Set())
  }

  /** The attached thread an actor runs in: its own root, or its ancestors'. */
  #threadOf(ref: AnyActorRef): string | undefined {
    for (let r: AnyActorRef | undefined = ref; r; r = parentOf(r)) {
      const threadId = this.#roots.get(r)
      if (threadId !== undefined) return this.#attached.get(threadId) === r ? threadId : undefined
    }
    return undefined
  }

  /** An actor's parent within its thread: a thread's root has none. */
  #parentOf(ref: AnyActorRef): AnyActorRef | undefined {
    return this.#roots.has(ref) ? undefined : parentOf(ref)
  }

  /** Actors believed live that are no longer there stopped while nobody looked. */
  #stopMissing(threadId: string, present: Set<string>): void {
    for (const [actorId, h] of this.#histories) {
      if (h.threadId === threadId && h.live && !present.has(actorId)) this.#stopped(threadId, actorId, 'stopped')
    }
  }

  #onInspection(e: InspectionEvent): void {
    if (!runsMachine(e.actorRef as AnyActorRef)) return
    const threadId = this.#threadOf(e.actorRef as AnyActorRef)
    if (threadId === undefined) return
    switch (e.type) {
      case '@xstate.actor':
        // Registered before its snapshot exists; the first snapshot follows at start.
        this.#started(threadId, e.actorRef as AnyActorRef)
        return
      case '@xstate.event': {
        const origin = e.sourceRef ? this.#pathOf(e.sourceRef as AnyActorRef) : undefined
        this.#add(threadId, this.#pathOf(e.actorRef as AnyActorRef), {
          kind: 'event',
          event: digest(e.event, 1) as EventDigest,
          ...(origin !== undefined ? { origin } : {}),
        })
        return
      }
      case '@xstate.microstep': {
        const keys = this.#taken.get(e.actorRef) ?? []
        for (const t of microstepTransitions(e)) keys.push(transitionKey(t))
        this.#taken.set(e.actorRef, keys)
        return
      }
      case '@xstate.snapshot': {
        const ref = e.actorRef as AnyActorRef
        const taken = this.#taken.get(ref) ?? []
        this.#taken.delete(ref)
        const status = this.#snapshot(threadId, ref, e.event.type, snapshotOf(ref, e.snapshot), taken)
        if (status !== 'active') this.#stopped(threadId, this.#pathOf(ref), status)
        return
      }
    }
  }

  // ——— records ———

  #started(threadId: string, ref: AnyActorRef): void {
    const actorId = this.#pathOf(ref)
    const parent = this.#parentOf(ref)
    const history = this.#histories.get(actorId)
    if (history?.live) return
    const systemId = systemIdOf(ref)
    this.#add(threadId, actorId, {
      kind: 'actor.started',
      machineId: machineIdOf(ref) ?? 'unknown',
      ...(parent ? { parentId: this.#pathOf(parent) } : {}),
      ...(systemId ? { systemId } : {}),
    })
    this.#histories.get(actorId)!.live = true
  }

  #snapshot(threadId: string, ref: AnyActorRef, event: string, snapshot: SnapshotView, transitions: string[]): ActorStatus {
    const status = snapshot.status as ActorStatus
    this.#add(threadId, this.#pathOf(ref), {
      kind: 'snapshot',
      event,
      value: snapshot.value ?? null,
      status,
      context: digest(snapshot.context, 0),
      transitions,
    })
    return status
  }

  #stopped(threadId: string, actorId: string, status: ActorStatus): void {
    const history = this.#histories.get(actorId)
    if (!history?.live) return
    this.#add(threadId, actorId, { kind: 'actor.stopped', status })
    history.live = false
    this.#forgetRetired()
  }

  #add(threadId: string, actorId: string, body: DistributiveOmit<InspectionRecord, keyof RecordBase>): void {
    const record = { id: ++this.#seq, ts: this.#now(), threadId, actorId, ...body } as InspectionRecord
    this.allocated++
    let history = this.#histories.get(actorId)
    if (!history) {
      history = { threadId, records: [], live: false }
      this.#histories.set(actorId, history)
    } else if (history.threadId !== threadId) {
      history.threadId = threadId
    }
    // Re-inserting keeps the map in last-touched order, which #forgetRetired relies on.
    this.#histories.delete(actorId)
    this.#histories.set(actorId, history)
    history.records.push(record)
    if (history.records.length > this.#historySize) history.records.shift()
    for (const listener of this.#listeners) listener(record)
  }

  #forgetRetired(): void {
    let retired = 0
    for (const h of this.#histories.values()) if (!h.live) retired++
    for (const [actorId, h] of this.#histories) {
      if (retired <= this.#retiredActors) return
      if (h.live) continue
      this.#histories.delete(actorId)
      retired--
    }
  }

  #pathOf(ref: AnyActorRef): string {
    const known = this.#paths.get(ref)
    if (known !== undefined) return known
    const parent = this.#parentOf(ref)
    const path = parent ? `${this.#pathOf(parent)}/${ref.id}` : ref.id
    this.#paths.set(ref, path)
    return path
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never

const MAX_STRING = 80
const MAX_ITEMS = 6
const MAX_KEYS = 12
const MAX_DEPTH = 3

/**
 * A compact, JSON-safe picture of a context or an event: short strings, a few items per list, a
 * few levels deep. It is for a human glancing at a state, not for restoring one.
 */
export function digest(value: unknown, depth = 0): unknown {
  if (value === null || typeof value === 'boolean') return value
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value)
  if (typeof value === 'string') return value.length > MAX_STRING ? `${value.slice(0, MAX_STRING - 1)}…` : value
  if (value === undefined) return undefined
  if (typeof value === 'function') return '[function]'
  if (typeof value !== 'object') return String(value)
  if (value instanceof Error) return `${value.name}: ${digest(value.message)}`
  if (isActorRef(value)) return `[actor ${value.id}]`
  if (depth >= MAX_DEPTH) return Array.isArray(value) ? `[${value.length} items]` : '{…}'
  if (Array.isArray(value)) {
    const items = value.slice(0, MAX_ITEMS).map((v) => digest(v, depth + 1))
    if (value.length > MAX_ITEMS) items.push(`…+${value.length - MAX_ITEMS}`)
    return items
  }
  const out: Record<string, unknown> = {}
  const entries = Object.entries(value).filter(([, v]) => v !== undefined)
  for (const [k, v] of entries.slice(0, MAX_KEYS)) out[k] = digest(v, depth + 1)
  if (entries.length > MAX_KEYS) out['…'] = `+${entries.length - MAX_KEYS} keys`
  return out
}

function isActorRef(value: object): value is AnyActorRef {
  return 'sessionId' in value && 'send' in value && typeof (value as { getSnapshot?: unknown }).getSnapshot === 'function'
}

/**
 * The inspector draws machines. A machine's invoked helpers (a dialog's signal listener, the
 * ask-queue's card, the thread's queue clearer) are its own business: their events show on it.
 */
function runsMachine(ref: AnyActorRef): boolean {
  return machineIdOf(ref) !== undefined
}

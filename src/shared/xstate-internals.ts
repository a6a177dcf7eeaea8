/**
 * Every read the inspector makes of xstate beyond its typed public API, in one file.
 *
 * `AnyActorRef` (what xstate hands out) has no parent, machine or system id; an inspection event
 * carries the transitions a microstep took only as the underscored `_transitions`; `toJSON()` is
 * typed loosely and names initial states as `#id` targets; a state value says which states are
 * active only through xstate's node ids. The inspector needs all of these — the host to record
 * (inspection.ts), the page to draw (src/ui/inspector) — so they are read here, behind a small
 * typed surface, and nowhere else. It lives in shared because both sides import it: nothing here
 * is Node-only, and from xstate it takes types alone.
 *
 * test/inspector/xstate-internals.test.ts checks each read on real actors and machines, so an
 * xstate upgrade that moves one fails a test instead of quietly drawing every actor as an orphan
 * of machine "unknown".
 */
import type { AnyActorRef, AnyStateMachine, AnyTransitionDefinition, InspectionEvent, StateValue } from 'xstate'

// ——— actors (the host) ———

/** The fields of xstate's `Actor` class that `AnyActorRef` leaves out. */
interface ActorInternals {
  /** The actor that spawned or invoked this one; absent for a root actor. */
  _parent?: AnyActorRef
  /** The logic the actor runs; for a machine, `id` is its root state's id. */
  logic?: { id?: unknown }
  /** Set when the actor registers with its system. */
  systemId?: string
  /** What the actor was created with: the only place its systemId is before registration. */
  options?: { systemId?: string }
}

const internals = (ref: AnyActorRef) => ref as unknown as ActorInternals

/** The actor's parent, or undefined for a root actor (a thread). */
export function parentOf(ref: AnyActorRef): AnyActorRef | undefined {
  return internals(ref)._parent
}

/** The id of the machine the actor runs (`thread`, `dialog`, `askQueue`), if it runs a machine. */
export function machineIdOf(ref: AnyActorRef): string | undefined {
  const id = internals(ref).logic?.id
  return typeof id === 'string' ? id : undefined
}

/** The actor's systemId, also at `@xstate.actor` (registration), before xstate copies it onto the actor. */
export function systemIdOf(ref: AnyActorRef): string | undefined {
  const r = internals(ref)
  return r.systemId ?? r.options?.systemId
}

/** What the inspector reads of a snapshot; an actor that is not a machine has no value or children. */
export interface SnapshotView {
  status: string
  value: StateValue | undefined
  context: unknown
  children: AnyActorRef[]
}

/** An actor's snapshot (its current one unless given), read loosely enough for any kind of actor. */
export function snapshotOf(ref: AnyActorRef, snapshot: unknown = ref.getSnapshot()): SnapshotView {
  const s = (snapshot ?? {}) as { status?: unknown; value?: StateValue; context?: unknown; children?: Record<string, AnyActorRef | undefined> }
  return {
    status: typeof s.status === 'string' ? s.status : 'active',
    value: s.value,
    context: s.context,
    children: Object.values(s.children ?? {}).filter((c): c is AnyActorRef => c !== undefined),
  }
}

/** The transition definitions one `@xstate.microstep` event took (key them with diagram.ts `transitionKey`). */
export function microstepTransitions(e: Extract<InspectionEvent, { type: '@xstate.microstep' }>): AnyTransitionDefinition[] {
  return e._transitions ?? []
}

// ——— machine definitions (the page) ———

/** The part of `machine.toJSON()` the page draws; what `GET /api/debug/machines/:id` sends. */
export interface StateDef {
  id: string
  key: string
  type: 'atomic' | 'compound' | 'parallel' | 'final' | 'history'
  /** xstate's initial transition: `target` holds `#`-prefixed ids. */
  initial?: { target?: string[] }
  states?: Record<string, StateDef>
}

/**
 * The machine's definition as the page receives it: `toJSON()` through JSON, as the route sends
 * it. Not `toJSON()` alone: its initial targets are state nodes that turn into `#id`s only when
 * serialised.
 */
export function machineDefinition(machine: AnyStateMachine): StateDef {
  return JSON.parse(JSON.stringify(machine.toJSON())) as StateDef
}

/** The full id of the child a compound state enters first; undefined for other states. */
export function initialChildId(def: StateDef): string | undefined {
  const target = def.initial?.target?.[0]
  return typeof target === 'string' ? target.replace(/^#/, '') : undefined
}

/**
 * The ids of the states a state value makes active, ancestors included: `{aborting: 'clearing'}`
 * in the thread machine is `thread`, `thread.aborting`, `thread.aborting.clearing`. The value names
 * states by key; the definition turns keys into ids, so states with ids of their own still match.
 */
export function activeStateIds(root: StateDef, value: unknown): Set<string> {
  const out = new Set<string>([root.id])
  const walk = (def: StateDef, v: unknown) => {
    if (typeof v === 'string') {
      const child = def.states?.[v]
      if (child) out.add(child.id)
    } else if (v && typeof v === 'object') {
      for (const [k, sub] of Object.entries(v)) {
        const child = def.states?.[k]
        if (!child) continue
        out.add(child.id)
        walk(child, sub)
      }
    }
  }
  walk(root, value)
  return out
}

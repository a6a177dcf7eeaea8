/**
 * The actor system a host's live threads share: each thread's actor is made as a child of one root
 * actor per registry, rather than as a root with an actor system of its own. An xstate system is
 * ≈ 1.7 KiB of maps, sets and closures, kept by every idle live thread for nothing — nothing in a
 * thread talks to another through it.
 *
 * What the sharing changes, and who takes care of it:
 * - the threads' machines find their thread by actor, not by system (live-thread-actions.ts);
 * - the inspector subscribes once per system and tells threads apart by their root actor, whose
 *   parent (the root here) it does not count as theirs (inspection.ts);
 * - xstate's `stop()` refuses an actor with a parent, so a thread's actor is stopped by `stopThread`;
 * - a thread's systemId (`thread:<id>`) is registered in the shared system until its actor stops,
 *   which happens a microtask after it retired: a thread built again before that gets a system of
 *   its own, as every thread had before, rather than a clash.
 */
import { createActor, fromCallback, type AnyActorRef } from 'xstate'
import { parentOf } from '../shared/xstate-internals.js'
import { SHARED_CLOCK } from './shared-clock.js'

/** A root that does nothing, for one host's threads. What a thread tells its parent (done, error) its own subscription handles. */
export function threadSystem(): AnyActorRef {
  // The system's clock is the one its scheduler uses for every actor in it (shared-clock.ts).
  const root = createActor(fromCallback(() => {}), { id: 'threads', clock: SHARED_CLOCK })
  root.start()
  return root
}

/** The parent a thread's actor is made under: `root`, unless `systemId` is still taken there (then none: a system of its own). */
export function parentFor(root: AnyActorRef | undefined, systemId: string): AnyActorRef | undefined {
  return root && root.system.get(systemId) === undefined ? root : undefined
}

/**
 * What a failed thread's actor leaves in the shared system, stopped: xstate stops no child of an
 * actor that errors (its ask-queue, its open dialogs), and they would stay registered for the
 * process's life — keeping the thread, and its pi runtime, from being collected — and take the
 * systemIds a rebuilt thread's own children need.
 */
export function stopChildren(actor: AnyActorRef): void {
  const system = actor.system as unknown as { _unregister(ref: AnyActorRef): void }
  for (const child of Object.values(actor.getSnapshot().children ?? {}) as (AnyActorRef | undefined)[]) {
    if (!child) continue
    system._unregister(child)
    ;(child as unknown as { _stop(): void })._stop()
  }
}

/** Stops a thread's actor, a root or a child of a thread system's root. */
export function stopThread(actor: AnyActorRef): void {
  if (parentOf(actor) === undefined) actor.stop()
  // What `stop()` runs for a root actor (it refuses a child, which its parent is to stop).
  else (actor as unknown as { _stop(): void })._stop()
}

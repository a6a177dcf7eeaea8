/**
 * The thread slot machine (the registry's "is this thread live?"), proven model-based: every shortest
 * and every simple path of `xstate/graph` is replayed on a live actor whose invoked work (build,
 * release, remove) is held open and finished by the path's own done/error events, checking after
 * every step what each state promises; a last test checks the paths took every transition.
 */
import { createActor, fromPromise, type AnyTransitionDefinition } from 'xstate'
import { getShortestPaths, getSimplePaths } from 'xstate/graph'
import { describe, expect, it } from 'vitest'
import { transitionKey, transitionsOf } from '../../src/machines/diagram.js'
import { threadSlotMachine, type SlotEvent } from '../../src/machines/thread-slot.machine.js'

const THREAD = { name: 'the live thread' }
const DAMAGED = { reason: 'a bad line' }
const FAILED = new Error('no credentials')

type Event = SlotEvent | { type: string; output?: unknown; error?: unknown }

const EVENTS: Event[] = [
  { type: 'BUILD' },
  { type: 'RETIRED' },
  { type: 'DAMAGED', reason: 'torn header' },
  { type: 'DELETE' },
  { type: 'xstate.done.actor.build', output: THREAD },
  { type: 'xstate.error.actor.build', error: FAILED },
  { type: 'xstate.error.actor.build', error: DAMAGED },
  { type: 'xstate.done.actor.release' },
  { type: 'xstate.error.actor.release', error: FAILED },
  { type: 'xstate.done.actor.remove' },
  { type: 'xstate.error.actor.remove', error: FAILED },
]

/** The machine as the registry provides it, with work that never finishes by itself and a log of what started. */
function provided(log: string[]) {
  const pending = <T,>() => new Promise<T>(() => {})
  return threadSlotMachine.provide({
    actors: {
      build: fromPromise(() => (log.push('build'), pending<object>())),
      release: fromPromise(() => (log.push('release'), pending<void>())),
      remove: fromPromise(() => (log.push('remove'), pending<void>())),
    },
    actions: {
      releaseFeed: () => void log.push('releaseFeed'),
      keepRetired: () => void log.push('keepRetired'),
    },
    guards: { damaged: (_, { error }) => error === DAMAGED },
  })
}

const graphMachine = provided([])
const shortest = getShortestPaths(graphMachine, { input: { threadId: 't1' }, events: EVENTS as SlotEvent[] })
const simple = getSimplePaths(graphMachine, { input: { threadId: 't1' }, events: EVENTS as SlotEvent[] })

const describeEvent = (e: Event) =>
  e.type.startsWith('xstate.') ? `${e.type.replace('xstate.', '').replace('.actor', '')}${'error' in e && e.error === DAMAGED ? ' (damaged)' : ''}` : e.type

interface Walk {
  steps: { event: Event; state: { value: unknown } }[]
}

/**
 * A thread going cold and being built again closes a cycle back to a state the slot was in, which
 * no simple path takes: these walks do.
 */
const BUILT = [
  { event: { type: 'BUILD' }, state: { value: 'building' } },
  { event: { type: 'xstate.done.actor.build', output: THREAD }, state: { value: 'live' } },
  { event: { type: 'RETIRED' }, state: { value: 'releasing' } },
]
const CYCLES: Walk[] = [
  { steps: [{ event: { type: 'start' }, state: { value: 'cold' } }, ...BUILT, { event: { type: 'xstate.error.actor.release', error: FAILED }, state: { value: 'cold' } }] },
  {
    steps: [
      { event: { type: 'start' }, state: { value: 'cold' } },
      ...BUILT,
      { event: { type: 'BUILD' }, state: { value: 'releasing' } },
      { event: { type: 'xstate.error.actor.release', error: FAILED }, state: { value: 'building' } },
    ],
  },
  { steps: [{ event: { type: 'start' }, state: { value: 'cold' } }, ...BUILT, { event: { type: 'xstate.done.actor.release' }, state: { value: 'cold' } }] },
  {
    steps: [
      { event: { type: 'start' }, state: { value: 'cold' } },
      ...BUILT,
      { event: { type: 'BUILD' }, state: { value: 'releasing' } },
      { event: { type: 'xstate.done.actor.release' }, state: { value: 'building' } },
      { event: { type: 'xstate.done.actor.build', output: THREAD }, state: { value: 'live' } },
    ],
  },
]

/** Replays a path on a live actor, checking each state's promise; returns the transitions it took. */
function replay(path: Walk): Set<string> {
  const log: string[] = []
  const taken = new Set<string>()
  const actor = createActor(provided(log), {
    input: { threadId: 't1' },
    inspect: (ev) => {
      if (ev.type === '@xstate.microstep')
        for (const t of (ev as unknown as { _transitions: AnyTransitionDefinition[] })._transitions) taken.add(transitionKey(t))
    },
  })
  actor.start()
  for (const step of path.steps.slice(1)) {
    const before = actor.getSnapshot()
    const logBefore = log.length
    actor.send(step.event as SlotEvent)
    const after = actor.getSnapshot()
    const started = log.slice(logBefore)
    expect(after.value).toEqual(step.state.value)
    // A build starts exactly when the slot enters building, and never while a thread is held.
    if (after.value === 'building' && before.value !== 'building') {
      expect(started).toContain('build')
      expect(before.value === 'cold' || before.value === 'releasing').toBe(true)
    } else expect(started).not.toContain('build')
    // Live means a built thread is held; cold and unavailable hold none.
    if (after.value === 'live') expect(after.context.thread).toBe(THREAD)
    if (after.value === 'cold' || after.value === 'unavailable') expect(after.context.thread).toBeUndefined()
    // Entering cold or unavailable from elsewhere lets the feed go; nothing else does.
    const rested = (after.value === 'cold' || after.value === 'unavailable') && before.value !== after.value
    expect(started.includes('releaseFeed')).toBe(rested)
    // Going from live to releasing writes the retired thread's row.
    expect(started.includes('keepRetired')).toBe(before.value === 'live' && after.value === 'releasing')
    // Deleting removes once, and a doomed build's thread goes with it.
    if (after.value === 'deleting' && before.value !== 'deleting') expect(started).toEqual(['remove'])
    if (after.value === 'deleting' && before.value === 'building' && step.event.type === 'xstate.done.actor.build') expect(after.context.thread).toBe(THREAD)
  }
  if (actor.getSnapshot().status === 'done') expect(actor.getSnapshot().value).toBe('gone')
  actor.stop()
  return taken
}

const title = (path: Walk) => `${path.steps.slice(1).map((s) => describeEvent(s.event)).join(' → ') || '(no event)'} ⇒ ${String(path.steps.at(-1)!.state.value)}`

describe('thread slot machine: every shortest path, replayed on a live actor', () => {
  for (const path of shortest) it(title(path), () => void replay(path))
})

describe('thread slot machine: every simple path, replayed on a live actor', () => {
  for (const path of simple) it(title(path), () => void replay(path))
})

describe('thread slot machine: a thread goes cold and is built again', () => {
  for (const path of CYCLES) it(title(path), () => void replay(path))
})

describe('thread slot machine: coverage of the model-based paths', () => {
  it('the traversed paths reach every state and take every transition the thread slot machine defines', () => {
    const taken = new Set<string>()
    const reached = new Set<string>()
    for (const path of [...shortest, ...simple, ...CYCLES]) {
      for (const key of replay(path)) taken.add(key)
      for (const step of path.steps) reached.add(String(step.state.value))
    }
    const missingStates = Object.keys(threadSlotMachine.root.states).filter((s) => !reached.has(s))
    const missingTransitions = transitionsOf(threadSlotMachine)
      .map((t) => t.key)
      .filter((k) => !taken.has(k))
    expect({ missingStates, missingTransitions }).toEqual({ missingStates: [], missingTransitions: [] })
  })
})

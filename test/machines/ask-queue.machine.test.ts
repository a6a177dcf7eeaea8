/**
 * The ask-queue machine (ADR-0032): questions shown one at a time in FIFO order, each ask resolved
 * exactly once, Cancel drains the batch, a signalled waiter is never shown, and with no UI every ask
 * is `unavailable`. Model-based paths from `xstate/graph` are replayed on a live actor with
 * recording `show`/`resolve`; properties run random sequences of asks, signals and outcomes.
 */
import { fc, test } from '@fast-check/vitest'
import { createActor, transition, type AnyTransitionDefinition, type SnapshotFrom } from 'xstate'
import { getShortestPaths, getSimplePaths } from 'xstate/graph'
import { describe, expect, it } from 'vitest'
import { askQueueMachine, type AskQueueEvent, type AskStatus } from '../../src/machines/ask-queue.machine.js'
import { transitionKey, transitionsOf } from '../../src/machines/diagram.js'

type Snap = SnapshotFrom<typeof askQueueMachine>

/**
 * A live ask-queue plus the caller's view of it. Ask ids in events are names (`a1`…) that a path may
 * reuse once the queue has drained; the harness gives each ASK a unique live id (`a1#2`) and maps
 * later events naming `a1` to the newest one, so "exactly once" is checked per ask, not per name.
 */
function liveQueue() {
  const shown: string[] = []
  const resolved: { askId: string; status: AskStatus }[] = []
  const log: string[] = []
  const asked: string[] = []
  const signalled = new Set<string>()
  /** Asks that were waiting when the shown one was cancelled: they must resolve `cancelled` unshown. */
  const drained = new Set<string>()
  const generation = new Map<string, number>()
  const taken = new Set<string>()
  const machine = askQueueMachine.provide({
    actions: {
      show: (_, { askId }) => {
        shown.push(askId)
        log.push(`show ${askId}`)
      },
      resolve: (_, r) => {
        resolved.push(r)
        log.push(`resolve ${r.askId} ${r.status}`)
      },
    },
  })
  const actor = createActor(machine, {
    inspect: (ev) => {
      if (ev.type === '@xstate.microstep')
        for (const t of (ev as unknown as { _transitions: AnyTransitionDefinition[] })._transitions) taken.add(transitionKey(t))
    },
  })
  actor.start()
  const live = (name: string) => `${name}#${generation.get(name) ?? 0}`
  const send = (event: AskQueueEvent) => {
    if (event.type === 'ASK') generation.set(event.askId, (generation.get(event.askId) ?? 0) + 1)
    const e = { ...event, askId: live(event.askId) }
    const snap = actor.getSnapshot()
    if (e.type === 'ASK') asked.push(e.askId)
    if (e.type === 'SIGNAL' && snap.context.waiting.some((w) => w.askId === e.askId)) signalled.add(e.askId)
    if (e.type === 'CANCELLED' && snap.value === 'showing' && snap.context.current === e.askId)
      for (const w of snap.context.waiting) drained.add(w.askId)
    actor.send(e)
  }
  return { actor, send, shown, resolved, log, asked, signalled, drained, taken, live }
}
type Harness = ReturnType<typeof liveQueue>

/** What holds after every step, whatever the state. */
function assertInvariants(h: Harness) {
  const snap = h.actor.getSnapshot()
  // each ask resolved at most once; shown at most once
  const ids = h.resolved.map((r) => r.askId)
  expect(new Set(ids).size).toBe(ids.length)
  expect(new Set(h.shown).size).toBe(h.shown.length)
  // shown one at a time: at most one shown ask is unresolved, and it is the current one
  const open = h.shown.filter((id) => !ids.includes(id))
  expect(open.length).toBeLessThanOrEqual(1)
  if (open.length === 1) expect(snap.context.current).toBe(open[0])
  // FIFO: questions are shown in the order they were asked
  const order = h.shown.map((id) => h.asked.indexOf(id))
  expect(order).toEqual([...order].sort((a, b) => a - b))
  // a waiter whose signal fired, or that a Cancel drained, is never shown and resolves `cancelled`
  for (const id of [...h.signalled, ...h.drained]) {
    expect(h.shown).not.toContain(id)
    const r = h.resolved.find((x) => x.askId === id)
    if (r) expect(r.status).toBe('cancelled')
  }
}

/** What each state promises. */
function assertState(state: string, h: Harness) {
  assertInvariants(h)
  const snap = h.actor.getSnapshot()
  expect(snap.value).toBe(state)
  switch (state) {
    case 'idle':
      // idle: nothing shown, nothing waiting, the batch flag reset, and every ask already resolved
      expect(snap.context).toMatchObject({ current: undefined, waiting: [], batchCancelled: false })
      expect(h.resolved.map((r) => r.askId).sort()).toEqual([...h.asked].sort())
      break
    case 'showing': {
      // one question shown and unresolved; the ones behind it neither shown nor resolved
      const ids = h.resolved.map((r) => r.askId)
      expect(snap.context.current).toBeDefined()
      expect(h.shown.at(-1)).toBe(snap.context.current)
      expect(ids).not.toContain(snap.context.current)
      for (const w of snap.context.waiting) {
        expect(h.shown).not.toContain(w.askId)
        expect(ids).not.toContain(w.askId)
      }
      expect(snap.context.batchCancelled).toBe(false)
      break
    }
    default:
      throw new Error(`no assertion for state ${state}`)
  }
}

const NAMES = ['a1', 'a2', 'a3']

/** Events offered in each state: a new ask (up to three in the queue), and a signal and each outcome for every ask in it. */
function eventsFor(snap: Snap): AskQueueEvent[] {
  const inQueue = [snap.context.current, ...snap.context.waiting.map((w) => w.askId)].filter((x): x is string => !!x)
  const fresh = NAMES.find((n) => !inQueue.includes(n))
  const events: AskQueueEvent[] = fresh ? [{ type: 'ASK', askId: fresh }] : []
  for (const askId of inQueue) {
    events.push({ type: 'SIGNAL', askId })
    for (const type of ['ANSWERED', 'SKIPPED', 'CANCELLED'] as const) events.push({ type, askId })
  }
  return events
}

const describeEvent = (e: AskQueueEvent) => `${e.type} ${e.askId}`

const PROMISE: Record<string, string> = {
  idle: 'every ask resolved exactly once, nothing shown, batch flag reset',
  showing: 'one question shown, the rest waiting unshown, in FIFO order',
}

type Path = ReturnType<typeof getShortestPaths<typeof askQueueMachine>>[number]

function pathTitle(path: Path) {
  const events = path.steps.slice(1).map((s) => describeEvent(s.event))
  const state = String(path.state.value)
  return `${events.length ? events.join(' → ') : '(no event)'} ⇒ ${state}: ${PROMISE[state]}`
}

function replay(path: Path) {
  const h = liveQueue()
  assertState(String(path.steps[0].state.value), h)
  for (const step of path.steps.slice(1)) {
    h.send(step.event)
    assertState(String(step.state.value), h)
  }
  return h.taken
}

/** The transitions a sequence of events takes on a live actor (no assertions). */
function takenBy(events: AskQueueEvent[]) {
  const h = liveQueue()
  for (const e of events) h.send(e)
  return h.taken
}

/**
 * Transition-covering paths: a shortest path to each state, extended by each event offered there,
 * kept when it takes a transition no earlier path took. Shortest and simple paths visit states; a
 * transition back to a visited state (a Cancel draining into `idle`) needs a path of its own.
 */
function coveringPaths(shortest: Path[], covered: Set<string>): Path[] {
  const out: Path[] = []
  for (const p of [...shortest].sort((a, b) => a.steps.length - b.steps.length)) {
    for (const event of eventsFor(p.state)) {
      const events = [...p.steps.slice(1).map((s) => s.event), event]
      const fresh = [...takenBy(events)].filter((k) => !covered.has(k))
      if (fresh.length === 0) continue
      for (const k of fresh) covered.add(k)
      const [state] = transition(askQueueMachine, p.state, event)
      out.push({ state, steps: [...p.steps, { event, state }], weight: p.weight + 1 })
    }
  }
  return out
}

const shortest = getShortestPaths(askQueueMachine, { events: eventsFor })
// Simple paths through a queue of at most two, so the set stays small.
const simple = getSimplePaths(askQueueMachine, {
  events: (s: Snap) => eventsFor(s).filter((e) => e.type !== 'ASK' || e.askId !== 'a3'),
})
const covered = new Set<string>()
for (const p of [...shortest, ...simple]) for (const k of takenBy(p.steps.slice(1).map((s) => s.event))) covered.add(k)
const covering = coveringPaths(shortest, covered)

describe('ask-queue machine: every shortest path, replayed on a live actor', () => {
  for (const path of shortest) it(pathTitle(path), () => void replay(path))
})

describe('ask-queue machine: every simple path through a queue of two, replayed on a live actor', () => {
  for (const path of simple) it(pathTitle(path), () => void replay(path))
})

describe('ask-queue machine: a path for every transition the state paths miss, replayed on a live actor', () => {
  for (const path of covering) it(pathTitle(path), () => void replay(path))
})

describe('ask-queue machine: coverage of the model-based paths', () => {
  it('the traversed paths reach every state and take every transition the ask-queue machine defines', () => {
    const taken = new Set<string>()
    for (const path of [...shortest, ...simple, ...covering]) for (const k of replay(path)) taken.add(k)
    const reached = new Set([...taken].map((k) => k.split('|')[0]))
    for (const p of shortest) reached.add(`askQueue.${String(p.state.value)}`)
    const missingStates = Object.values(askQueueMachine.root.states)
      .map((s) => s.id)
      .filter((id) => !reached.has(id))
    const missingTransitions = transitionsOf(askQueueMachine)
      .map((t) => t.key)
      .filter((k) => !taken.has(k))
    expect({ missingStates, missingTransitions }).toEqual({ missingStates: [], missingTransitions: [] })
  })
})

describe('ask-queue machine: properties over random sequences', () => {
  const name = fc.constantFrom(...NAMES, 'a4')
  const event: fc.Arbitrary<AskQueueEvent> = fc.oneof(
    { weight: 3, arbitrary: name.map((askId) => ({ type: 'ASK' as const, askId })) },
    fc.constantFrom('SIGNAL', 'ANSWERED', 'SKIPPED', 'CANCELLED').chain((type) =>
      name.map((askId) => ({ type, askId }) as AskQueueEvent),
    ),
  )
  /** A fresh name per ASK while it is still queued: reusing a queued name is not a caller's move. */
  const sendAll = (h: Harness, events: AskQueueEvent[]) => {
    for (const e of events) {
      const snap = h.actor.getSnapshot()
      const inQueue = [snap.context.current, ...snap.context.waiting.map((w) => w.askId)]
      if (e.type === 'ASK' && inQueue.includes(h.live(e.askId))) continue
      h.send(e)
      assertInvariants(h)
    }
  }
  /** Answer whatever is shown until the queue is idle. */
  const drain = (h: Harness) => {
    for (let i = 0; i < 20 && h.actor.getSnapshot().value === 'showing'; i++) {
      h.actor.send({ type: 'ANSWERED', askId: h.actor.getSnapshot().context.current! })
      assertInvariants(h)
    }
  }

  test.prop([fc.array(event, { maxLength: 25 })], { numRuns: 150 })(
    'questions are shown one at a time in FIFO order and each ask is resolved exactly once',
    (events) => {
      const h = liveQueue()
      sendAll(h, events)
      drain(h)
      expect(h.actor.getSnapshot().value).toBe('idle')
      expect(h.resolved.map((r) => r.askId).sort()).toEqual([...h.asked].sort())
    },
  )

  test.prop([fc.array(event, { maxLength: 25 })], { numRuns: 150 })(
    'after a Cancel every waiting ask resolves cancelled without being shown, and a signalled waiter is never shown',
    (events) => {
      const h = liveQueue()
      sendAll(h, events)
      drain(h)
      for (const id of [...h.drained, ...h.signalled]) {
        expect(h.shown).not.toContain(id)
        expect(h.resolved.filter((r) => r.askId === id)).toEqual([{ askId: id, status: 'cancelled' }])
      }
    },
  )

  test.prop([fc.array(event, { maxLength: 25 })], { numRuns: 100 })(
    'batchCancelled is false whenever the queue is idle',
    (events) => {
      const h = liveQueue()
      const seen: boolean[] = []
      h.actor.subscribe((s) => {
        if (s.value === 'idle') seen.push(s.context.batchCancelled)
      })
      sendAll(h, events)
      expect(seen.every((b) => b === false)).toBe(true)
    },
  )
})

/**
 * The ask-queue machine (ADR-0032): questions shown one at a time in FIFO order, each ask resolved
 * exactly once, Cancel drains the batch, a signalled waiter is never shown, and with no UI every ask
 * is `unavailable`. Model-based paths from `xstate/graph` are replayed on a live actor whose `card`
 * actor is a real promise per ask, resolved by the test (and awaited: its onDone is the card's end),
 * with a recording `resolve`; properties run random sequences of asks, signals and outcomes.
 */
import { fc, test } from '@fast-check/vitest'
import { createActor, fromPromise, transition, type AnyTransitionDefinition, type SnapshotFrom } from 'xstate'
import { getShortestPaths, getSimplePaths } from 'xstate/graph'
import { describe, expect, it } from 'vitest'
import { askQueueMachine, type AskQueueEvent, type AskStatus, type CardOutcome } from '../../src/machines/ask-queue.machine.js'

/**
 * The shown card of `askId` ends: in the graph, the done event of the queue's invoked `card` actor
 * (its output the outcome; `askId` names the card for the titles, xstate ignores it); on a live actor,
 * that card's promise resolved with the outcome.
 */
type CardEnd = { type: 'xstate.done.actor.card'; output: CardOutcome; askId: string }
type Ev = AskQueueEvent | CardEnd
const CARD_DONE = 'xstate.done.actor.card'
const cardEnds = (askId: string, status: CardOutcome['status']): Ev => ({
  type: CARD_DONE,
  output: status === 'answered' ? { status, answer: { value: 'yes' } } : { status },
  askId,
})
const isCardEnd = (e: Ev): e is CardEnd => e.type === CARD_DONE
/** Lets a resolved card's promise reach the queue (its onDone). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve))
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
  /** Each shown card's resolver, by live ask id. */
  const cards = new Map<string, (outcome: CardOutcome) => void>()
  const machine = askQueueMachine.provide({
    actors: {
      card: fromPromise<CardOutcome, { askId: string }>(({ input }) => {
        shown.push(input.askId)
        log.push(`show ${input.askId}`)
        return new Promise<CardOutcome>((resolve) => cards.set(input.askId, resolve))
      }),
    },
    actions: {
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
  /** Sends an event; a card's end resolves that card's promise (if it is the one shown) and waits for its onDone. */
  const send = async (event: Ev) => {
    if (event.type === 'ASK') generation.set(event.askId, (generation.get(event.askId) ?? 0) + 1)
    const e = { ...event, askId: live(event.askId) }
    const snap = actor.getSnapshot()
    if (e.type === 'ASK') asked.push(e.askId)
    if (e.type === 'SIGNAL' && snap.context.waiting.some((w) => w.askId === e.askId)) signalled.add(e.askId)
    if (isCardEnd(e)) {
      const shownNow = snap.value === 'showing' && snap.context.current === e.askId
      if (shownNow && e.output.status === 'cancelled') for (const w of snap.context.waiting) drained.add(w.askId)
      if (shownNow) cards.get(e.askId)?.(e.output)
      await settle()
    } else actor.send(e)
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

/** Events offered in each state: a new ask (up to three in the queue), a signal for every ask in it, and each way the shown card can end. */
function eventsFor(snap: Snap): Ev[] {
  const inQueue = [snap.context.current, ...snap.context.waiting.map((w) => w.askId)].filter((x): x is string => !!x)
  const fresh = NAMES.find((n) => !inQueue.includes(n))
  const events: Ev[] = fresh ? [{ type: 'ASK', askId: fresh }] : []
  for (const askId of inQueue) events.push({ type: 'SIGNAL', askId })
  if (snap.context.current) for (const status of ['answered', 'skipped', 'cancelled'] as const) events.push(cardEnds(snap.context.current, status))
  return events
}

const describeEvent = (e: Ev) => (isCardEnd(e) ? `card ${e.askId} ${e.output.status}` : `${e.type} ${e.askId}`)

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

async function replay(path: Path) {
  const h = liveQueue()
  assertState(String(path.steps[0].state.value), h)
  for (const step of path.steps.slice(1)) {
    await h.send(step.event)
    assertState(String(step.state.value), h)
  }
  return h.taken
}

/** The transitions a sequence of events takes on a live actor (no assertions). */
async function takenBy(events: Ev[]) {
  const h = liveQueue()
  for (const e of events) await h.send(e)
  return h.taken
}

/**
 * Transition-covering paths: a shortest path to each state, extended by each event offered there,
 * kept when it takes a transition no earlier path took. Shortest and simple paths visit states; a
 * transition back to a visited state (a Cancel draining into `idle`) needs a path of its own.
 */
async function coveringPaths(shortest: Path[], covered: Set<string>): Promise<Path[]> {
  const out: Path[] = []
  for (const p of [...shortest].sort((a, b) => a.steps.length - b.steps.length)) {
    for (const event of eventsFor(p.state)) {
      const events = [...p.steps.slice(1).map((s) => s.event as Ev), event]
      const fresh = [...(await takenBy(events))].filter((k) => !covered.has(k))
      if (fresh.length === 0) continue
      for (const k of fresh) covered.add(k)
      const [state] = transition(askQueueMachine, p.state, event as AskQueueEvent)
      out.push({ state, steps: [...p.steps, { event: event as AskQueueEvent, state }], weight: p.weight + 1 })
    }
  }
  return out
}

const graphEvents = (s: Snap) => eventsFor(s) as AskQueueEvent[]
const shortest = getShortestPaths(askQueueMachine, { events: graphEvents })
// Simple paths through a queue of at most two, so the set stays small.
const simple = getSimplePaths(askQueueMachine, {
  events: (s: Snap) => graphEvents(s).filter((e) => e.type !== 'ASK' || e.askId !== 'a3'),
})
const covered = new Set<string>()
for (const p of [...shortest, ...simple]) for (const k of await takenBy(p.steps.slice(1).map((s) => s.event))) covered.add(k)
const covering = await coveringPaths(shortest, covered)

describe('ask-queue machine: every shortest path, replayed on a live actor', () => {
  for (const path of shortest) it(pathTitle(path), async () => void (await replay(path)))
})

describe('ask-queue machine: every simple path through a queue of two, replayed on a live actor', () => {
  for (const path of simple) it(pathTitle(path), async () => void (await replay(path)))
})

describe('ask-queue machine: a path for every transition the state paths miss, replayed on a live actor', () => {
  for (const path of covering) it(pathTitle(path), async () => void (await replay(path)))
})

describe('ask-queue machine: coverage of the model-based paths', () => {
  it('the traversed paths reach every state and take every transition the ask-queue machine defines', async () => {
    const taken = new Set<string>()
    for (const path of [...shortest, ...simple, ...covering]) for (const k of await replay(path)) taken.add(k)
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
  /** An ask, a signal, or a card's end (of the named ask: it ends only if it is the one shown). */
  const event: fc.Arbitrary<Ev> = fc.oneof(
    { weight: 3, arbitrary: name.map((askId) => ({ type: 'ASK' as const, askId })) },
    name.map((askId) => ({ type: 'SIGNAL' as const, askId })),
    fc.constantFrom<CardOutcome['status']>('answered', 'skipped', 'cancelled').chain((status) => name.map((askId) => cardEnds(askId, status))),
  )
  /** A fresh name per ASK while it is still queued: reusing a queued name is not a caller's move. */
  const sendAll = async (h: Harness, events: Ev[]) => {
    for (const e of events) {
      const snap = h.actor.getSnapshot()
      const inQueue = [snap.context.current, ...snap.context.waiting.map((w) => w.askId)]
      if (e.type === 'ASK' && inQueue.includes(h.live(e.askId))) continue
      await h.send(e)
      assertInvariants(h)
    }
  }
  /** Answer whatever is shown until the queue is idle. */
  const drain = async (h: Harness) => {
    for (let i = 0; i < 20 && h.actor.getSnapshot().value === 'showing'; i++) {
      const current = h.actor.getSnapshot().context.current!
      await h.send(cardEnds(current.slice(0, current.indexOf('#')), 'answered'))
      assertInvariants(h)
    }
  }

  test.prop([fc.array(event, { maxLength: 25 })], { numRuns: 150 })(
    'questions are shown one at a time in FIFO order and each ask is resolved exactly once',
    async (events) => {
      const h = liveQueue()
      await sendAll(h, events)
      await drain(h)
      expect(h.actor.getSnapshot().value).toBe('idle')
      expect(h.resolved.map((r) => r.askId).sort()).toEqual([...h.asked].sort())
    },
  )

  test.prop([fc.array(event, { maxLength: 25 })], { numRuns: 150 })(
    'after a Cancel every waiting ask resolves cancelled without being shown, and a signalled waiter is never shown',
    async (events) => {
      const h = liveQueue()
      await sendAll(h, events)
      await drain(h)
      for (const id of [...h.drained, ...h.signalled]) {
        expect(h.shown).not.toContain(id)
        expect(h.resolved.filter((r) => r.askId === id)).toEqual([{ askId: id, status: 'cancelled' }])
      }
    },
  )

  test.prop([fc.array(event, { maxLength: 25 })], { numRuns: 100 })(
    'batchCancelled is false whenever the queue is idle',
    async (events) => {
      const h = liveQueue()
      const seen: boolean[] = []
      h.actor.subscribe((s) => {
        if (s.value === 'idle') seen.push(s.context.batchCancelled)
      })
      await sendAll(h, events)
      expect(seen.every((b) => b === false)).toBe(true)
    },
  )
})

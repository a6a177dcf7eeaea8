/**
 * The dialog machine, proven two ways:
 * - model-based: every shortest and every simple path of `xstate/graph` is replayed on a live actor
 *   whose side effects are recording stubs, and each state's promise is checked where it is reached;
 *   a last test checks those paths took every transition the machine defines;
 * - property-based: random interleavings of answers (valid and not), cancels, timeouts and aborts.
 * The dialog keeps its own time (the extension's timeout is an `after` delay) on xstate's
 * SimulatedClock here, and listens to a real AbortSignal; the harness counts its listeners.
 */
import { fc, test } from '@fast-check/vitest'
import { createActor, sendTo, setup, SimulatedClock, type ActorRefFrom, type AnyTransitionDefinition } from 'xstate'
import { getShortestPaths, getSimplePaths } from 'xstate/graph'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { dialogMachine, MAX_TIMER_MS, type DialogEvent, type DialogInput } from '../../src/machines/dialog.machine.js'
import { stateNodesOf, transitionKey, transitionsOf } from '../../src/machines/diagram.js'
import type { DialogOutcome } from '../../src/schemas/index.js'

const spec = { method: 'select', title: 'Deploy?', options: ['yes', 'no'] } as const
const base: DialogInput = { id: 'd1', spec: { ...spec, options: [...spec.options] }, origin: { kind: 'extension', name: 'deploy' } }

/** The extension's timeout of a timed question, on the simulated clock. */
const TIMEOUT_MS = 5000

const VARIANTS: { name: string; input: DialogInput }[] = [
  { name: 'a question shown', input: base },
  { name: 'a question shown with a timeout', input: { ...base, timeoutMs: TIMEOUT_MS } },
  { name: 'a question whose signal was already aborted', input: { ...base, signal: AbortSignal.abort() } },
  { name: 'a question asked while the thread is stopping', input: { ...base, refused: true } },
  // pi's ctx.ui.custom(): answered by the component's done (DONE), by no payload
  { name: 'a terminal component shown', input: { ...base, spec: { method: 'terminal', cols: 80, rows: 24 } } },
]

/**
 * The timeout elapses: in the graph, the TIMEOUT the open question raised to itself with its delay;
 * on a live actor, the simulated clock moved on by the timeout.
 */
const EXPIRES: DialogEvent = { type: 'TIMEOUT' }

/** Valid and invalid answers, and every other way the wait can end. */
const EVENTS: DialogEvent[] = [
  { type: 'ANSWER', answer: { value: 'yes' } },
  { type: 'ANSWER', answer: { value: 'maybe' } },
  { type: 'ANSWER', answer: { confirmed: true } },
  { type: 'CANCEL' },
  EXPIRES,
  { type: 'ABORT' },
  { type: 'DONE' },
]

const OUTCOME: Record<string, DialogOutcome> = {
  CANCEL: 'cancelled',
  [EXPIRES.type]: 'timeout',
  ABORT: 'aborted',
}

/** Whether the event ends this question: a fitting answer (never a terminal's), DONE (only a terminal's), or any other ending. */
const answersTheQuestion = (e: DialogEvent, input: DialogInput = base) => {
  const terminal = input.spec.method === 'terminal'
  if (e.type === 'ANSWER') return !terminal && (e.answer as { value?: string }).value === 'yes'
  return e.type === 'DONE' ? terminal : true
}
const answeredBy = (e: DialogEvent) => e.type === 'ANSWER' || e.type === 'DONE'

type Entry = { action: string; outcome?: DialogOutcome }

/** A live dialog whose provided actions record what they did, in order, and the transitions it took. */
function liveDialog(given: DialogInput) {
  const log: Entry[] = []
  const taken = new Set<string>()
  const clock = new SimulatedClock()
  // the extension's signal (aborted already if the variant's is), its listeners counted
  const controller = new AbortController()
  if (given.signal?.aborted) controller.abort()
  const { signal } = controller
  let listening = 0
  const add = signal.addEventListener.bind(signal)
  const remove = signal.removeEventListener.bind(signal)
  signal.addEventListener = ((...args: Parameters<typeof add>) => (listening++, add(...args))) as typeof add
  signal.removeEventListener = ((...args: Parameters<typeof remove>) => (listening--, remove(...args))) as typeof remove
  const input = { ...given, signal }
  const rec =
    (action: string) =>
    ({ context }: { context: { outcome?: DialogOutcome } }) =>
      log.push(action === 'recordSettle' || action === 'resolveExtension' ? { action, outcome: context.outcome } : { action })
  const machine = dialogMachine.provide({
    actions: {
      showRequest: rec('showRequest'),
      recordSettle: rec('recordSettle'),
      resolveExtension: rec('resolveExtension'),
      resolveWithdrawn: rec('resolveWithdrawn'),
    },
  })
  // The dialog runs as the child of a stand-in for the thread, which hears its signal reports
  // and answers each with ABORT, as the thread does for an open question.
  const reports: unknown[] = []
  const parent = setup({ actors: { dialog: machine } }).createMachine({
    id: 'harness',
    invoke: { id: 'dialog', src: 'dialog', input },
    on: {
      'DIALOG.SIGNAL': {
        actions: [({ event }) => void reports.push(event), sendTo('dialog', { type: 'ABORT' })],
      },
    },
  })
  const root = createActor(parent, {
    clock,
    inspect: (ev) => {
      if (ev.type === '@xstate.microstep')
        for (const t of (ev as unknown as { _transitions: AnyTransitionDefinition[] })._transitions) taken.add(transitionKey(t))
    },
  })
  root.start()
  const actor = root.getSnapshot().children.dialog as ActorRefFrom<typeof machine>
  /** Sends an event; the timeout elapsing is the clock moving on by it. */
  const send = (event: DialogEvent) => (event.type === EXPIRES.type ? clock.increment(TIMEOUT_MS) : actor.send(event))
  const timers = () => Object.keys(actor.system.getSnapshot()._scheduledEvents).length
  return { actor, send, log, taken, clock, controller, reports, listening: () => listening, timers }
}

const count = (log: Entry[], action: string) => log.filter((e) => e.action === action).length
const indexOf = (log: Entry[], action: string) => log.findIndex((e) => e.action === action)

const stateName = (value: unknown) => String(value)

/** What must hold in each state, read off the live actor and its recorded side effects. */
function assertState(state: string, dialog: ReturnType<typeof liveDialog>, lastEvent?: DialogEvent) {
  const { actor, log } = dialog
  const snap = actor.getSnapshot()
  expect(stateName(snap.value)).toBe(state)
  switch (state) {
    case 'open':
      // shown once, nothing finished yet; listening to the signal, and timed only if it expires
      expect(log.map((e) => e.action)).toEqual(['showRequest'])
      expect(snap.status).toBe('active')
      expect(dialog.listening()).toBe(1)
      expect(dialog.timers()).toBe(snap.context.expiresIn !== undefined ? 1 : 0)
      break
    case 'settled': {
      expect(snap.status).toBe('done')
      expect(count(log, 'showRequest')).toBe(1)
      expect(count(log, 'recordSettle')).toBe(1)
      expect(count(log, 'resolveExtension')).toBe(1)
      expect(count(log, 'resolveWithdrawn')).toBe(0)
      // no listener and no timer outlives the question
      expect(dialog.listening()).toBe(0)
      expect(dialog.timers()).toBe(0)
      expect(indexOf(log, 'recordSettle')).toBeLessThan(indexOf(log, 'resolveExtension'))
      const outcome = answeredBy(lastEvent!) ? 'answered' : OUTCOME[lastEvent!.type]
      expect(log.find((e) => e.action === 'recordSettle')?.outcome).toBe(outcome)
      expect(log.find((e) => e.action === 'resolveExtension')?.outcome).toBe(outcome)
      expect(snap.output).toEqual(
        lastEvent?.type === 'ANSWER' ? { outcome, answer: (lastEvent as { answer: unknown }).answer } : { outcome, answer: undefined },
      )
      break
    }
    case 'withdrawn':
      // never shown, never settled: only the cancel value
      expect(snap.status).toBe('done')
      expect(log).toEqual([{ action: 'resolveWithdrawn' }])
      expect(dialog.listening()).toBe(0)
      expect(dialog.timers()).toBe(0)
      break
    default:
      throw new Error(`no assertion for state ${state}`)
  }
}

const describeEvent = (e: DialogEvent) =>
  e.type === 'ANSWER'
    ? `ANSWER ${JSON.stringify(e.answer)}${answersTheQuestion(e) ? '' : ' (refused)'}`
    : e.type === EXPIRES.type
      ? 'the timeout elapses'
      : e.type

type Path = ReturnType<typeof getShortestPaths<typeof dialogMachine>>[number]

/** What each state promises a caller, as the path titles say it. */
const PROMISE: Record<string, string> = {
  open: 'shown once and still waiting, its timer pending only if it has a timeout',
  settled: 'settled exactly once, recorded before the extension is resolved',
  withdrawn: 'resolved with its cancel value, never shown and never settled',
}

function pathTitle(variant: string, path: Path): string {
  const events = path.steps.slice(1).map((s) => describeEvent(s.event))
  const state = stateName(path.state.value)
  return `${variant}: ${events.length ? events.join(' → ') : '(no event)'} ⇒ ${state}: ${PROMISE[state]}`
}

/** Replays a path on a live actor, checking the state's promise after every step; returns the taken transitions. */
function replay(input: DialogInput, path: Path) {
  const dialog = liveDialog(input)
  assertState(stateName(path.steps[0].state.value), dialog)
  for (const step of path.steps.slice(1)) {
    const before = dialog.log.length
    const wasFinal = dialog.actor.getSnapshot().status === 'done'
    dialog.send(step.event)
    if (wasFinal) expect(dialog.log.length).toBe(before)
    assertState(stateName(step.state.value), dialog, step.event)
  }
  // nothing happens after a final state
  if (dialog.actor.getSnapshot().status === 'done') {
    const after = dialog.log.length
    for (const e of EVENTS) dialog.send(e)
    expect(dialog.log.length).toBe(after)
  }
  return dialog.taken
}

const plans = VARIANTS.map(({ name, input }) => ({
  name,
  input,
  shortest: getShortestPaths(dialogMachine, { input, events: EVENTS }),
  simple: getSimplePaths(dialogMachine, { input, events: EVENTS }),
}))

// These tests send events after a dialog is final on purpose (a later path must be a no-op);
// xstate's dev build warns about each one, which would bury the run's output.
beforeEach(() => void vi.spyOn(console, 'warn').mockImplementation(() => {}))
afterEach(() => vi.restoreAllMocks())

describe('dialog machine: every shortest path, replayed on a live actor', () => {
  for (const { name, input, shortest } of plans)
    for (const path of shortest) it(pathTitle(name, path), () => void replay(input, path))
})

describe('dialog machine: every simple path, replayed on a live actor', () => {
  for (const { name, input, simple } of plans)
    for (const path of simple) it(pathTitle(name, path), () => void replay(input, path))
})

describe('dialog machine: coverage of the model-based paths', () => {
  it('the traversed paths reach every state and take every transition the dialog machine defines', () => {
    const taken = new Set<string>()
    const reached = new Set<string>()
    for (const { input, shortest, simple } of plans)
      for (const path of [...shortest, ...simple]) {
        for (const key of replay(input, path)) taken.add(key)
        for (const s of path.steps) for (const n of s.state._nodes) reached.add(n.id)
      }
    // A refused answer, and a signal report, leave the dialog exactly as it was (the thread's ABORT
    // that follows a report is a path of its own), so no generated path takes them: walk each once.
    const refused = liveDialog(base)
    refused.actor.send({ type: 'ANSWER', answer: { value: 'maybe' } })
    for (const key of refused.taken) taken.add(key)
    const signalled = liveDialog(base)
    signalled.controller.abort()
    for (const key of signalled.taken) taken.add(key)
    // a transient state (left by an eventless transition) is reached when one of its transitions was taken
    for (const key of taken) reached.add(key.split('|')[0])
    const missingStates = stateNodesOf(dialogMachine)
      .map((n) => n.id)
      .filter((s) => !reached.has(s))
    const missing = transitionsOf(dialogMachine)
      .map((t) => t.key)
      .filter((k) => !taken.has(k))
    expect({ missingStates, missingTransitions: missing }).toEqual({ missingStates: [], missingTransitions: [] })
  })
})

describe('dialog machine: it decides the answers it is given', () => {
  it('an answer that fits settles the question and is replied answered; one that does not is replied refused with the reason and leaves it open', () => {
    const dialog = liveDialog(base)
    const replies: unknown[] = []
    dialog.actor.on('*', (e) => replies.push(e))
    dialog.actor.send({ type: 'ANSWER', answer: { value: 'maybe' }, replyTo: 'r1' })
    dialog.actor.send({ type: 'ANSWER', answer: { value: 5 }, replyTo: 'r2' })
    expect(dialog.actor.getSnapshot().matches('open')).toBe(true)
    dialog.actor.send({ type: 'ANSWER', answer: { value: 'yes' }, replyTo: 'r3' })
    expect(replies).toEqual([
      { type: 'dialog.refused', replyTo: 'r1', refusal: "'maybe' is not one of the offered options" },
      { type: 'dialog.refused', replyTo: 'r2', refusal: expect.stringMatching(/not a dialog answer/) },
      { type: 'dialog.answered', replyTo: 'r3' },
    ])
    expect(dialog.log.filter((e) => e.action === 'recordSettle')).toEqual([{ action: 'recordSettle', outcome: 'answered' }])
  })
})

describe('dialog machine: a terminal component', () => {
  it('no payload answers a terminal component (each is refused and it stays open); its done (DONE) settles it answered; DONE means nothing to a dialog', () => {
    const terminal = liveDialog({ ...base, spec: { method: 'terminal', cols: 80, rows: 24 } })
    const replies: unknown[] = []
    terminal.actor.on('*', (e) => replies.push(e))
    terminal.actor.send({ type: 'ANSWER', answer: { value: 'yes' }, replyTo: 'r1' })
    expect(replies).toEqual([{ type: 'dialog.refused', replyTo: 'r1', refusal: expect.stringMatching(/answered by its own keys/) }])
    expect(terminal.actor.getSnapshot().value).toBe('open')
    terminal.actor.send({ type: 'DONE' })
    expect(terminal.actor.getSnapshot().output).toEqual({ outcome: 'answered', answer: undefined })
    const dialog = liveDialog(base)
    dialog.actor.send({ type: 'DONE' })
    expect(dialog.actor.getSnapshot().value).toBe('open')
  })
})

describe('dialog machine: its own time and signal', () => {
  it('the timeout fires on its clock timeoutMs after the question was shown, not a moment before, and settles it timeout', () => {
    const dialog = liveDialog({ ...base, timeoutMs: TIMEOUT_MS })
    dialog.clock.increment(TIMEOUT_MS - 1)
    expect(dialog.actor.getSnapshot().value).toBe('open')
    dialog.clock.increment(1)
    expect(dialog.actor.getSnapshot().output).toEqual({ outcome: 'timeout', answer: undefined })
    expect(dialog.log.map((e) => e.action)).toEqual(['showRequest', 'recordSettle', 'resolveExtension'])
  })

  it('no timeout, 0, or one beyond what a timer can hold means no timeout: the question waits with no timer', () => {
    for (const timeoutMs of [undefined, 0, -1, MAX_TIMER_MS + 1]) {
      const dialog = liveDialog({ ...base, timeoutMs })
      expect(dialog.actor.getSnapshot().value).toBe('open')
      expect(dialog.timers()).toBe(0)
    }
    expect(liveDialog({ ...base, timeoutMs: MAX_TIMER_MS }).timers()).toBe(1)
  })

  it("the extension's signal, aborted while the question is open, is reported to the thread, whose ABORT settles it aborted; no listener outlives the question", () => {
    const dialog = liveDialog({ ...base, timeoutMs: TIMEOUT_MS })
    expect(dialog.listening()).toBe(1)
    dialog.controller.abort()
    expect(dialog.reports).toEqual([{ type: 'DIALOG.SIGNAL', dialogId: 'd1' }])
    expect(dialog.actor.getSnapshot().output).toEqual({ outcome: 'aborted', answer: undefined })
    expect(dialog.listening()).toBe(0)
    expect(dialog.timers()).toBe(0)
    const answered = liveDialog(base)
    answered.actor.send({ type: 'ANSWER', answer: { value: 'yes' } })
    expect(answered.listening()).toBe(0)
  })
})

describe('dialog machine: properties over random event sequences', () => {
  const events = fc.array(fc.constantFrom(...EVENTS), { maxLength: 12 })
  const inputs = fc.constantFrom(...VARIANTS.map((v) => v.input))

  test.prop([inputs, events], { numRuns: 200 })(
    'a dialog finishes exactly once, its settle precedes its resolution, and the first valid ending wins',
    (input, sequence) => {
      const dialog = liveDialog(input)
      for (const e of sequence) dialog.send(e)
      const { log } = dialog
      if (input.signal?.aborted || input.refused) {
        expect(log).toEqual([{ action: 'resolveWithdrawn' }])
        return
      }
      // the timeout ends only a question that has one
      const first = sequence.find((e) => answersTheQuestion(e, input) && (e.type !== EXPIRES.type || input.timeoutMs !== undefined))
      if (first === undefined) {
        // invalid answers leave it open, and nothing is settled
        expect(dialog.actor.getSnapshot().matches('open')).toBe(true)
        expect(count(log, 'recordSettle') + count(log, 'resolveExtension')).toBe(0)
        return
      }
      const outcome = answeredBy(first) ? 'answered' : OUTCOME[first.type]
      expect(log.filter((e) => e.action === 'recordSettle')).toEqual([{ action: 'recordSettle', outcome }])
      expect(log.filter((e) => e.action === 'resolveExtension')).toEqual([{ action: 'resolveExtension', outcome }])
      expect(indexOf(log, 'recordSettle')).toBeLessThan(indexOf(log, 'resolveExtension'))
    },
  )

  test.prop([inputs, events, events], { numRuns: 150 })(
    'no provided action fires after the dialog is final',
    (input, head, tail) => {
      const dialog = liveDialog(input)
      for (const e of head) dialog.send(e)
      if (dialog.actor.getSnapshot().status !== 'done') return
      const before = dialog.log.length
      for (const e of tail) dialog.send(e)
      expect(dialog.log.length).toBe(before)
    },
  )
})

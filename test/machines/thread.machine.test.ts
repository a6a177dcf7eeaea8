/**
 * The thread machine, proven two ways.
 *
 * Model-based: `xstate/graph` walks the machine (shortest paths to every abstract state, simple paths
 * through a stop, and one path for each transition those miss) and every path is replayed on a live
 * actor whose side effects are recording stubs — the thread's own and its real dialog children's —
 * checking after each step what must hold in the state reached. The walk sees the dialog children
 * too: a question that settles (answered, cancelled, refused) hands its parent the done event at
 * once, as a live child does, so `retiring` and `disposing` are left when the last dialog settles.
 *
 * Property-based: random sequences of requests, runtime events and answers against a live actor with
 * a fake runtime queue (its clearQueue actor answers QUEUE_CLEARED as it starts, or QUEUE_CLEAR_FAILED
 * when the runtime's clearQueue throws, as another runtime's might).
 */
import { fc, test } from '@fast-check/vitest'
import {
  createActor,
  fromCallback,
  SimulatedClock,
  initialTransition,
  transition,
  type AnyTransitionDefinition,
  type SnapshotFrom,
} from 'xstate'
import { getShortestPaths, getSimplePaths } from 'xstate/graph'
import { describe, expect, it, vi } from 'vitest'
import { dialogMachine, MAX_TIMER_MS, type DialogEvent, type DialogInput } from '../../src/machines/dialog.machine.js'
import {
  threadMachine,
  type PromptRequest,
  type ThreadEmitted,
  type ThreadEvent,
  type WaitingPrompt,
} from '../../src/machines/thread.machine.js'
import { transitionKey, transitionsOf } from '../../src/machines/diagram.js'

type Snap = SnapshotFrom<typeof threadMachine>
type DialogSnap = SnapshotFrom<typeof dialogMachine>

const spec = { method: 'select' as const, title: 'Deploy?', options: ['yes', 'no'] }
const origin = { kind: 'extension' as const, name: 'deploy' }

// ---------------------------------------------------------------------------------------------
// The live harness: recording stubs for every provided action, the thread's and its dialogs'.

interface Entry {
  who: string
  action: string
  run: number
  params?: unknown
  outcome?: string
}

const THREAD_ACTIONS = [
  'publishStatus',
  'startRun',
  'adoptRun',
  'queuePrompt',
  'recordError',
  'tellRuntimeAbort',
  'recordSettled',
  'disposeRuntime',
  'rejectPrompt',
] as const
const DIALOG_ACTIONS = ['showRequest', 'recordSettle', 'resolveExtension', 'resolveWithdrawn'] as const

/** The event xstate raises for a state's `after` delay, read off the machine. */
function afterEventOf(machine: Parameters<typeof transitionsOf>[0], state: string): string {
  return transitionsOf(machine).find((t) => t.source === state && t.event.startsWith('xstate.after.'))!.event
}

/** The thread's idle release, on the harness's simulated clock. */
const IDLE_MS = 1000
/**
 * `idleMs` elapses: in the graph, the idle state's own `after` event (xstate names it after the delay
 * and the state); on a live actor, the simulated clock moved on by IDLE_MS.
 */
const IDLE_ELAPSES = { type: afterEventOf(threadMachine, 'thread.idle') } as unknown as ThreadEvent
const INPUT = { threadId: 't1', idleMs: IDLE_MS }

/**
 * Each question has a timeout (the longest a timer holds, so the idle clock never reaches it) and a
 * signal. The dialog tests prove both on the dialog's own clock and signal; here they are two more
 * ways a question ends while the thread does whatever it does:
 * - `EXPIRE d`: that question's timeout elapses (the TIMEOUT its timer raises, delivered to that one dialog);
 * - `SIGNAL d`: the extension aborts that question's signal (on a live actor, its AbortController);
 *   the dialog reports it to the thread, so in the graph it is the thread's `DIALOG.SIGNAL`.
 */
const DIALOG_TIMEOUT_MS = MAX_TIMER_MS
type DialogEnd = { type: 'test.EXPIRE' | 'test.SIGNAL'; dialogId: string }
const expire = (dialogId: string) => ({ type: 'test.EXPIRE', dialogId }) as unknown as ThreadEvent
const signal = (dialogId: string) => ({ type: 'test.SIGNAL', dialogId }) as unknown as ThreadEvent
/** The event as a question's own ending, when it is one. */
const dialogEnd = (e: { type: string }) => (e.type === 'test.EXPIRE' || e.type === 'test.SIGNAL' ? (e as unknown as DialogEnd) : undefined)
/** What the dialog itself receives when its timeout elapses. */
const EXPIRES: DialogEvent = { type: 'TIMEOUT' }

interface Options {
  /** How the fake runtime's clearQueue answers, at once (it throws: `failed`); without it the answer is left to the test. */
  clear?: () => 'cleared' | 'failed'
  /** A request that arrives re-entrantly, sent synchronously from inside the named provided action (once). */
  reentrant?: { action: (typeof THREAD_ACTIONS)[number]; event: ThreadEvent }
}

function liveThread(opts: Options = {}) {
  const log: Entry[] = []
  const emitted: ThreadEmitted[] = []
  const taken = new Set<string>()
  /** The fake runtime's queue, as queuePrompt filled it. */
  const queue = { steering: [] as WaitingPrompt[], followUp: [] as WaitingPrompt[] }
  const ids = new Map<string, number>()
  let run = 0
  let actorRef: { send: (e: ThreadEvent) => void } | undefined
  const threadActions = Object.fromEntries(
    THREAD_ACTIONS.map((name) => [
      name,
      ({ context }: { context: { run: number } }, params: unknown) => {
        run = context.run
        log.push({ who: 'thread', action: name, run: context.run, params })
        if (name === 'queuePrompt') {
          const { prompt } = params as { prompt: PromptRequest }
          queue[prompt.deliverAs === 'steer' ? 'steering' : 'followUp'].push({ messageId: prompt.messageId, text: prompt.text })
        }
        if (opts.reentrant?.action === name) {
          const { event } = opts.reentrant
          opts.reentrant = undefined
          actorRef!.send(event)
        }
      },
    ]),
  )
  const dialogActions = Object.fromEntries(
    DIALOG_ACTIONS.map((name) => [
      name,
      ({ context }: { context: DialogInput & { outcome?: string } }) =>
        log.push({ who: context.id, action: name, run, outcome: context.outcome }),
    ]),
  )
  // The fake runtime's queue clearer, logged like an action: it answers at once, or leaves the answer to the test.
  // A stop invokes it (`clearQueue`); a take-back spawns it as `takeQueue`, and the log names which.
  const clearQueue = fromCallback<ThreadEvent, { run: number }>(({ input, sendBack, self }) => {
    log.push({ who: 'thread', action: self.id === 'takeQueue' ? 'takeQueue' : 'clearQueue', run: input.run })
    if (!opts.clear) return
    const { steering, followUp } = queue
    queue.steering = []
    queue.followUp = []
    // a runtime whose clearQueue threw: what it held is lost to the host
    if (opts.clear() === 'failed') return sendBack({ type: 'QUEUE_CLEAR_FAILED', message: 'the runtime threw' })
    sendBack({ type: 'QUEUE_CLEARED', steering, followUp })
  })
  const machine = threadMachine.provide({
    actions: threadActions as never,
    actors: { dialog: dialogMachine.provide({ actions: dialogActions as never }), clearQueue },
  })
  const clock = new SimulatedClock()
  const actor = createActor(machine, {
    input: INPUT,
    clock,
    inspect: (ev) => {
      if (ev.type === '@xstate.microstep')
        for (const t of (ev as unknown as { _transitions: AnyTransitionDefinition[] })._transitions) taken.add(transitionKey(t))
    },
  })
  actorRef = actor
  for (const type of ['prompt.admitted', 'prompt.refused', 'abort.answered', 'abort.refused', 'take.answered', 'take.refused'] as const)
    actor.on(type, (e) => {
      emitted.push(e)
      log.push({ who: 'emit', action: e.type, run, params: e })
    })
  actor.start()
  const sent: ThreadEvent[] = []
  /** Each question's signal, by dialog id (the latest question of that id). */
  const signals = new Map<string, AbortController>()
  /** Sends an event; a PROMPT gets a unique message id (`m-steer#3`) so replies are checked per prompt. */
  const send = (event: ThreadEvent) => {
    let e = event
    if (e.type === 'PROMPT') {
      const n = (ids.get(e.messageId) ?? 0) + 1
      ids.set(e.messageId, n)
      e = { ...e, messageId: `${e.messageId}#${n}` }
    }
    if (e.type === 'ASK') {
      const controller = new AbortController()
      signals.set(e.dialogId, controller)
      e = { ...e, signal: controller.signal }
    }
    sent.push(e)
    log.push({ who: 'send', action: e.type, run: actor.getSnapshot().context.run, params: e })
    const end = dialogEnd(e)
    if (e.type === IDLE_ELAPSES.type) clock.increment(IDLE_MS)
    else if (end?.type === 'test.SIGNAL') signals.get(end.dialogId)?.abort()
    else if (end) actor.getSnapshot().children[end.dialogId]?.send(EXPIRES as never)
    else actor.send(e)
  }
  /** The idle release's timers pending on the clock (the machine's own `after`). */
  const idleTimers = () =>
    Object.values(actor.system.getSnapshot()._scheduledEvents).filter((x) => x.event.type === IDLE_ELAPSES.type).length
  return { actor, send, log, emitted, taken, sent, queue, idleTimers }
}
type Harness = ReturnType<typeof liveThread>

const thread = (h: Harness, action: string) => h.log.filter((e) => e.who === 'thread' && e.action === action)
const lastIndex = (h: Harness, pred: (e: Entry) => boolean) => h.log.findLastIndex(pred)
const isDialog = (e: Entry) => e.who !== 'thread' && e.who !== 'emit' && e.who !== 'send'

// ---------------------------------------------------------------------------------------------
// What must hold: after every step, and in each state.

function assertInvariants(h: Harness) {
  // the runtime is told to abort at most once per run, each time right after its queue was cleared
  const tells = thread(h, 'tellRuntimeAbort').map((e) => e.run)
  expect(new Set(tells).size).toBe(tells.length)
  for (const run of tells) {
    const clear = h.log.findIndex((e) => e.action === 'clearQueue' && e.run === run)
    const tell = h.log.findIndex((e) => e.action === 'tellRuntimeAbort' && e.run === run)
    expect(clear).toBeGreaterThanOrEqual(0)
    expect(clear).toBeLessThan(tell)
  }
  // every dialog: settled at most once, and its settle precedes its resolution
  const dialogs = new Set(h.log.filter(isDialog).map((e) => e.who))
  for (const id of dialogs) {
    const mine = h.log.filter((e) => e.who === id).map((e) => e.action)
    expect(mine.filter((a) => a === 'recordSettle').length).toBeLessThanOrEqual(1)
    expect(mine.filter((a) => a === 'resolveExtension').length).toBe(mine.filter((a) => a === 'recordSettle').length)
    if (mine.includes('recordSettle')) expect(mine.indexOf('recordSettle')).toBeLessThan(mine.indexOf('resolveExtension'))
  }
  // every prompt is answered at most once
  const replies = h.emitted.filter((e) => e.type === 'prompt.admitted' || e.type === 'prompt.refused') as { messageId: string }[]
  expect(new Set(replies.map((r) => r.messageId)).size).toBe(replies.length)
}

/** Dialogs shown and not yet settled, per the log. */
function openDialogs(h: Harness, upTo = h.log.length): string[] {
  const slice = h.log.slice(0, upTo)
  const shown = slice.filter((e) => e.action === 'showRequest').map((e) => e.who)
  return shown.filter((id) => !slice.some((e) => e.who === id && e.action === 'recordSettle'))
}

function assertState(expected: Snap['value'], h: Harness) {
  assertInvariants(h)
  const snap = h.actor.getSnapshot()
  expect(snap.value).toEqual(expected)
  const status = thread(h, 'publishStatus').at(-1)?.params
  const armed = h.idleTimers()
  const state = typeof expected === 'string' ? expected : `aborting.${(expected as { aborting: string }).aborting}`
  switch (state) {
    case 'cold':
      // not live: no timer, no open question, and (after going cold) the runtime was released
      expect(armed).toBe(0)
      expect(snap.context.dialogs).toEqual([])
      if (status !== undefined) expect(status).toEqual({ live: false, busy: false, run: snap.context.run })
      break
    case 'idle':
      expect(status).toEqual({ live: true, busy: false, run: snap.context.run })
      expect(armed).toBe(1)
      break
    case 'running': {
      expect(status).toEqual({ live: true, busy: true, run: snap.context.run })
      expect(armed).toBe(0)
      // a take-back never stops the run: the runtime was not told to abort it
      expect(thread(h, 'tellRuntimeAbort').filter((e) => e.run === snap.context.run)).toEqual([])
      // every take-back asked and no longer being carried out has had its one reply
      const takes = h.log.filter((e) => e.who === 'send' && e.action === 'TAKE_QUEUE').length
      const takeReplies = h.emitted.filter((e) => e.type === 'take.answered' || e.type === 'take.refused').length
      expect(takeReplies).toBe(takes - (snap.context.takeReplyTo !== undefined ? 1 : 0))
      // the runtime was told this run's number: a prompt started it, or it started one of its own (adopted)
      const told = h.log.filter((x) => x.who === 'thread' && (x.action === 'startRun' || x.action === 'adoptRun')).at(-1)
      expect((told?.params as { run: number }).run).toBe(snap.context.run)
      break
    }
    case 'aborting.clearing': {
      // the queue is being cleared; the runtime has not been told yet
      const clears = thread(h, 'clearQueue').filter((e) => e.run === snap.context.run)
      expect(clears.length).toBe(1)
      expect(thread(h, 'tellRuntimeAbort').filter((e) => e.run === snap.context.run)).toEqual([])
      expect(status).toMatchObject({ live: true, busy: true })
      break
    }
    case 'aborting.stopping': {
      // clearQueue, then tellRuntimeAbort, then every dialog open at the stop settles `aborted`, each once
      const run = snap.context.run
      const clear = h.log.findIndex((e) => e.action === 'clearQueue' && e.run === run)
      const tell = h.log.findIndex((e) => e.action === 'tellRuntimeAbort' && e.run === run)
      expect(thread(h, 'clearQueue').filter((e) => e.run === run).length).toBe(1)
      expect(thread(h, 'tellRuntimeAbort').filter((e) => e.run === run).length).toBe(1)
      expect(clear).toBeLessThan(tell)
      for (const id of openDialogs(h, tell)) {
        const settles = h.log.flatMap((e, i) => (e.who === id && e.action === 'recordSettle' ? [{ i, e }] : []))
        expect(settles.length).toBe(1)
        expect(settles[0].i).toBeGreaterThan(tell)
        expect(settles[0].e.outcome).toBe('aborted')
      }
      // questions asked since are refused: never shown, resolved with their cancel value
      expect(snap.context.dialogs).toEqual([])
      expect(openDialogs(h)).toEqual([])
      // the stop was answered; a clear that failed restored nothing and said so before the runtime was told
      const answer = h.log.slice(clear).find((e) => e.action === 'abort.answered')
      expect(answer).toBeDefined()
      const failed = h.log.slice(clear, tell).find((e) => e.action === 'recordError')
      if (failed) expect((answer!.params as { restored: unknown[] }).restored).toEqual([])
      break
    }
    case 'retiring':
    case 'disposing':
      // transient while a dialog settles; a synchronous dialog never leaves the thread here
      throw new Error(`the thread rested in ${state}`)
    case 'disposed': {
      expect(snap.status).toBe('done')
      expect(thread(h, 'disposeRuntime').length).toBeGreaterThanOrEqual(1)
      expect(status).toEqual({ live: false, busy: false, run: snap.context.run })
      // every question ever shown has settled, exactly once
      expect(openDialogs(h)).toEqual([])
      // the last thing the thread does is say it is gone
      expect(h.log.filter((e) => e.who !== 'send').at(-1)).toMatchObject({ who: 'thread', action: 'publishStatus' })
      break
    }
    default:
      throw new Error(`no assertion for state ${state}`)
  }
}

// ---------------------------------------------------------------------------------------------
// The walk: the thread machine with its dialog children simulated by the pure dialog machine.

const hidden = new WeakMap<object, Map<string, DialogSnap>>()

/** One thread step plus the done events of the dialogs it settles, as a live actor processes them. */
function step(snap: Snap, event: ThreadEvent): [Snap, unknown[]] {
  const dialogs = new Map(hidden.get(snap) ?? [])
  const queue: ThreadEvent[] = []
  let [next, actions]: [Snap, unknown[]] = [snap, []]
  const end = dialogEnd(event)
  if (end?.type === 'test.EXPIRE') {
    // one question's own timeout: its dialog moves, and the thread hears that it ended
    const child = dialogs.get(end.dialogId)
    if (child && child.status !== 'done') {
      const [after] = transition(dialogMachine, child, EXPIRES)
      dialogs.set(end.dialogId, after)
      if (after.status === 'done') queue.push(doneEvent(end.dialogId))
    }
  } else if (end) [next, actions] = transition(threadMachine, snap, { type: 'DIALOG.SIGNAL', dialogId: end.dialogId })
  else [next, actions] = transition(threadMachine, snap, event)
  const all: unknown[] = [...actions]
  const visit = (list: unknown[]) => {
    for (const a of list as { type: string; params?: Record<string, unknown> }[]) {
      if (a.type === 'xstate.spawnChild' && a.params?.src === 'dialog') {
        const [child] = initialTransition(dialogMachine, a.params.input as DialogInput)
        dialogs.set(a.params.id as string, child)
        if (child.status === 'done') queue.push(doneEvent(a.params.id as string))
      }
      if (a.type === 'xstate.sendTo') {
        const to = a.params?.to as string | { id: string }
        const id = typeof to === 'string' ? to : to?.id
        const child = dialogs.get(id)
        if (child && child.status !== 'done') {
          const [after] = transition(dialogMachine, child, a.params!.event as never)
          dialogs.set(id, after)
          if (after.status === 'done') queue.push(doneEvent(id))
        }
      }
    }
  }
  visit(actions)
  while (queue.length && next.status !== 'done') {
    ;[next, actions] = transition(threadMachine, next, queue.shift()!)
    all.push(...actions)
    visit(actions)
  }
  hidden.set(next, dialogs)
  return [next, all]
}

const doneEvent = (id: string) => ({ type: `xstate.done.actor.${id}`, actorId: id, output: {} }) as unknown as ThreadEvent

const model = Object.create(threadMachine) as typeof threadMachine
;(model as { transition: unknown }).transition = (snap: Snap, event: ThreadEvent) => step(snap, event)[0]

const P = (deliverAs: 'steer' | 'followUp', admission: 'enqueue' | 'reject' = 'enqueue', run?: number): ThreadEvent => ({
  type: 'PROMPT',
  messageId: `m-${deliverAs}-${admission}${run === undefined ? '' : `-run${run}`}`,
  text: `${deliverAs} text`,
  admission,
  deliverAs,
  ...(run === undefined ? {} : { run }),
})

const DIALOG_NAMES = ['d1', 'd2']

function eventsFor(snap: Snap): ThreadEvent[] {
  const c = snap.context
  const events: ThreadEvent[] = [{ type: 'LIVE' }]
  // A steer naming the run the tab shows; one naming a run that is not current (a tab that fell behind).
  if (!(snap.matches('aborting') && c.pending.length >= 1)) events.push(P('steer'), P('followUp'), P('steer', 'enqueue', c.run))
  events.push(
    P('followUp', 'reject'),
    P('followUp', 'enqueue', c.run + 1),
    { type: 'ABORT' },
    { type: 'ABORT', run: c.run },
    { type: 'ABORT', run: c.run + 1 },
    { type: 'TAKE_QUEUE' },
    { type: 'TAKE_QUEUE', run: c.run + 1 },
    {
      type: 'QUEUE_CLEARED',
      steering: [
        { messageId: 's1', text: 's1' },
        { messageId: 's2', text: 's2' },
      ],
      followUp: [{ messageId: 'f1', text: 'f1' }],
    },
    { type: 'QUEUE_CLEAR_FAILED', message: 'the runtime threw' },
    { type: 'RUN_STARTED' },
    { type: 'SETTLED', aborted: false, unclaimed: [] },
    { type: 'SETTLED', aborted: true, unclaimed: [{ messageId: 'u1', text: 'unclaimed' }] },
    IDLE_ELAPSES,
    { type: 'DISPOSE', reason: 'deleted', dialogOutcome: 'cancelled' },
    { type: 'DISPOSE', reason: 'shutdown', dialogOutcome: 'aborted' },
    { type: 'DIALOG.CANCEL', dialogId: 'unknown' },
    // A turn for the ask-queue (spawned at the first, then only forwarded to) and its tool call's abort.
    { type: 'TURN', askId: 'a1' },
    { type: 'TURN.SIGNAL', askId: 'a1' },
  )
  const free = DIALOG_NAMES.find((n) => !c.dialogs.includes(n))
  if (free) events.push({ type: 'ASK', dialogId: free, spec, origin, timeoutMs: DIALOG_TIMEOUT_MS })
  const [first] = c.dialogs
  if (first)
    events.push(
      { type: 'DIALOG.ANSWER', dialogId: first, answer: { value: 'yes' } },
      { type: 'DIALOG.ANSWER', dialogId: first, answer: { value: 'not offered' } },
      { type: 'DIALOG.CANCEL', dialogId: first },
      expire(first),
      signal(first),
    )
  return events
}

const serializeState = (s: Snap) =>
  JSON.stringify({ v: s.value, r: Math.min(s.context.run, 2), d: s.context.dialogs.length, p: s.context.pending.length, t: s.context.takeReplyTo !== undefined, a: s.context.asked === true })

type Path = ReturnType<typeof getShortestPaths<typeof threadMachine>>[number]

const describeEvent = (e: ThreadEvent): string => {
  switch (e.type) {
    case 'PROMPT':
      return `PROMPT(${e.deliverAs}${e.admission === 'reject' ? ', reject when busy' : ''}${e.run === undefined ? '' : `, run ${e.run}`})`
    case 'ABORT':
      return e.run === undefined ? 'ABORT' : `ABORT(run ${e.run})`
    case 'TAKE_QUEUE':
      return e.run === undefined ? 'TAKE_QUEUE' : `TAKE_QUEUE(run ${e.run})`
    case 'SETTLED':
      return e.aborted ? 'SETTLED(aborted, 1 unclaimed)' : 'SETTLED'
    case 'ASK':
      return `ASK ${e.dialogId}`
    case 'DIALOG.ANSWER':
      return `DIALOG.ANSWER ${e.dialogId} ${(e.answer as { value: string }).value === 'yes' ? 'valid' : 'refused'}`
    case 'DIALOG.CANCEL':
    case 'DIALOG.CANCEL':
      return `${e.type} ${e.dialogId}`
    case 'DISPOSE':
      return `DISPOSE(${e.dialogOutcome})`
    case IDLE_ELAPSES.type:
      return 'idleMs elapses'
    default: {
      const end = dialogEnd(e)
      if (end) return end.type === 'test.EXPIRE' ? `${end.dialogId} times out` : `${end.dialogId}'s signal fires`
      return e.type
    }
  }
}

const PROMISE: Record<string, string> = {
  cold: 'not live, no timer, no open question',
  idle: 'live and not busy, the idle timer armed once',
  running: 'busy with the run it started, no idle timer',
  'aborting.clearing': 'the queue is being cleared and the runtime not yet told',
  'aborting.stopping': 'queue cleared, then the runtime told once, then every open dialog settled aborted',
  disposed: 'runtime released, every question settled once, status last',
}
const stateName = (v: Snap['value']) => (typeof v === 'string' ? v : `aborting.${(v as { aborting: string }).aborting}`)

function pathTitle(path: Path): string {
  const events = path.steps.slice(1).map((s) => describeEvent(s.event))
  const state = stateName(path.state.value)
  return `${events.length ? events.join(' → ') : '(no event)'} ⇒ ${state}: ${PROMISE[state]}`
}

function replay(path: Path) {
  const h = liveThread()
  assertState(path.steps[0].state.value, h)
  for (const s of path.steps.slice(1)) {
    const wasDone = h.actor.getSnapshot().status === 'done'
    const before = h.log.filter((e) => e.who !== 'send').length
    h.send(s.event)
    if (wasDone) expect(h.log.filter((e) => e.who !== 'send').length).toBe(before)
    assertState(s.state.value, h)
  }
  return h.taken
}

function takenBy(events: ThreadEvent[]) {
  const h = liveThread()
  for (const e of events) h.send(e)
  return h.taken
}

const shortest = getShortestPaths(model, { input: INPUT, events: eventsFor, serializeState })

/** Stops: from a run with one question open, every simple path of a stop until the run settles. */
const running = ['LIVE', 'PROMPT', 'ASK'].reduce<Snap>(
  (s, type) =>
    step(s, type === 'LIVE' ? { type: 'LIVE' } : type === 'PROMPT' ? P('steer') : { type: 'ASK', dialogId: 'd1', spec, origin, timeoutMs: DIALOG_TIMEOUT_MS })[0],
  initialTransition(threadMachine, INPUT)[0],
)
const prefix: ThreadEvent[] = [{ type: 'LIVE' }, P('steer'), { type: 'ASK', dialogId: 'd1', spec, origin, timeoutMs: DIALOG_TIMEOUT_MS }]
const STOP_EVENTS = new Set(['ABORT', 'QUEUE_CLEARED', 'QUEUE_CLEAR_FAILED', 'SETTLED', 'ASK'])
const stops = getSimplePaths(model, {
  fromState: running,
  events: (s: Snap) =>
    eventsFor(s).filter((e) => STOP_EVENTS.has(e.type) || (e.type === 'PROMPT' && e.deliverAs === 'followUp' && s.matches('aborting'))),
  serializeState,
  toState: (s: Snap) => s.matches('idle') || (s.matches('running') && s.context.run > 1),
}).map((p) => ({
  ...p,
  steps: [
    { event: { type: 'xstate.init' } as unknown as ThreadEvent, state: initialTransition(threadMachine, INPUT)[0] },
    ...prefix.map((event) => ({ event, state: running })),
    ...p.steps.slice(1),
  ],
}))
// the prefix's intermediate states are checked by value only where they are reached
for (const p of stops) {
  const s0 = initialTransition(threadMachine, INPUT)[0]
  const s1 = step(s0, prefix[0])[0]
  const s2 = step(s1, prefix[1])[0]
  p.steps[1] = { event: prefix[0], state: s1 }
  p.steps[2] = { event: prefix[1], state: s2 }
  p.steps[3] = { event: prefix[2], state: running }
}

/** One path for each transition the state paths miss: a shortest path extended by one event. */
const covered = new Set<string>()
for (const p of [...shortest, ...stops]) for (const k of takenBy(p.steps.slice(1).map((s) => s.event))) covered.add(k)
const covering: Path[] = []
for (const p of [...shortest].sort((a, b) => a.steps.length - b.steps.length)) {
  if (p.state.status === 'done') continue
  for (const event of eventsFor(p.state)) {
    const fresh = [...takenBy([...p.steps.slice(1).map((s) => s.event), event])].filter((k) => !covered.has(k))
    if (fresh.length === 0) continue
    for (const k of fresh) covered.add(k)
    const [state] = step(p.state, event)
    covering.push({ state, steps: [...p.steps, { event, state }], weight: p.weight + 1 })
  }
}

describe('thread machine: every shortest path, replayed on a live actor', () => {
  for (const path of shortest) it(pathTitle(path), () => void replay(path))
})

describe('thread machine: every simple path of a stop with a question open, replayed on a live actor', () => {
  for (const path of stops) it(`a run with d1 open: ${pathTitle(path).replace(/^LIVE → PROMPT\(steer\) → ASK d1 → /, '')}`, () => void replay(path))
})

describe('thread machine: a path for every transition the state paths miss, replayed on a live actor', () => {
  for (const path of covering) it(pathTitle(path), () => void replay(path))
})

/**
 * `retiring` and `disposing` are left as soon as the last dialog settles, and a dialog settles at
 * once; a question reaches them only when it is asked re-entrantly, while the thread is leaving idle.
 */
const ask2: ThreadEvent = { type: 'ASK', dialogId: 'd2', spec, origin, timeoutMs: DIALOG_TIMEOUT_MS }
const REENTRANT: { title: string; events: ThreadEvent[]; final: Snap['value'] }[] = [
  {
    title: 'a question asked while the thread is going cold is refused: never shown, resolved with its cancel value, and the thread still goes cold',
    events: [{ type: 'LIVE' }, { type: 'ASK', dialogId: 'd1', spec, origin, timeoutMs: DIALOG_TIMEOUT_MS }, IDLE_ELAPSES],
    final: 'cold',
  },
  {
    title: 'a question asked while the thread is being disposed is refused: never shown, resolved with its cancel value, and the thread is still disposed',
    events: [{ type: 'LIVE' }, { type: 'ASK', dialogId: 'd1', spec, origin, timeoutMs: DIALOG_TIMEOUT_MS }, { type: 'DISPOSE', reason: 'deleted', dialogOutcome: 'cancelled' }],
    final: 'disposed',
  },
]
function replayReentrant({ events, final }: (typeof REENTRANT)[number]) {
  const h = liveThread({ reentrant: { action: 'disposeRuntime', event: ask2 } })
  for (const e of events) h.send(e)
  assertState(final, h)
  expect(h.log.filter((e) => e.who === 'd2').map((e) => e.action)).toEqual(['resolveWithdrawn'])
  expect(h.log.filter((e) => e.who === 'd1' && e.action === 'recordSettle').map((e) => e.outcome)).toEqual(['cancelled'])
  return h.taken
}

describe('thread machine: requests that arrive re-entrantly while the thread leaves idle', () => {
  for (const r of REENTRANT) it(r.title, () => void replayReentrant(r))
})

describe('thread machine: the idle release is its own delay', () => {
  it('idle for idleMs on its clock, the thread goes cold and releases the runtime; a run in between starts the wait again', () => {
    const h = liveThread({ clear: () => 'cleared' })
    const clock = () => h.actor.system.getSnapshot()._scheduledEvents
    h.send({ type: 'LIVE' })
    h.send(P('steer'))
    expect(Object.keys(clock())).toEqual([])
    h.send({ type: 'SETTLED', aborted: false, unclaimed: [] })
    expect(h.idleTimers()).toBe(1)
    h.send(P('steer', 'enqueue', 1))
    expect(h.idleTimers()).toBe(0)
    h.send({ type: 'SETTLED', aborted: false, unclaimed: [] })
    h.send(IDLE_ELAPSES)
    expect(h.actor.getSnapshot().value).toBe('cold')
    expect(thread(h, 'disposeRuntime').map((e) => e.params)).toEqual([{ reason: 'idle' }])
    expect(h.idleTimers()).toBe(0)
  })
})

describe('thread machine: a steer or follow-up carries the run its tab shows', () => {
  it('a prompt naming a run that is not the current one is refused stale-run and queues or starts nothing; naming the current run it is queued; naming the run that just ended it starts the next', () => {
    const h = liveThread({ clear: () => 'cleared' })
    h.send({ type: 'LIVE' })
    h.send(P('steer')) // run 1
    h.send(P('steer', 'enqueue', 2))
    h.send(P('followUp', 'enqueue', 1))
    expect(h.emitted.slice(1).map((e) => [e.type, 'reason' in e ? e.reason : 'queued' in e && e.queued])).toEqual([
      ['prompt.refused', 'stale-run'],
      ['prompt.admitted', true],
    ])
    expect(h.queue).toEqual({ steering: [], followUp: [{ messageId: 'm-followUp-enqueue-run1#1', text: 'followUp text' }] })
    h.send({ type: 'SETTLED', aborted: false, unclaimed: [] })
    // Idle after run 1: a tab that saw run 1 starts run 2; one that saw an older run is stale.
    h.send(P('steer', 'enqueue', 0))
    expect(h.emitted.at(-1)).toMatchObject({ type: 'prompt.refused', reason: 'stale-run' })
    h.send(P('followUp', 'enqueue', 1))
    expect(h.emitted.at(-1)).toMatchObject({ type: 'prompt.admitted', run: 2, queued: false })
    // While a stop is pending, a stale steer is refused rather than held for the next run.
    h.send({ type: 'ABORT' })
    h.send(P('steer', 'enqueue', 1))
    expect(h.emitted.at(-1)).toMatchObject({ type: 'prompt.refused', reason: 'stale-run' })
    expect(h.actor.getSnapshot().context.pending).toEqual([])
    expect(thread(h, 'startRun')).toHaveLength(2)
  })
})

describe('thread machine: coverage of the model-based paths', () => {
  it('the traversed paths reach every state and take every transition the thread machine defines', () => {
    const taken = new Set<string>()
    for (const p of [...shortest, ...stops, ...covering]) for (const k of replay(p)) taken.add(k)
    for (const r of REENTRANT) for (const k of replayReentrant(r)) taken.add(k)
    const reached = new Set([...taken].filter((k) => k.startsWith('thread')).map((k) => k.split('|')[0]))
    for (const p of [...shortest, ...stops, ...covering])
      for (const s of p.steps) for (const n of s.state._nodes) reached.add(n.id)
    const states = [threadMachine.root, ...Object.values(threadMachine.root.states)].flatMap((n) => [
      n.id,
      ...Object.values(n.states).map((c) => c.id),
    ])
    const missingStates = [...new Set(states)].filter((id) => !reached.has(id))
    const missingTransitions = transitionsOf(threadMachine)
      .map((t) => t.key)
      .filter((k) => !taken.has(k))
    expect({ missingStates, missingTransitions }).toEqual({ missingStates: [], missingTransitions: [] })
  })
})

// ---------------------------------------------------------------------------------------------
// Properties over random sequences, against a live actor with a fake runtime queue.

type Move =
  | { kind: 'event'; event: ThreadEvent }
  | { kind: 'ask' }
  | { kind: 'dialog'; type: 'DIALOG.ANSWER' | 'DIALOG.CANCEL' | 'test.EXPIRE' | 'test.SIGNAL'; valid: boolean }

const moveArb: fc.Arbitrary<Move> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(P('steer'), P('followUp'), P('steer', 'reject')).map((event) => ({ kind: 'event' as const, event })) },
  {
    weight: 3,
    arbitrary: fc.constantFrom<ThreadEvent>(
      { type: 'LIVE' },
      { type: 'ABORT' },
      { type: 'SETTLED', aborted: false, unclaimed: [] },
      { type: 'SETTLED', aborted: true, unclaimed: [] },
    ).map((event) => ({ kind: 'event' as const, event })),
  },
  { weight: 1, arbitrary: fc.constantFrom<ThreadEvent>(IDLE_ELAPSES, { type: 'ABORT', run: 1 }).map((event) => ({ kind: 'event' as const, event })) },
  { weight: 1, arbitrary: fc.constantFrom<ThreadEvent>({ type: 'TAKE_QUEUE' }, { type: 'TAKE_QUEUE', run: 1 }).map((event) => ({ kind: 'event' as const, event })) },
  { weight: 2, arbitrary: fc.constant({ kind: 'ask' as const }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('dialog' as const),
      type: fc.constantFrom('DIALOG.ANSWER' as const, 'DIALOG.CANCEL' as const, 'test.EXPIRE' as const, 'test.SIGNAL' as const),
      valid: fc.boolean(),
    }),
  },
)
/** How each clear of the fake runtime's queue goes, in turn (cycled): mostly it hands the queue over, sometimes it throws. */
const clearsArb = fc.array(fc.constantFrom<'cleared' | 'failed'>('cleared', 'cleared', 'failed'), { minLength: 1, maxLength: 8 })
const disposeArb = fc.option(fc.constantFrom<'cancelled' | 'aborted'>('cancelled', 'aborted'), { nil: undefined })

/** Plays the moves; a SETTLED while busy hands back what the fake runtime still queued as `unclaimed` when aborted. */
function play(moves: Move[], clears: ('cleared' | 'failed')[] = ['cleared'], dispose?: 'cancelled' | 'aborted') {
  let n = 0
  const h = liveThread({ clear: () => clears[n++ % clears.length] })
  let asks = 0
  for (const m of moves) {
    if (h.actor.getSnapshot().status === 'done') break
    const ctx = h.actor.getSnapshot().context
    if (m.kind === 'ask') h.send({ type: 'ASK', dialogId: `q${++asks}`, spec, origin, timeoutMs: DIALOG_TIMEOUT_MS })
    else if (m.kind === 'dialog') {
      const id = ctx.dialogs[0] ?? 'q-none'
      if (m.type === 'DIALOG.ANSWER') h.send({ type: m.type, dialogId: id, answer: { value: m.valid ? 'yes' : 'nope' } })
      else if (m.type === 'DIALOG.CANCEL') h.send({ type: m.type, dialogId: id })
      else h.send(m.type === 'test.EXPIRE' ? expire(id) : signal(id))
    } else if (m.event.type === 'SETTLED' && m.event.aborted) {
      const unclaimed = [...h.queue.steering, ...h.queue.followUp]
      h.queue.steering = []
      h.queue.followUp = []
      h.send({ ...m.event, unclaimed })
    } else {
      if (m.event.type === 'SETTLED') {
        h.queue.steering = []
        h.queue.followUp = []
      }
      // the registry builds the runtime (LIVE) before it sends a prompt
      if (m.event.type === 'PROMPT' && h.actor.getSnapshot().value === 'cold') h.send({ type: 'LIVE' })
      h.send(m.event)
    }
    assertInvariants(h)
  }
  if (dispose && h.actor.getSnapshot().status !== 'done') {
    // A cold machine holds nothing to dispose (the registry stops it); a live one is disposed.
    if (h.actor.getSnapshot().value === 'cold') h.send({ type: 'LIVE' })
    h.send({ type: 'DISPOSE', reason: 'deleted', dialogOutcome: dispose })
  }
  assertInvariants(h)
  return h
}

const movesArb = fc.array(moveArb, { maxLength: 30 })

describe('thread machine: properties over random sequences', () => {
  test.prop([movesArb, clearsArb, disposeArb], { numRuns: 200 })(
    'the runtime is told to abort at most once per run, always after its queue was cleared — also when clearing it throws',
    (moves, clears, dispose) => void play(moves, clears, dispose),
  )

  test.prop([movesArb, clearsArb], { numRuns: 150 })(
    'a stop hands back the waiting prompts steering first, then follow-ups, each in the order queued and with its id; a failed clear restores nothing and says so',
    (moves, clears) => {
      const h = play(moves, clears)
      h.log.forEach((e, i) => {
        if (e.action !== 'clearQueue') return
        const queued = h.log.slice(0, i).filter((x) => x.action === 'queuePrompt' || x.action === 'clearQueue' || x.action === 'takeQueue' || x.action === 'startRun' || (x.who === 'send' && x.action === 'SETTLED'))
        // what queuePrompt put in since the last clear or settle
        const since = queued.slice(queued.findLastIndex((x) => x.action !== 'queuePrompt') + 1)
        const prompts = (d: string) =>
          since
            .map((x) => (x.params as { prompt: PromptRequest }).prompt)
            .filter((p) => p.deliverAs === d)
            .map((p) => ({ messageId: p.messageId, text: p.text }))
        const answer = h.log.slice(i).find((x) => x.action === 'abort.answered')!.params as { restored: WaitingPrompt[] }
        const failed = h.log.slice(i).find((x) => x.action === 'recordError' || x.action === 'abort.answered')!.action === 'recordError'
        expect(answer.restored).toEqual(failed ? [] : [...prompts('steer'), ...prompts('followUp')])
      })
    },
  )

  test.prop([movesArb, clearsArb], { numRuns: 150 })(
    'a take-back during a run hands back the waiting prompts steering first, each with its id, and the run goes on untold; a failed clear restores nothing and says so',
    (moves, clears) => {
      const h = play(moves, clears)
      h.log.forEach((e, i) => {
        if (e.action !== 'takeQueue') return
        const queued = h.log.slice(0, i).filter((x) => x.action === 'queuePrompt' || x.action === 'clearQueue' || x.action === 'takeQueue' || x.action === 'startRun' || (x.who === 'send' && x.action === 'SETTLED'))
        const since = queued.slice(queued.findLastIndex((x) => x.action !== 'queuePrompt') + 1)
        const prompts = (d: string) =>
          since
            .map((x) => (x.params as { prompt: PromptRequest }).prompt)
            .filter((p) => p.deliverAs === d)
            .map((p) => ({ messageId: p.messageId, text: p.text }))
        const answer = h.log.slice(i).find((x) => x.action === 'take.answered')!.params as { restored: WaitingPrompt[] }
        const failed = h.log.slice(i).find((x) => x.action === 'recordError' || x.action === 'take.answered')!.action === 'recordError'
        expect(answer.restored).toEqual(failed ? [] : [...prompts('steer'), ...prompts('followUp')])
        // the run it took from is not stopped by it: the next thing the runtime hears of that run is not an abort
        const next = h.log.slice(i + 1).find((x) => x.who === 'thread' && x.action !== 'recordError')
        expect(next?.action).not.toBe('tellRuntimeAbort')
      })
    },
  )

  test.prop([movesArb], { numRuns: 150 })(
    'a prompt while idle starts run N+1 at once; a prompt while a stop is pending starts only after the stopped run settles',
    (moves) => {
      const h = play(moves)
      h.log.forEach((e, i) => {
        if (e.who !== 'send' || e.action !== 'PROMPT') return
        const { messageId, admission } = e.params as PromptRequest
        const state = h.log.slice(0, i)
        const admitted = h.emitted.find((x) => x.type === 'prompt.admitted' && x.messageId === messageId) as
          | Extract<ThreadEmitted, { type: 'prompt.admitted' }>
          | undefined
        const startedAt = h.log.findIndex((x) => x.action === 'startRun' && (x.params as { prompt: PromptRequest }).prompt.messageId === messageId)
        // the state the prompt met: the last status and whether a stop was pending
        const lastStatus = state.filter((x) => x.action === 'publishStatus').at(-1)?.params as { live: boolean; busy: boolean } | undefined
        const stopPending = (() => {
          const c = state.findLastIndex((x) => x.action === 'clearQueue')
          const s = state.findLastIndex((x) => x.action === 'recordSettled' || (x.action === 'publishStatus' && !(x.params as { busy: boolean }).busy))
          return c > s
        })()
        if (lastStatus?.live && !lastStatus.busy) {
          expect(admitted).toMatchObject({ run: e.run + 1, queued: false })
          expect(startedAt).toBe(i + 1 + h.log.slice(i + 1).findIndex((x) => x.action === 'startRun'))
        } else if (stopPending && admission === 'enqueue') {
          const settle = h.log.findIndex((x, j) => j > i && x.who === 'send' && x.action === 'SETTLED')
          if (startedAt >= 0) expect(startedAt).toBeGreaterThan(settle)
          if (settle < 0) expect(admitted).toBeUndefined()
        }
      })
    },
  )

  test.prop([movesArb], { numRuns: 150 })(
    'every prompt gets exactly one reply, admitted or refused, once the stop it waited on has settled',
    (moves) => {
      const h = play(moves)
      const pending = new Set(h.actor.getSnapshot().context.pending.map((p) => p.messageId))
      for (const e of h.sent.filter((x) => x.type === 'PROMPT')) {
        const id = (e as PromptRequest).messageId
        const replies = h.emitted.filter((x) => (x.type === 'prompt.admitted' || x.type === 'prompt.refused') && x.messageId === id)
        expect(replies.length).toBe(pending.has(id) ? 0 : 1)
      }
    },
  )

  test.prop([movesArb, clearsArb, fc.constantFrom<'cancelled' | 'aborted'>('cancelled', 'aborted'), movesArb], { numRuns: 150 })(
    'nothing happens after the thread is disposed: every question settles once under the dispose outcome, and no provided action fires afterwards',
    (moves, clears, outcome, after) => {
      const h = play(moves, clears, outcome)
      expect(h.actor.getSnapshot().status).toBe('done')
      expect(openDialogs(h)).toEqual([])
      const dispose = h.log.findIndex((e) => e.who === 'send' && e.action === 'DISPOSE')
      for (const e of h.log.slice(dispose)) if (e.action === 'recordSettle') expect(e.outcome).toBe(outcome)
      const before = h.log.filter((e) => e.who !== 'send').length
      // xstate warns about events sent to a stopped actor; that is exactly what is sent here
      const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
      try {
        for (const m of after) if (m.kind === 'event') h.actor.send(m.event)
        h.actor.send({ type: 'ASK', dialogId: 'late', spec, origin, timeoutMs: DIALOG_TIMEOUT_MS })
      } finally {
        warn.mockRestore()
      }
      expect(h.log.filter((e) => e.who !== 'send').length).toBe(before)
    },
  )

  test.prop([movesArb, clearsArb, disposeArb], { numRuns: 150 })(
    'each dialog finishes exactly once and its settle precedes its resolution, however answers, cancels, timeouts, stops and disposal interleave',
    (moves, clears, dispose) => {
      const h = play(moves, clears, dispose)
      const ids = new Set(h.log.filter(isDialog).map((e) => e.who))
      for (const id of ids) {
        const mine = h.log.filter((e) => e.who === id).map((e) => e.action)
        const finishes = mine.filter((a) => a === 'recordSettle' || a === 'resolveWithdrawn').length
        const alive = h.actor.getSnapshot().context.dialogs.includes(id) && h.actor.getSnapshot().status !== 'done'
        expect(finishes).toBe(alive ? 0 : 1)
        if (mine.includes('recordSettle')) expect(mine.indexOf('recordSettle')).toBeLessThan(mine.indexOf('resolveExtension'))
      }
    },
  )
})

describe('thread machine: taking the queue back', () => {
  it('a take-back during a run hands back the waiting prompts steering first with their ids and the run goes on; with nothing in flight it is refused, naming another run it is stale', () => {
    const h = liveThread({ clear: () => 'cleared' })
    h.send({ type: 'TAKE_QUEUE', replyTo: 'take-cold' })
    h.send({ type: 'LIVE' })
    h.send({ type: 'TAKE_QUEUE', replyTo: 'take-idle' })
    h.send(P('steer')) // run 1
    h.send(P('followUp'))
    h.send(P('steer'))
    h.send({ type: 'TAKE_QUEUE', run: 2, replyTo: 'take-stale' })
    h.send({ type: 'TAKE_QUEUE', run: 1, replyTo: 'take-1' })
    expect(h.actor.getSnapshot().value).toBe('running')
    expect(h.emitted.filter((e) => e.type.startsWith('take.'))).toEqual([
      { type: 'take.refused', replyTo: 'take-cold', reason: 'not-live' },
      { type: 'take.refused', replyTo: 'take-idle', reason: 'idle' },
      { type: 'take.refused', replyTo: 'take-stale', reason: 'stale-run' },
      {
        type: 'take.answered',
        replyTo: 'take-1',
        restored: [
          { messageId: 'm-steer-enqueue#2', text: 'steer text' },
          { messageId: 'm-followUp-enqueue#1', text: 'followUp text' },
        ],
      },
    ])
    expect(thread(h, 'tellRuntimeAbort')).toEqual([])
    expect(h.actor.getSnapshot().children.takeQueue).toBeUndefined()
    // the run goes on: a prompt queues into it, a second take-back takes that one, and the run settles as any
    h.send(P('followUp'))
    h.send({ type: 'TAKE_QUEUE', replyTo: 'take-2' })
    expect(h.emitted.at(-1)).toEqual({ type: 'take.answered', replyTo: 'take-2', restored: [{ messageId: 'm-followUp-enqueue#2', text: 'followUp text' }] })
    h.send({ type: 'SETTLED', aborted: false, unclaimed: [] })
    expect(h.actor.getSnapshot().value).toBe('idle')
    expect(thread(h, 'recordSettled').map((e) => e.params)).toEqual([{ run: 1, aborted: false }])
  })

  it('a take-back whose clear throws restores nothing and says the loss, and the run goes on; one asked while it is carried out, or while a stop is pending, gets nothing', () => {
    const h = liveThread({ clear: () => 'failed' })
    h.send({ type: 'LIVE' })
    h.send(P('steer'))
    h.send(P('followUp'))
    h.send({ type: 'TAKE_QUEUE', replyTo: 'take-1' })
    expect(h.emitted.at(-1)).toEqual({ type: 'take.answered', replyTo: 'take-1', restored: [] })
    expect(thread(h, 'recordError').map((e) => e.params)).toEqual([{ message: 'the queue could not be cleared: the runtime threw' }])
    expect(h.actor.getSnapshot().value).toBe('running')
    expect(thread(h, 'tellRuntimeAbort')).toEqual([])
    // a clearer that has not answered yet: a second take-back gets nothing, the first gets the queue
    const slow = liveThread()
    slow.send({ type: 'LIVE' })
    slow.send(P('steer'))
    slow.send({ type: 'TAKE_QUEUE', replyTo: 'take-1' })
    slow.send({ type: 'TAKE_QUEUE', replyTo: 'take-2' })
    slow.send({ type: 'QUEUE_CLEARED', steering: [{ messageId: 's1', text: 's1' }], followUp: [] })
    expect(slow.emitted.filter((e) => e.type === 'take.answered')).toEqual([
      { type: 'take.answered', replyTo: 'take-2', restored: [] },
      { type: 'take.answered', replyTo: 'take-1', restored: [{ messageId: 's1', text: 's1' }] },
    ])
    // while a stop is pending the stop has the queue
    slow.send({ type: 'ABORT', replyTo: 'stop-1' })
    slow.send({ type: 'TAKE_QUEUE', replyTo: 'take-3' })
    expect(slow.emitted.at(-1)).toEqual({ type: 'take.answered', replyTo: 'take-3', restored: [] })
  })
})

describe('thread machine: replies a caller waits on', () => {
  it('a prompt waiting on a stop is refused (reason disposed) when the thread is disposed before the stopped run settles', () => {
    const h = liveThread({ clear: () => 'cleared' })
    h.send({ type: 'LIVE' })
    h.send(P('steer'))
    h.send({ type: 'ABORT' })
    h.send(P('followUp'))
    h.send({ type: 'DISPOSE', reason: 'deleted', dialogOutcome: 'cancelled' })
    const waiting = (h.sent.at(-2) as PromptRequest).messageId
    expect(thread(h, 'rejectPrompt').map((e) => e.params)).toEqual([{ messageId: waiting, reason: 'deleted' }])
    expect(h.emitted.filter((e) => 'messageId' in e && e.messageId === waiting)).toEqual([
      { type: 'prompt.refused', messageId: waiting, reason: 'disposed', closing: 'deleted' },
    ])
  })

  it('a stop must stop: when clearing the queue throws, the stop is answered with nothing restored, the loss is said, the runtime is still told and the open question settles aborted', () => {
    const h = liveThread({ clear: () => 'failed' })
    h.send({ type: 'LIVE' })
    h.send(P('steer'))
    h.send(P('followUp'))
    h.send({ type: 'ASK', dialogId: 'd1', spec, origin, timeoutMs: DIALOG_TIMEOUT_MS })
    h.send({ type: 'ABORT', replyTo: 'stop-1' })
    expect(h.actor.getSnapshot().value).toEqual({ aborting: 'stopping' })
    expect(h.emitted.filter((e) => e.type === 'abort.answered')).toEqual([{ type: 'abort.answered', replyTo: 'stop-1', restored: [] }])
    const order = h.log.filter((e) => ['clearQueue', 'recordError', 'tellRuntimeAbort', 'recordSettle', 'resolveExtension'].includes(e.action)).map((e) => `${e.who}:${e.action}`)
    expect(order.slice(order.indexOf('thread:clearQueue'))).toEqual([
      'thread:clearQueue',
      'thread:recordError',
      'thread:tellRuntimeAbort',
      'd1:recordSettle',
      'd1:resolveExtension',
    ])
    expect(thread(h, 'recordError')[0].params).toEqual({ message: 'the queue could not be cleared: the runtime threw' })
    expect(h.log.filter((e) => e.who === 'd1' && e.action === 'recordSettle').map((e) => e.outcome)).toEqual(['aborted'])
    h.send({ type: 'SETTLED', aborted: true, unclaimed: [] })
    expect(h.actor.getSnapshot().value).toBe('idle')
  })
})

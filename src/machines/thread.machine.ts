/**
 * A thread: cold → idle ⇄ running → aborting → idle … → retiring → cold, or → disposing → disposed,
 * with a run counter.
 *
 * The machine, not the routes, decides what a request may do:
 * - a prompt while idle starts run N+1; while running it is queued (steer or follow-up) or refused
 *   when the caller asked `admission: 'reject'`; while a stop is pending it waits and starts once the
 *   stopped run has settled;
 * - a stop with nothing in flight is refused; otherwise it clears the queue FIRST, then tells the
 *   runtime once, then settles every open dialog `aborted`, then refuses new questions until the
 *   run settles. If clearing throws, nothing is restored, the loss is said, and the runtime is still
 *   told: a stop must stop. A repeat while the stop is pending gets the same answer with nothing restored;
 * - a take-back during a run clears the runtime's queue and answers with what it held, as a stop
 *   does, and the run goes on; with nothing in flight it is refused. A repeat while one is being
 *   carried out gets nothing; while a stop is pending the stop has the queue, so it gets nothing too;
 * - a run ends only by the runtime's own settle.
 *
 * Open questions are child dialog actors, so stop and dispose reach each of them through the same
 * one finish. The ask-queue (ask_user_question calls and terminal components, one on screen at a
 * time) is a child too, spawned at the thread's first turn and kept: most threads never ask, and an
 * actor is memory every idle live thread would hold. Requests reach the machine as events carrying a correlation id; each gets exactly one
 * reply, emitted with that id (`ThreadEmitted`, and `DialogEmitted` from the dialog an answer names),
 * so the caller reads the machine's answer rather than guessing it. Side effects are provided actions,
 * and the one whose answer the machine waits for — clearing the queue — an invoked actor. Time is
 * the machine's own: the idle release is an `after` delay (`idleMs`, from the input), on the clock
 * the actor runs with, so a test runs it on a simulated one.
 */
import { assign, emit, fromCallback, setup, type ActorRefFrom } from 'xstate'
import type { DialogAnswer, DialogOrigin, DialogOutcome, DialogSpec } from '../schemas/index.js'
import type { Admission, DeliverAs } from '../schemas/index.js'
import { askQueueMachine } from './ask-queue.machine.js'
import { dialogMachine } from './dialog.machine.js'

export interface PromptRequest {
  messageId: string
  text: string
  admission: Admission
  deliverAs: DeliverAs
  /**
   * The run the sender was looking at (a steer or follow-up meant for it): refused `stale-run` when
   * another run is the current one, so a tab that fell behind never queues into a newer run.
   */
  run?: number
}

/** A prompt the runtime held: queued behind a run, handed back by a stop or over by a settle. */
export interface WaitingPrompt {
  messageId: string
  text: string
}

export interface ThreadContext {
  threadId: string
  run: number
  /** How long the thread stays idle before it goes cold (the `idleMs` delay). */
  idleMs: number
  /** Open dialog ids, oldest first. */
  dialogs: string[]
  /** Prompts that arrived while a stop was pending; they start once the stopped run settles. */
  pending: PromptRequest[]
  /** The correlation id of the stop being carried out: its reply comes once the queue is cleared. */
  stopReplyTo?: string
  /** The correlation id of the take-back being carried out (the run goes on): its reply comes once the queue is cleared. */
  takeReplyTo?: string
  /** Why the thread is being disposed, and how its open dialogs settle. */
  closing?: { reason: string; dialogOutcome: 'cancelled' | 'aborted'; interrupted: boolean }
  /** A turn came: the ask-queue child exists (from the first turn on). */
  asked?: true
}

export type ThreadEvent =
  /** The runtime is attached; `run` is the highest run its persisted session records (it may be ahead after a crash). */
  | { type: 'LIVE'; run?: number }
  /** The runtime began a run nobody prompted (an extension's own). */
  | { type: 'RUN_STARTED' }
  | ({ type: 'PROMPT' } & PromptRequest)
  | { type: 'ABORT'; run?: number; replyTo?: string }
  /** Take the queued prompts back (pi's Alt+Up): the runtime's queue is cleared and the run goes on. */
  | { type: 'TAKE_QUEUE'; run?: number; replyTo?: string }
  /** The runtime's queue, emptied: the prompts it held, with the ids they were admitted under. */
  | { type: 'QUEUE_CLEARED'; steering: WaitingPrompt[]; followUp: WaitingPrompt[] }
  /** Clearing the runtime's queue threw: what it held is lost, and the stop must still stop. */
  | { type: 'QUEUE_CLEAR_FAILED'; message: string }
  | { type: 'SETTLED'; aborted: boolean; unclaimed: WaitingPrompt[] }
  | {
      type: 'ASK'
      dialogId: string
      spec: DialogSpec
      origin: DialogOrigin
      /** The extension's timeout (ms): the dialog keeps it as its own `after` delay. */
      timeoutMs?: number
      /** The extension's signal: the dialog listens to it while it is open. */
      signal?: AbortSignal
    }
  /** An answer as it arrived; the dialog it names decides whether it answers the question. */
  | { type: 'DIALOG.ANSWER'; dialogId: string; answer: unknown; replyTo?: string }
  | { type: 'DIALOG.CANCEL'; dialogId: string; replyTo?: string }
  /** A dialog's extension signal fired (the dialog reports it): the dialog settles `aborted` unless it already ended. */
  | { type: 'DIALOG.SIGNAL'; dialogId: string }
  | { type: 'DISPOSE'; reason: string; dialogOutcome: Extract<DialogOutcome, 'cancelled' | 'aborted'> }
  /** A turn for the ask-queue (an ask_user_question call, a terminal component): it waits there to be shown. */
  | { type: 'TURN'; askId: string }
  /** The turn's tool call was aborted: the ask-queue hears it. */
  | { type: 'TURN.SIGNAL'; askId: string }

/**
 * Replies: exactly one per request, carrying the request's correlation id — a prompt's `messageId`,
 * else its `replyTo`. An answer to an open question is replied by that dialog (`DialogEmitted`).
 */
export type ThreadEmitted =
  | { type: 'prompt.admitted'; messageId: string; run: number; queued: boolean }
  /** `closing`: why a disposed thread refused it (the delete or shutdown that took it). */
  | { type: 'prompt.refused'; messageId: string; reason: 'busy' | 'disposed' | 'stale-run'; closing?: string }
  /** `restored`: the prompts the stop took off the queue, steering first, each in the order queued. */
  | { type: 'abort.answered'; replyTo: string; restored: WaitingPrompt[] }
  | { type: 'abort.refused'; replyTo: string; reason: 'idle' | 'stale-run' | 'not-live' }
  /** `restored`: the prompts taken off the queue, as a stop's; the run goes on. */
  | { type: 'take.answered'; replyTo: string; restored: WaitingPrompt[] }
  | { type: 'take.refused'; replyTo: string; reason: 'idle' | 'stale-run' | 'not-live' }
  /** The answer names no open question: never asked, or already settled. */
  | { type: 'dialog.gone'; replyTo: string }

type Prompt = Extract<ThreadEvent, { type: 'PROMPT' }>
type Settled = Extract<ThreadEvent, { type: 'SETTLED' }>

const admitted = (messageId: string, run: number, queued: boolean): ThreadEmitted => ({
  type: 'prompt.admitted',
  messageId,
  run,
  queued,
})

/** The prompts a settle hands on to the next run: unclaimed ones first (they were asked first), then pending. */
const carried = (context: ThreadContext, event: Settled): PromptRequest[] => [
  ...event.unclaimed.map((p) => ({ ...p, admission: 'enqueue' as const, deliverAs: 'followUp' as const })),
  ...context.pending,
]

const threadSetup = setup({
  types: {
    input: {} as { threadId: string; run?: number; idleMs: number },
    context: {} as ThreadContext,
    events: {} as ThreadEvent,
    emitted: {} as ThreadEmitted,
  },
  actors: {
    dialog: dialogMachine,
    askQueue: askQueueMachine,
    /**
     * Clear the runtime's queue of the run being stopped; it sends back QUEUE_CLEARED with what it
     * took, or QUEUE_CLEAR_FAILED when the runtime threw. Invoked by `aborting.clearing`, so its
     * answer is an event like any other; it answers as it starts, before anything can settle the run.
     * A take-back spawns it as `takeQueue` from `running`, which stays where it is.
     */
    clearQueue: fromCallback<ThreadEvent, { run: number }>(() => {}),
  },
  actions: {
    /** Emit `status {live, busy, run}` on the feed. */
    publishStatus: (_, _params: { live: boolean; busy: boolean; run: number }) => {},
    startRun: (_, _params: { prompt: PromptRequest; run: number }) => {},
    /** The runtime started a run of its own (an extension's sendUserMessage): it is run `run`. */
    adoptRun: (_, _params: { run: number }) => {},
    queuePrompt: (_, _params: { prompt: PromptRequest }) => {},
    /** Emit an `error` observation: something was lost and the humans must hear it. */
    recordError: (_, _params: { message: string }) => {},
    tellRuntimeAbort: () => {},
    /** Emit `settled {run, aborted}` on the feed. */
    recordSettled: (_, _params: { run: number; aborted: boolean }) => {},
    /** Stop the runtime and release it. */
    disposeRuntime: (_, _params: { reason: string }) => {},
    /** Report a prompt that will never run (`prompt-rejected` on the feed). */
    rejectPrompt: (_, _params: { messageId: string; reason: string }) => {},
  },
  delays: {
    /** The idle release: the machine's own timer, armed on entering `idle` and cancelled on leaving it. */
    idleMs: ({ context }) => context.idleMs,
  },
  guards: {
    rejectsWhenBusy: ({ event }) => event.type === 'PROMPT' && event.admission === 'reject',
    staleRun: ({ context, event }) =>
      (event.type === 'ABORT' || event.type === 'PROMPT' || event.type === 'TAKE_QUEUE') && event.run !== undefined && event.run !== context.run,
    taking: ({ context }) => context.takeReplyTo !== undefined,
    carriesPrompts: ({ context, event }) => event.type === 'SETTLED' && carried(context, event).length > 0,
    knownDialog: ({ context, event }) => 'dialogId' in event && context.dialogs.includes(event.dialogId),
    noOpenDialogs: ({ context }) => context.dialogs.length === 0,
    asked: ({ context }) => context.asked === true,
  },
})

const { enqueueActions } = threadSetup

const status = (busy: boolean, live = true) =>
  ({ type: 'publishStatus', params: ({ context }: { context: ThreadContext }) => ({ live, busy, run: context.run }) }) as const

/** Questions become child dialog actors; a refused one resolves its cancel value and shows nothing. */
const spawnDialog = (refused: boolean) =>
  enqueueActions(({ event, enqueue }) => {
    if (event.type !== 'ASK') return
    const { dialogId: id, spec, origin, timeoutMs, signal } = event
    enqueue.spawnChild('dialog', { id, input: { id, spec, origin, timeoutMs, signal, refused } })
    enqueue.assign({ dialogs: ({ context }) => [...context.dialogs, id] })
  })

const settleDialogs = (type: 'ABORT' | 'CANCEL') =>
  enqueueActions(({ context, enqueue }) => {
    for (const id of context.dialogs) enqueue.sendTo(id, { type })
  })

const forward = (type: 'ANSWER' | 'CANCEL' | 'ABORT') => ({
  guard: 'knownDialog' as const,
  actions: enqueueActions(({ event, enqueue, self }) => {
    if (event.type !== 'DIALOG.ANSWER' && event.type !== 'DIALOG.CANCEL' && event.type !== 'DIALOG.SIGNAL') return
    // The dialog may have ended in this same instant (its timeout, the stop that fired its signal)
    // and its done event is still on its way: an answer is too late, a signal changes nothing.
    if (self?.getSnapshot?.().children[event.dialogId]?.getSnapshot().status === 'done') {
      if (event.type !== 'DIALOG.SIGNAL') enqueue.emit({ type: 'dialog.gone', replyTo: replyToOf(event) })
      return
    }
    const replyTo = replyToOf(event)
    enqueue.sendTo(
      event.dialogId,
      event.type === 'DIALOG.ANSWER' ? { type: 'ANSWER', answer: event.answer, replyTo } : type === 'CANCEL' ? { type, replyTo } : { type: 'ABORT' },
    )
  }),
})

/** A human's answer or cancel naming no open question is replied `dialog.gone`; the dialog is never reached. */
const forwardRequest = (type: 'ANSWER' | 'CANCEL') => [
  forward(type),
  { actions: threadSetup.emit(({ event }) => ({ type: 'dialog.gone', replyTo: replyToOf(event) }) as const) },
]

const replyToOf = (event: ThreadEvent) => ('replyTo' in event && event.replyTo) || ''

/** The ask-queue, at the thread's first turn. */
const openAskQueue = enqueueActions(({ context, enqueue }) => {
  enqueue.assign({ asked: true })
  enqueue.spawnChild('askQueue', { id: 'askQueue', systemId: `askQueue:${context.threadId}` })
})

/** A turn (or its tool call's abort) to the ask-queue, which decides when it is shown. */
const toAskQueue = threadSetup.sendTo('askQueue', ({ event }) =>
  event.type === 'TURN' ? { type: 'ASK' as const, askId: event.askId } : { type: 'SIGNAL' as const, askId: event.type === 'TURN.SIGNAL' ? event.askId : '' },
)

/** The stop's one reply, to the request that asked for it. */
const stopAnswered = (restored: (args: { event: ThreadEvent }) => WaitingPrompt[]) =>
  threadSetup.emit(({ context, event }) => ({ type: 'abort.answered', replyTo: context.stopReplyTo ?? '', restored: restored({ event }) }) as const)

const abortRefused = (reason: 'idle' | 'stale-run' | 'not-live') =>
  threadSetup.emit(({ event }) => ({ type: 'abort.refused', replyTo: replyToOf(event), reason }) as const)

const takeRefused = (reason: 'idle' | 'stale-run' | 'not-live') =>
  threadSetup.emit(({ event }) => ({ type: 'take.refused', replyTo: replyToOf(event), reason }) as const)

/** A take-back answered at once with nothing: another take or a stop already has the queue. */
const takeAnsweredEmpty = threadSetup.emit(({ event }) => ({ type: 'take.answered', replyTo: replyToOf(event), restored: [] }) as const)

/** The take-back's one reply, to the request that asked for it; the clearer is let go and the run goes on. */
const takeAnswered = (restored: (args: { event: ThreadEvent }) => WaitingPrompt[]) =>
  threadSetup.enqueueActions(({ context, event, enqueue }) => {
    enqueue.emit({ type: 'take.answered', replyTo: context.takeReplyTo ?? '', restored: restored({ event }) })
    enqueue.stopChild('takeQueue')
    enqueue.assign({ takeReplyTo: undefined })
  })

const refuse = (reason: 'busy' | 'stale-run') =>
  threadSetup.emit(({ event }) => ({ type: 'prompt.refused', messageId: event.type === 'PROMPT' ? event.messageId : '', reason }) as const)

/** Delete or shutdown. A run it interrupts still ends on the feed with `settled {aborted: true}`. */
const disposeWith = (interrupted: boolean) =>
  ({
    target: '#thread.disposing',
    actions: threadSetup.assign({
      closing: ({ event }) =>
        event.type === 'DISPOSE' ? { reason: event.reason, dialogOutcome: event.dialogOutcome, interrupted } : undefined,
    }),
  }) as const
const dispose = disposeWith(false)
const disposeRun = disposeWith(true)

const recordSettled = {
  type: 'recordSettled',
  params: ({ context, event }: { context: ThreadContext; event: ThreadEvent }) => ({
    run: context.run,
    aborted: event.type === 'SETTLED' && event.aborted,
  }),
} as const

/** The run's own settle, from running or aborting: record it, then start whatever was carried over. */
const settled = [
  {
    guard: 'carriesPrompts' as const,
    target: '#thread.running',
    reenter: true,
    actions: [
      recordSettled,
      enqueueActions(({ context, event, enqueue }) => {
        if (event.type !== 'SETTLED') return
        const [first, ...rest] = carried(context, event)
        const run = context.run + 1
        enqueue.assign({ run, pending: [] })
        enqueue({ type: 'startRun', params: { prompt: first, run } })
        for (const p of rest) enqueue({ type: 'queuePrompt', params: { prompt: p } })
        // Only the pending prompts' callers still wait for an answer; unclaimed ones had theirs.
        for (const p of context.pending) enqueue.emit(admitted(p.messageId, run, p !== first))
      }),
    ],
  },
  { target: '#thread.idle', actions: recordSettled },
]

export const threadMachine = threadSetup.createMachine({
  id: 'thread',
  context: ({ input }) => ({ threadId: input.threadId, run: input.run ?? 0, idleMs: input.idleMs, dialogs: [], pending: [] }),
  initial: 'cold',
  on: {
    // In every state, as the queue was always there to take a turn; the queue itself decides.
    TURN: [{ guard: 'asked', actions: toAskQueue }, { actions: [openAskQueue, toAskQueue] }],
    'TURN.SIGNAL': { guard: 'asked', actions: toAskQueue },
    // A question is refused (never shown, resolved with its cancel value) unless the state takes
    // questions (idle, running): while the runtime is built, while a stop is pending (it would
    // outlive the stop), and while going cold or disposed — there a question can only arrive
    // re-entrantly, from a tool's abort listener that asks as the runtime is told to stop.
    ASK: { actions: spawnDialog(true) },
    'DIALOG.ANSWER': forwardRequest('ANSWER'),
    'DIALOG.CANCEL': forwardRequest('CANCEL'),
    'DIALOG.SIGNAL': forward('ABORT'),
    // A dialog child reached its final state: forget its id and release the child.
    ['xstate.done.actor.*' as 'LIVE']: {
      actions: enqueueActions(({ context, event, enqueue }) => {
        const id = (event as { actorId?: string }).actorId
        if (id === undefined || !context.dialogs.includes(id)) return
        enqueue.assign({ dialogs: context.dialogs.filter((d) => d !== id) })
        enqueue.stopChild(id)
      }),
    },
  },
  states: {
    // No runtime, no open question, no prompt: the registry builds the runtime (LIVE) before it
    // sends a prompt, and a dispose would have nothing to stop.
    cold: {
      on: {
        LIVE: { target: 'idle', actions: assign({ run: ({ context, event }) => Math.max(context.run, event.run ?? 0) }) },
        ABORT: { actions: abortRefused('not-live') },
        TAKE_QUEUE: { actions: takeRefused('not-live') },
      },
    },
    idle: {
      entry: status(false),
      // Nothing ran for idleMs: go cold.
      after: { idleMs: 'retiring' },
      on: {
        PROMPT: [
          // Meant for a run that is over, and a newer one ran since. (Meant for the run that just ended: it starts the next, as a follow-up would.)
          { guard: 'staleRun', actions: refuse('stale-run') },
          {
            target: 'running',
            actions: [
              assign({ run: ({ context }) => context.run + 1 }),
              { type: 'startRun', params: ({ context, event }) => ({ prompt: promptOf(event), run: context.run }) },
              emit(({ context, event }) => admitted(event.messageId, context.run, false)),
            ],
          },
        ],
        // An extension started a run (pi.sendUserMessage, a triggered turn): it is the thread's next
        // run, busy and stoppable like any, and prompts sent meanwhile queue into it.
        RUN_STARTED: {
          target: 'running',
          actions: [assign({ run: ({ context }) => context.run + 1 }), { type: 'adoptRun', params: ({ context }) => ({ run: context.run }) }],
        },
        ABORT: { actions: abortRefused('idle') },
        TAKE_QUEUE: { actions: takeRefused('idle') },
        ASK: { actions: spawnDialog(false) },
        DISPOSE: dispose
      },
    },
    running: {
      entry: status(true),
      on: {
        PROMPT: [
          { guard: 'staleRun', actions: refuse('stale-run') },
          { guard: 'rejectsWhenBusy', actions: refuse('busy') },
          {
            actions: [
              { type: 'queuePrompt', params: ({ event }) => ({ prompt: promptOf(event) }) },
              emit(({ context, event }) => admitted(event.messageId, context.run, true)),
            ],
          },
        ],
        ABORT: [
          { guard: 'staleRun', actions: abortRefused('stale-run') },
          { target: 'aborting', actions: assign({ stopReplyTo: ({ event }) => replyToOf(event) }) },
        ],
        // pi's Alt+Up: the queue comes back as a stop hands it back, and the run carries on.
        TAKE_QUEUE: [
          { guard: 'staleRun', actions: takeRefused('stale-run') },
          { guard: 'taking', actions: takeAnsweredEmpty },
          {
            actions: enqueueActions(({ context, event, enqueue }) => {
              enqueue.assign({ takeReplyTo: replyToOf(event) })
              enqueue.spawnChild('clearQueue', { id: 'takeQueue', input: { run: context.run } })
            }),
          },
        ],
        QUEUE_CLEARED: {
          guard: 'taking',
          actions: takeAnswered(({ event }) => (event.type === 'QUEUE_CLEARED' ? [...event.steering, ...event.followUp] : [])),
        },
        // The run goes on; what the runtime held is lost and said so, as a stop's failed clear.
        QUEUE_CLEAR_FAILED: {
          guard: 'taking',
          actions: [
            {
              type: 'recordError',
              params: ({ event }) => ({ message: `the queue could not be cleared: ${event.type === 'QUEUE_CLEAR_FAILED' ? event.message : ''}` }),
            },
            takeAnswered(() => []),
          ],
        },
        ASK: { actions: spawnDialog(false) },
        SETTLED: settled,
        DISPOSE: disposeRun
      },
    },
    aborting: {
      initial: 'clearing',
      on: {
        PROMPT: [
          { guard: 'staleRun', actions: refuse('stale-run') },
          { guard: 'rejectsWhenBusy', actions: refuse('busy') },
          { actions: assign({ pending: ({ context, event }) => [...context.pending, promptOf(event)] }) },
        ],
        // The stop took the queue (and its caller has it): a take-back gets nothing.
        TAKE_QUEUE: [{ guard: 'staleRun', actions: takeRefused('stale-run') }, { actions: takeAnsweredEmpty }],
        SETTLED: settled,
        DISPOSE: disposeRun
      },
      states: {
        clearing: {
          invoke: { id: 'clearQueue', src: 'clearQueue', input: ({ context }) => ({ run: context.run }) },
          on: {
            QUEUE_CLEARED: {
              target: 'stopping',
              actions: [
                stopAnswered(({ event }) => (event.type === 'QUEUE_CLEARED' ? [...event.steering, ...event.followUp] : [])),
                'tellRuntimeAbort',
                settleDialogs('ABORT'),
              ],
            },
            // A stop must stop: the loss is said, nothing is restored, and the runtime is still told.
            QUEUE_CLEAR_FAILED: {
              target: 'stopping',
              actions: [
                {
                  type: 'recordError',
                  params: ({ event }) => ({ message: `the queue could not be cleared: ${event.type === 'QUEUE_CLEAR_FAILED' ? event.message : ''}` }),
                },
                stopAnswered(() => []),
                'tellRuntimeAbort',
                settleDialogs('ABORT'),
              ],
            },
          },
        },
        stopping: {
          on: {
            // The first stop took the queue and told the runtime; a repeat gets the same answer and nothing more.
            ABORT: [
              { guard: 'staleRun', actions: abortRefused('stale-run') },
              { actions: emit(({ event }) => ({ type: 'abort.answered', replyTo: replyToOf(event), restored: [] }) as const) },
            ],
          },
        },
      },
    },
    // Going cold: every open dialog settles `cancelled` first, so its settle precedes the status frame.
    retiring: {
      entry: settleDialogs('CANCEL'),
      always: {
        guard: 'noOpenDialogs',
        target: 'cold',
        actions: [{ type: 'disposeRuntime', params: { reason: 'idle' } }, status(false, false)],
      },
    },
    // Disposing (delete or shutdown): the runtime is stopped first (its queued prompts reported
    // rejected), then every open dialog settles, and only then the thread is gone.
    disposing: {
      entry: [
        enqueueActions(({ context, enqueue }) => {
          const { reason, dialogOutcome } = context.closing ?? { reason: 'disposed', dialogOutcome: 'cancelled' }
          for (const p of context.pending) {
            enqueue({ type: 'rejectPrompt', params: { messageId: p.messageId, reason } })
            enqueue.emit({ type: 'prompt.refused', messageId: p.messageId, reason: 'disposed', closing: reason })
          }
          enqueue.assign({ pending: [] })
          enqueue({ type: 'disposeRuntime', params: { reason } })
          for (const id of context.dialogs) enqueue.sendTo(id, { type: dialogOutcome === 'aborted' ? 'ABORT' : 'CANCEL' })
        }),
      ],
      always: {
        guard: 'noOpenDialogs',
        target: 'disposed',
        actions: enqueueActions(({ context, enqueue }) => {
          if (context.closing?.interrupted) enqueue({ type: 'recordSettled', params: { run: context.run, aborted: true } })
        }),
      },
    },
    disposed: {
      type: 'final',
      entry: status(false, false),
    },
  },
})

function promptOf(event: Prompt): PromptRequest {
  return { messageId: event.messageId, text: event.text, admission: event.admission, deliverAs: event.deliverAs }
}

export type ThreadMachine = typeof threadMachine
export type ThreadActor = ActorRefFrom<ThreadMachine>

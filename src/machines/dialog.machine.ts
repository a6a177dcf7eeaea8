/**
 * One question asked of a human: asked → open (parked) → settled, exactly once.
 *
 * Every way the wait can end — an answer, a browser cancel or dispose, the extension's timeout, the
 * extension's signal or the run's stop — crosses the one `settled` state, whose entry records the
 * settle on the feed BEFORE it resolves the extension. The first path wins; once final, later events
 * find no actor to move. Two exceptions never show the question at all and resolve the runtime's
 * cancel value with no request and no settle: a signal already aborted when asked, and a question
 * asked while the thread takes none (being built, stopping, going cold or disposed).
 *
 * Its parent (the thread) learns that it ended from its done event, and forgets the id.
 *
 * A terminal component (`spec.method: 'terminal'`, pi's `ctx.ui.custom()`) is a question like any
 * other — open, settled once, aborted by a stop, cancelled by a tab — except that no payload answers
 * it (validateDialogAnswer refuses every one): it is answered when the component calls `done`, which
 * the host sends as DONE. DONE means nothing to any other question.
 *
 * It also decides an answer: a payload that answers THIS question settles it and is replied
 * `dialog.answered`; anything else leaves it open and is replied `dialog.refused` with the reason
 * (`validateDialogAnswer`). A browser cancel is replied `dialog.answered` too: the question is done.
 * Replies are emitted with the caller's `replyTo`, as the thread's are.
 *
 * Time and the signal are its own: the extension's timeout is a delayed TIMEOUT the open question
 * raises to itself on entry (an `after` delay, armed only when it has a timeout; cancelled on exit),
 * on the actor's clock, and the
 * extension's AbortSignal is listened to by an invoked callback actor for as long as it is open.
 * A fired signal is reported to the parent (the thread), which sends back ABORT: the runtime fires
 * a run's signals as the thread stops or deletes the run, and then the thread's own ending (aborted,
 * cancelled) must win — the report reaches the thread after the event it is taking.
 * The feed and the extension's promise arrive as provided actions.
 */
import { assign, cancel, emit, enqueueActions, fromCallback, sendParent, setup } from 'xstate'
import {
  validateDialogAnswer,
  type DialogAnswer,
  type DialogOrigin,
  type DialogOutcome,
  type DialogSpec,
} from '../schemas/index.js'

/** Timeouts beyond what a timer can hold (about 24.8 days) mean "no timeout", as do none and 0. */
export const MAX_TIMER_MS = 2 ** 31 - 1

/** The timeout a question waits under: the extension's, when a timer can hold it. */
export function expiryOf(timeoutMs: number | undefined): number | undefined {
  return timeoutMs !== undefined && timeoutMs > 0 && timeoutMs <= MAX_TIMER_MS ? timeoutMs : undefined
}

export interface DialogInput {
  id: string
  spec: DialogSpec
  origin: DialogOrigin
  /** The extension's timeout (ms); the question expires this long after it was asked. */
  timeoutMs?: number
  /** The extension's signal: aborted, it takes the question back (already aborted: never shown). */
  signal?: AbortSignal
  /** The thread takes no questions now (being built, stopping, going cold or disposed). */
  refused?: boolean
}

export interface DialogContext extends DialogInput {
  /** The timeout it expires after, once `expiryOf` kept it; none: it waits until something else ends it. */
  expiresIn?: number
  outcome?: DialogOutcome
  answer?: DialogAnswer
}

export type DialogEvent =
  /** An answer as it arrived: checked here, against this question. */
  | { type: 'ANSWER'; answer: unknown; replyTo?: string }
  | { type: 'CANCEL'; replyTo?: string }
  /** Its own timer: raised to itself, `expiry` after it opened, when it has a timeout. */
  | { type: 'TIMEOUT' }
  /** The run was stopped, the thread disposed, or (through the thread) the extension's own signal fired. */
  | { type: 'ABORT' }
  /** The extension's signal fired (from the invoked listener): reported to the parent, which decides. */
  | { type: 'SIGNALLED' }
  /** A terminal component called `done(value)`: the host sends it; no payload from a tab can. */
  | { type: 'DONE' }

export type DialogEmitted =
  | { type: 'dialog.answered'; replyTo: string }
  | { type: 'dialog.refused'; replyTo: string; refusal: string }

const replyTo = (event: DialogEvent) => ('replyTo' in event && event.replyTo) || ''

export const dialogMachine = setup({
  types: {
    input: {} as DialogInput,
    context: {} as DialogContext,
    events: {} as DialogEvent,
    emitted: {} as DialogEmitted,
  },
  actors: {
    /** The extension's signal, listened to while the question is open: its abort comes back as SIGNALLED. */
    signal: fromCallback<DialogEvent, { signal?: AbortSignal }>(({ input, sendBack }) => {
      const { signal } = input
      if (!signal) return
      const onAbort = () => sendBack({ type: 'SIGNALLED' })
      signal.addEventListener('abort', onAbort, { once: true })
      return () => signal.removeEventListener('abort', onAbort)
    }),
  },
  delays: {
    /** The extension's timeout, from when the question was shown (it is shown as it is asked). */
    expiry: ({ context }) => context.expiresIn ?? MAX_TIMER_MS,
  },
  actions: {
    /** Emit `extension-ui-request` on the thread's feed (with `expiresAt` when it expires). */
    showRequest: () => {},
    /** Emit `dialog-settled {id, outcome}` on the thread's feed. */
    recordSettle: () => {},
    /** Resolve the extension's promise with the outcome (and the answer, when answered). */
    resolveExtension: () => {},
    /** Resolve the extension with its cancel value; nothing was shown, so nothing is settled. */
    resolveWithdrawn: () => {},
  },
  guards: {
    withdrawn: ({ context }) => Boolean(context.signal?.aborted || context.refused),
    expires: ({ context }) => context.expiresIn !== undefined,
    isTerminal: ({ context }) => context.spec.method === 'terminal',
    answersThisDialog: ({ context, event }) =>
      event.type === 'ANSWER' && validateDialogAnswer(context.spec, event.answer) === undefined,
  },
}).createMachine({
  id: 'dialog',
  context: ({ input }) => ({ ...input, expiresIn: expiryOf(input.timeoutMs) }),
  initial: 'asked',
  states: {
    asked: {
      always: [{ guard: 'withdrawn', target: 'withdrawn' }, { target: 'open' }],
    },
    open: {
      // The timer is xstate's own delayed event (what `after` compiles to), armed only for a question
      // that expires, so one without a timeout holds no timer; leaving `open` any way cancels it.
      entry: [
        'showRequest',
        enqueueActions(({ context, enqueue }) => {
          if (context.expiresIn !== undefined) enqueue.raise({ type: 'TIMEOUT' }, { id: 'expiry', delay: 'expiry' })
        }),
      ],
      exit: cancel('expiry'),
      invoke: { id: 'signal', src: 'signal', input: ({ context }) => ({ signal: context.signal }) },
      on: {
        ANSWER: [
          {
            guard: 'answersThisDialog',
            target: 'settled',
            actions: [
              assign({ outcome: 'answered', answer: ({ event }) => event.answer as DialogAnswer }),
              emit(({ event }) => ({ type: 'dialog.answered', replyTo: replyTo(event) }) as const),
            ],
          },
          {
            actions: emit(({ context, event }) => ({
              type: 'dialog.refused',
              replyTo: replyTo(event),
              refusal: event.type === 'ANSWER' ? (validateDialogAnswer(context.spec, event.answer) ?? 'not an answer') : 'not an answer',
            }) as const),
          },
        ],
        CANCEL: {
          target: 'settled',
          actions: [assign({ outcome: 'cancelled' }), emit(({ event }) => ({ type: 'dialog.answered', replyTo: replyTo(event) }) as const)],
        },
        TIMEOUT: { guard: 'expires', target: 'settled', actions: assign({ outcome: 'timeout' }) },
        ABORT: { target: 'settled', actions: assign({ outcome: 'aborted' }) },
        DONE: { guard: 'isTerminal', target: 'settled', actions: assign({ outcome: 'answered' }) },
        SIGNALLED: { actions: sendParent(({ context }) => ({ type: 'DIALOG.SIGNAL', dialogId: context.id })) },
      },
    },
    settled: {
      type: 'final',
      entry: ['recordSettle', 'resolveExtension'],
    },
    withdrawn: {
      type: 'final',
      entry: 'resolveWithdrawn',
    },
  },
  output: ({ context }) => ({ outcome: context.outcome, answer: context.answer }),
})

export type DialogMachine = typeof dialogMachine

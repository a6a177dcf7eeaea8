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
 * It also decides an answer: a payload that answers THIS question settles it and is replied
 * `dialog.answered`; anything else leaves it open and is replied `dialog.refused` with the reason
 * (`validateDialogAnswer`). A browser cancel is replied `dialog.answered` too: the question is done.
 * Replies are emitted with the caller's `replyTo`, as the thread's are.
 *
 * Pure: the feed, the timer, the signal and the extension's promise arrive as provided actions.
 */
import { assign, emit, setup } from 'xstate'
import {
  validateDialogAnswer,
  type DialogAnswer,
  type DialogOrigin,
  type DialogOutcome,
  type DialogSpec,
} from '../schemas/index.js'

export interface DialogInput {
  id: string
  spec: DialogSpec
  origin: DialogOrigin
  expiresAt?: number
  /** The extension's signal was already aborted when it asked. */
  signalAborted?: boolean
  /** The thread takes no questions now (being built, stopping, going cold or disposed). */
  refused?: boolean
}

export interface DialogContext extends DialogInput {
  outcome?: DialogOutcome
  answer?: DialogAnswer
}

export type DialogEvent =
  /** An answer as it arrived: checked here, against this question. */
  | { type: 'ANSWER'; answer: unknown; replyTo?: string }
  | { type: 'CANCEL'; replyTo?: string }
  | { type: 'TIMEOUT' }
  | { type: 'ABORT' }

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
  actions: {
    /** Emit `extension-ui-request` on the thread's feed. */
    showRequest: () => {},
    /** Start the extension's timeout and listen to its signal; their expiry comes back as events. */
    watch: () => {},
    unwatch: () => {},
    /** Emit `dialog-settled {id, outcome}` on the thread's feed. */
    recordSettle: () => {},
    /** Resolve the extension's promise with the outcome (and the answer, when answered). */
    resolveExtension: () => {},
    /** Resolve the extension with its cancel value; nothing was shown, so nothing is settled. */
    resolveWithdrawn: () => {},
  },
  guards: {
    withdrawn: ({ context }) => Boolean(context.signalAborted || context.refused),
    answersThisDialog: ({ context, event }) =>
      event.type === 'ANSWER' && validateDialogAnswer(context.spec, event.answer) === undefined,
  },
}).createMachine({
  id: 'dialog',
  context: ({ input }) => ({ ...input }),
  initial: 'asked',
  states: {
    asked: {
      always: [{ guard: 'withdrawn', target: 'withdrawn' }, { target: 'open' }],
    },
    open: {
      entry: ['showRequest', 'watch'],
      exit: 'unwatch',
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
        TIMEOUT: { target: 'settled', actions: assign({ outcome: 'timeout' }) },
        ABORT: { target: 'settled', actions: assign({ outcome: 'aborted' }) },
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

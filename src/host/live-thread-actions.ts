/**
 * The thread machine's provided actions and helper actors: how a live thread (live-thread.ts) carries
 * out what its machine decided — a call to its runtime, an observation on its feed, a question
 * resolved. Nothing here decides.
 *
 * Provided once for every thread: `provide` copies the machine's whole state tree (≈ 30 KiB a thread,
 * most of an idle thread's host-side heap). An action finds its thread by the actor it runs under —
 * the thread's own, or one beneath it (a dialog, the ask-queue, an invoked helper: threads share one
 * actor system, thread-system.ts) — and reaches the thread's parts through `ThreadHands`.
 */
import { fromCallback, fromPromise, type AnyActorRef } from 'xstate'
import type { DialogOutcome } from '../schemas/index.js'
import { chosenOf } from '../schemas/dialog-chosen.js'
import { askQueueMachine, type CardOutcome } from '../machines/ask-queue.machine.js'
import { dialogMachine, type DialogEmitted } from '../machines/dialog.machine.js'
import { threadMachine, type ThreadEvent, type WaitingPrompt } from '../machines/thread.machine.js'
import type { AgentRuntime, QueuedPrompt } from '../runtime/port.js'
import { errorText } from '../runtime/extension-ui.js'
import type { AskBridge } from './ask-bridge.js'
import type { DialogBridge } from './dialog-bridge.js'
import type { Feed } from './feed.js'
import { parentOf } from '../shared/xstate-internals.js'

/**
 * What an action reaches of thread `T`. One object for every thread, each hand given the thread:
 * a thread's parts stay its own (private), and no thread holds an object of closures for its machine.
 */
export interface ThreadHands<T> {
  /** The thread whose actor this is, if it is a thread's. */
  threadOf(actor: AnyActorRef): T | undefined
  feed(thread: T): Feed
  /** None before the runtime is attached, or once its release has begun. */
  runtime(thread: T): AgentRuntime | undefined
  dialogs(thread: T): DialogBridge
  asks(thread: T): AskBridge
  /** Cluster mode: resolves once what the thread wrote so far is in its log (`LiveThreadOptions.inLog`). */
  inLog(thread: T): (() => Promise<unknown>) | undefined
  /** A prompt as the runtime takes it: its id, its text and the images it was admitted with. */
  withImages(thread: T, prompt: { messageId: string; text: string }): QueuedPrompt
  /** A prompt carried by a settle is pi's now: a failure after this does not hand it back. */
  handedOver(thread: T, messageId: string): void
  /** The run the machine settled on the feed: one a failure finds still busy is not settled twice. */
  settled(thread: T, run: number): void
  /** Lets go of the runtime (the machine disposed the thread). */
  release(thread: T, reason: string): void
  /** A reply an open question emitted, for the request that waits for it. */
  reply(thread: T, reply: DialogEmitted): void
  log(thread: T, level: 'debug' | 'info' | 'warn' | 'error', message: string): void
}

export function provideThreadMachine<T>(hands: ThreadHands<T>) {
  const of = (self: AnyActorRef): T => {
    for (let ref: AnyActorRef | undefined = self; ref; ref = parentOf(ref)) {
      const thread = hands.threadOf(ref)
      if (thread) return thread
    }
    throw new Error(`actor ${self.id} runs under no thread`)
  }
  return threadMachine.provide({
    actions: {
      publishStatus: ({ self }, status) => void hands.feed(of(self)).append({ type: 'status', ...status }),
      startRun: ({ self }, { prompt, run }) => {
        const thread = of(self)
        hands.runtime(thread)?.prompt(hands.withImages(thread, prompt), run)
        hands.handedOver(thread, prompt.messageId)
      },
      adoptRun: ({ self }, { run }) => hands.runtime(of(self))?.adoptRun(run),
      queuePrompt: ({ self }, { prompt }) => {
        const thread = of(self)
        const queued = hands.withImages(thread, prompt)
        if (prompt.deliverAs === 'followUp') hands.runtime(thread)?.followUp(queued)
        else hands.runtime(thread)?.steer(queued)
        hands.handedOver(thread, prompt.messageId)
      },
      recordError: ({ self }, { message }) => {
        const thread = of(self)
        hands.log(thread, 'error', message)
        hands.feed(thread).append({ type: 'failure', message })
      },
      tellRuntimeAbort: ({ self }) => {
        const thread = of(self)
        hands.runtime(thread)?.abort().catch((error) => hands.log(thread, 'error', `abort failed: ${errorText(error)}`))
      },
      recordSettled: ({ self }, settled) => {
        const thread = of(self)
        hands.settled(thread, settled.run)
        hands.feed(thread).append({ type: 'settled', ...settled })
      },
      disposeRuntime: ({ self }, { reason }) => hands.release(of(self), reason),
      rejectPrompt: ({ self }, { messageId, reason }) => {
        hands.feed(of(self)).append({ type: 'prompt-rejected', messageId, reason })
      },
    },
    actors: {
      // Answers as it starts: the runtime's clearQueue is synchronous, so the stop's reply comes before anything can settle the run.
      clearQueue: fromCallback<ThreadEvent, { run: number }>(({ sendBack, self }) => {
        try {
          const cleared = hands.runtime(of(self))?.clearQueue() ?? { steering: [], followUp: [] }
          sendBack({ type: 'QUEUE_CLEARED', steering: cleared.steering.map(waiting), followUp: cleared.followUp.map(waiting) })
        } catch (error) {
          sendBack({ type: 'QUEUE_CLEAR_FAILED', message: errorText(error) })
        }
      }),
      dialog: dialogMachine.provide({
        actions: {
          showRequest: ({ context, self }) => {
            const thread = of(self)
            // An open question replies to the answers that name it (answered or refused) itself.
            self.on('*', (reply) => hands.reply(thread, reply as DialogEmitted))
            hands.feed(thread).append({
              type: 'extension-ui-request',
              id: context.id,
              blocking: true,
              dialog: context.spec,
              origin: context.origin,
              // when the dialog's own timer will fire, for the tabs' countdown (it is shown as it starts)
              ...(context.expiresIn !== undefined ? { expiresAt: Date.now() + context.expiresIn } : {}),
            })
            hands.dialogs(thread).shown(context.id)
          },
          recordSettle: ({ context, self }) => {
            const chosen = context.outcome === 'answered' ? chosenOf(context.spec, context.answer) : undefined
            hands.feed(of(self)).append({ type: 'dialog-settled', id: context.id, outcome: context.outcome as DialogOutcome, ...(chosen !== undefined ? { chosen } : {}) })
          },
          resolveExtension: ({ context, self }) => {
            const thread = of(self)
            const resolution = { outcome: context.outcome!, answer: context.answer }
            const inLog = hands.inLog(thread)
            if (inLog) hands.dialogs(thread).resolveAfter(context.id, resolution, inLog())
            else hands.dialogs(thread).resolve(context.id, resolution)
          },
          resolveWithdrawn: ({ context, self }) => hands.dialogs(of(self)).resolve(context.id, { outcome: 'refused' }),
        },
      }),
      askQueue: askQueueMachine.provide({
        actors: {
          // Starts once the queue has taken its step, so opening the card (an ASK to the thread) never lands inside it.
          card: fromPromise<CardOutcome, { askId: string }>(({ input, self }) => hands.asks(of(self)).card(input.askId)),
        },
        actions: {
          resolve: ({ self }, { askId, status, answer }) => hands.asks(of(self)).resolve(askId, status, answer),
        },
      }),
    },
  })
}

/** The thread machine as every live thread runs it. */
export type ProvidedThreadMachine = ReturnType<typeof provideThreadMachine>

/** The prompt as the machine knows it: its id and text, nothing of the runtime's. */
function waiting(p: { messageId: string; text: string }): WaitingPrompt {
  return { messageId: p.messageId, text: p.text }
}

/**
 * The oracle: the thread machine itself (with its real dialog children), stepped beside the server.
 *
 * The server's live thread is the same machine with side effects that write the feed. Here the same
 * machine runs with recording stubs instead, and every stub that writes a frame on the server writes
 * an *expected* frame here: `publishStatus` → `status`, `recordSettled` → `settled`, a dialog's
 * `showRequest` / `recordSettle` → `extension-ui-request` / `dialog-settled`, `rejectPrompt` →
 * `prompt-rejected`, `recordError` → `error`, and `disposeRuntime` → one `prompt-rejected` per prompt
 * still queued in the runtime (what the host's release reports). The replies the machine emits
 * (`prompt.admitted`, `abort.answered`, `dialog.refused` …) are the predicted HTTP answers.
 *
 * The runtime is simulated only as far as the machine needs it: its queue (filled by `queuePrompt`,
 * emptied by `clearQueue`, which answers `QUEUE_CLEARED` at once as the pi adapter does, and by the
 * `user-message` frames that say the agent took a prompt), and the events the runtime sends the
 * machine, which are read off the feed: an `extension-ui-request` nobody expected is the runtime's
 * `ASK`, a `settled` nobody expected is the runtime's `SETTLED`. Time and signals are the machines'
 * own, so the model moves them as the feed says the server's moved: a retire is its simulated clock
 * moving on by its idleMs, a `dialog-settled {timeout}` that question's timeout elapsing, an
 * extension taking its question back that question's signal aborted.
 */
import { createActor, fromCallback, fromPromise, SimulatedClock, type AnyTransitionDefinition } from 'xstate'
import { askQueueMachine, type AskQueueEvent, type AskStatus, type CardOutcome } from '../../src/machines/ask-queue.machine.js'
import { dialogMachine, MAX_TIMER_MS, type DialogEmitted } from '../../src/machines/dialog.machine.js'
import { threadMachine, type PromptRequest, type ThreadEmitted, type ThreadEvent } from '../../src/machines/thread.machine.js'
import { transitionKey } from '../../src/machines/diagram.js'

/** A frame the machine itself writes on the server's feed, in the order it writes them. */
export type Expected =
  | { type: 'status'; live: boolean; busy: boolean; run: number }
  | { type: 'settled'; run: number; aborted: boolean }
  | { type: 'extension-ui-request'; id: string }
  | { type: 'dialog-settled'; id: string; outcome: string }
  | { type: 'prompt-rejected'; messageId: string; reason: string }
  | { type: 'failure' }

export const MACHINE_FRAMES = new Set(['status', 'settled', 'extension-ui-request', 'dialog-settled', 'prompt-rejected', 'failure'])

export interface Queued {
  /** The model's own id; the server's messageId once its 202 named it. */
  id: string
  serverId?: string
  text: string
  deliverAs: 'steer' | 'followUp'
}

export type Reply = ThreadEmitted | DialogEmitted

/** The model's idle release, on its simulated clock (the server's own value does not matter here). */
const MODEL_IDLE_MS = 1000
/** A question's timeout in the model: it elapses only when the feed says the server's did, never on the idle clock. */
export const MODEL_TIMEOUT_MS = MAX_TIMER_MS
/** The event a question's own timer raises when its timeout elapses. */
const EXPIRES = { type: 'TIMEOUT' } as const

/** Transitions taken by every model, for the coverage report (thread and dialog machines). */
export const taken = new Set<string>()

export class ThreadModel {
  readonly expected: Expected[] = []
  readonly replies = new Map<string, Reply[]>()
  /** The runtime's queue, as the machine filled it. */
  queue: Queued[] = []
  /** How many times the machine told the runtime to stop, per run. */
  readonly tells = new Map<number, number>()
  /** What each stop handed back (model ids), so a prompt's fate `restored` can be checked. */
  readonly restored = new Set<string>()
  /** Model prompt id → server messageId, and back. */
  readonly serverIds = new Map<string, string>()
  /** Transitions this model took (the graph search clears it per step). */
  readonly takenHere = new Set<string>()
  /** A model of the graph search, not of a walk: its transitions are not counted as taken against the server. */
  quiet = false
  /** The ask-queue's decisions: the asks it showed, in order (toolCallIds), and how it resolved each. */
  readonly askShown: string[] = []
  readonly askResolved = new Map<string, AskStatus>()
  /** Asks the queue holds (asked, not yet resolved): a stop's signal reaches each. */
  #asks = new Set<string>()
  #signal = false
  /** The machine's clock: time passes only when the feed says it did (the idle release). */
  readonly #clock = new SimulatedClock()
  /** Each question's signal (the model's stand-in for the extension's), by dialog id. */
  readonly #signals = new Map<string, AbortController>()
  readonly actor
  #n = 0

  /** `followUpsFirst`: a deliberately broken rule (test-only), to prove the walk notices a wrong `restored`. */
  constructor(readonly threadId: string, run = 0, readonly fault?: 'followUpsFirst') {
    const expect = (e: Expected) => this.expected.push(e)
    const machine = threadMachine.provide({
      actions: {
        publishStatus: (_, p) => expect({ type: 'status', ...p }),
        startRun: () => {},
        queuePrompt: (_, { prompt }) =>
          this.queue.push({ id: prompt.messageId, serverId: this.serverIds.get(prompt.messageId), text: prompt.text, deliverAs: prompt.deliverAs }),
        // pi's clearQueue never throws, so the walk never sees it; were it to, the frame is expected
        recordError: () => expect({ type: 'failure' }),
        tellRuntimeAbort: ({ context }) => {
          this.tells.set(context.run, (this.tells.get(context.run) ?? 0) + 1)
          // the runtime's abort fires every tool's signal: each waiting ask hears it (sent once this event is done)
          this.#signal = true
        },
        recordSettled: (_, p) => expect({ type: 'settled', ...p }),
        disposeRuntime: (_, { reason }) => {
          // The host's release clears the runtime's queue and reports each prompt rejected, at once.
          // steering first, then follow-ups, as the runtime's clearQueue hands them over
          for (const q of [...this.queue.filter((q) => q.deliverAs === 'steer'), ...this.queue.filter((q) => q.deliverAs === 'followUp')])
            expect({ type: 'prompt-rejected', messageId: q.id, reason })
          this.queue = []
        },
        rejectPrompt: (_, p) => expect({ type: 'prompt-rejected', ...p }),
      },
      actors: {
        clearQueue: fromCallback<ThreadEvent, { run: number }>(({ sendBack }) => {
          const steering = this.queue.filter((q) => q.deliverAs === 'steer')
          const followUp = this.queue.filter((q) => q.deliverAs === 'followUp')
          this.queue = []
          for (const q of [...steering, ...followUp]) this.restored.add(q.id)
          const [first, second] = this.fault === 'followUpsFirst' ? [followUp, steering] : [steering, followUp]
          const held = (q: Queued) => ({ messageId: q.id, text: q.text })
          sendBack({ type: 'QUEUE_CLEARED', steering: first.map(held), followUp: second.map(held) })
        }),
        dialog: dialogMachine.provide({
          actions: {
            showRequest: ({ context, self }) => {
              self.on('*', (reply) => this.#reply(reply as DialogEmitted))
              expect({ type: 'extension-ui-request', id: context.id })
            },
            recordSettle: ({ context }) => expect({ type: 'dialog-settled', id: context.id, outcome: context.outcome! }),
          },
        }),
        askQueue: askQueueMachine.provide({
          actors: {
            // the card is shown as the queue invokes it; how it ends is read off the feed (`cardEnded`)
            card: fromPromise<CardOutcome, { askId: string }>(({ input }) => {
              this.askShown.push(input.askId)
              return new Promise<CardOutcome>(() => {})
            }),
          },
          actions: {
            resolve: (_, { askId, status }) => {
              this.askResolved.set(askId, status)
              this.#asks.delete(askId)
            },
          },
        }),
      },
    })
    this.actor = createActor(machine, {
      input: { threadId, run, idleMs: MODEL_IDLE_MS },
      clock: this.#clock,
      inspect: (ev) => {
        if (ev.type === '@xstate.microstep')
          for (const t of (ev as unknown as { _transitions: AnyTransitionDefinition[] })._transitions) {
            if (!this.quiet) taken.add(transitionKey(t))
            this.takenHere.add(transitionKey(t))
          }
      },
    })
    this.actor.on('*', (e) => this.#reply(e as ThreadEmitted))
    this.actor.start()
  }

  #reply(reply: Reply) {
    const id = 'messageId' in reply ? reply.messageId : reply.replyTo
    this.replies.set(id, [...(this.replies.get(id) ?? []), reply])
  }

  get snapshot() {
    return this.actor.getSnapshot()
  }

  /** `idle`, `running`, `aborting.stopping`, `cold`, `disposed` … */
  get state(): string {
    const v = this.snapshot.value
    return typeof v === 'string' ? v : `aborting.${(v as { aborting: string }).aborting}`
  }

  get run(): number {
    return this.snapshot.context.run
  }

  get dialogs(): string[] {
    return this.snapshot.context.dialogs
  }

  get live(): boolean {
    return this.snapshot.status === 'active' && this.state !== 'cold'
  }

  nextId(prefix: string): string {
    return `${prefix}${++this.#n}`
  }

  send(event: ThreadEvent): void {
    if (event.type === 'ASK' && !event.signal) {
      const controller = new AbortController()
      this.#signals.set(event.dialogId, controller)
      event = { ...event, signal: controller.signal }
    }
    if (this.snapshot.status === 'active') this.actor.send(event)
    if (this.#signal) {
      this.#signal = false
      for (const askId of [...this.#asks]) this.ask({ type: 'SIGNAL', askId })
    }
  }

  /** The server's idle timer fired: the model's thread has been idle for its idleMs too. */
  elapseIdle(): void {
    this.#clock.increment(MODEL_IDLE_MS)
  }

  /** The server's question timed out: so does the model's (its own timer's event, to that question alone). */
  expire(dialogId: string): void {
    if (this.snapshot.status === 'active') this.snapshot.children[dialogId]?.send(EXPIRES as never)
  }

  /** The extension took its question back: the model's question hears its signal. */
  withdraw(dialogId: string): void {
    this.#signals.get(dialogId)?.abort()
  }

  /** An event of the thread's ask-queue (an `ask_user_question` call, or how its card ended). */
  ask(event: AskQueueEvent): void {
    if (this.snapshot.status !== 'active') return
    if (event.type === 'ASK') this.#asks.add(event.askId)
    // Through the thread, as the server's: the first turn spawns its ask-queue.
    this.actor.send({ type: event.type === 'ASK' ? 'TURN' : 'TURN.SIGNAL', askId: event.askId })
  }

  /**
   * The server's card for this ask ended (its dialog settled on the feed): the model's card ends the
   * same way. Its done event is delivered at once, as the card's promise would deliver it, so the
   * model is told in the order the feed shows.
   */
  cardEnded(askId: string, outcome: CardOutcome): void {
    const queue = this.snapshot.status === 'active' ? this.snapshot.children.askQueue : undefined
    if (!queue || (queue.getSnapshot() as { context: { current?: string } }).context.current !== askId) return
    queue.send({ type: 'xstate.done.actor.card', output: outcome } as never)
  }

  /**
   * The run a prompt's body names: the current one (in idle, the run that just ended), or a stale
   * one — an older run once there is one, else one not yet begun. 0 (no run yet) is not a body the
   * server takes (run ≥ 1): the caller expects a 400 and does not tell the machine.
   */
  runNamed(which: 'current' | 'stale'): number {
    if (which === 'current') return this.run
    return this.run >= 2 ? this.run - 1 : this.run + 7
  }

  /** `run`: the run the body names (`runNamed`), if any. */
  prompt(text: string, admission: PromptRequest['admission'], deliverAs: PromptRequest['deliverAs'], run?: number): string {
    const messageId = this.nextId('m')
    if (this.state === 'cold') this.send({ type: 'LIVE' })
    this.send({ type: 'PROMPT', messageId, text, admission, deliverAs, ...(run !== undefined ? { run } : {}) })
    return messageId
  }

  /** The replies to one request (normally one), taken off the list. */
  take(id: string): Reply[] {
    const r = this.replies.get(id) ?? []
    this.replies.delete(id)
    return r
  }
}

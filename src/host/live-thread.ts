/**
 * One thread's actor, wired to its runtime and its feed.
 *
 * The thread machine decides; the live thread only carries its decisions out (its provided actions:
 * live-thread-actions.ts) and turns runtime events into observations. Requests are sent as events and
 * answered by the events the machine emits, so a route never second-guesses the machine.
 */
import { randomUUID } from 'node:crypto'
import { createActor, type ActorRefFrom, type AnyActorRef, type Subscription } from 'xstate'
import type { CommandInfo, ObservationInput, PromptImage, ThinkingLevel } from '../schemas/index.js'
import type { dialogMachine } from '../machines/dialog.machine.js'
import type { PromptRequest, ThreadActor, ThreadEvent } from '../machines/thread.machine.js'
import type { AgentRuntime, NavigateResult, NavigateTarget, QueuedPrompt, RuntimeEvent, UiBridge } from '../runtime/port.js'
import { errorText } from '../runtime/extension-ui.js'
import { AskBridge } from './ask-bridge.js'
import { DialogBridge } from './dialog-bridge.js'
import { TerminalBridge, type TerminalInputOutcome } from './terminal-bridge.js'
import { SHARED_CLOCK } from './shared-clock.js'
import { ThreadUiBridge } from './thread-ui-bridge.js'
import { failedEnds } from './open-ends.js'
import { parentFor, stopChildren } from './thread-system.js'
import { provideThreadMachine, type ProvidedThreadMachine } from './live-thread-actions.js'
import { releaseRuntime } from './runtime-release.js'
import { PendingReplies, type AnswerOutcome, type PromptOutcome, type Reply, type StopOutcome, type TakeOutcome } from './live-thread-replies.js'
import type { Feed } from './feed.js'

export type { AbortOutcome, AnswerOutcome, PromptOutcome, StopOutcome, TakeOutcome } from './live-thread-replies.js'

export interface LiveThreadOptions {
  threadId: string
  feed: Feed
  /** The run counter to continue from (kept in the thread index). */
  run: number
  idleMs: number
  /** The host's thread system (thread-system.ts); none: the thread's actor has a system of its own. */
  system?: AnyActorRef
  log?: (level: 'debug' | 'info' | 'warn' | 'error', message: string) => void
  /** Called as the thread goes cold (idle timeout) or is disposed, from within its machine's step: the registry lets go of it. */
  onRetired: (thread: LiveThread) => void
  /**
   * Cluster mode: resolves once what the thread wrote so far is in its log. A question's answer
   * reaches the run only then, on a later turn of the event loop: the run never acts on an answer a
   * takeover would not find, and the run's next step (pi's turn, its writes) does not hold the node's
   * event loop while the answer's record is acknowledged, its followers here sent it and its 204 left.
   */
  inLog?: () => Promise<unknown>
}

export class LiveThread extends ThreadUiBridge {
  readonly #actor: ThreadActor
  readonly threadId: string
  readonly #feed: Feed
  /*
   * The bridges and maps below are made when first needed: an idle live thread that never asked,
   * showed a component or had a prompt with images holds none of them (each Map ≈ 0.2 KiB).
   */
  #dialogBridge?: DialogBridge
  #askBridge?: AskBridge
  #terminalBridge?: TerminalBridge
  /** Requests waiting for their one reply (live-thread-replies.ts); none while none waits. */
  #replies?: PendingReplies
  readonly #options: LiveThreadOptions
  #runtime?: AgentRuntime
  #unsubscribe?: () => void
  #disposing: Promise<void> = Promise.resolve()
  #subscription?: Subscription
  #retired = false
  /** The last run the machine settled on the feed: one a failure finds still busy is not settled twice. */
  #settledRun?: number
  /** While the machine takes a settle: the prompts it carries into the next run (a failure hands back those not in pi's queue). */
  #carrying?: QueuedPrompt[]
  #wasLive = false
  #releasing = false
  /**
   * Prompts' images by messageId, from admission until pi takes the prompt (its user message) or it
   * is refused: the machine carries ids and texts; whoever hands a prompt to the runtime adds its images.
   */
  #images?: Map<string, PromptImage[]>

  constructor(options: LiveThreadOptions) {
    super()
    this.#options = options
    this.threadId = options.threadId
    this.#feed = options.feed
    const systemId = `thread:${options.threadId}`
    const parent = parentFor(options.system, systemId)
    this.#actor = createActor(LiveThread.#machine(), {
      id: systemId,
      systemId,
      input: { threadId: options.threadId, run: options.run, idleMs: options.idleMs },
      // One timer per delay for every thread's machines, not one per idle thread (shared-clock.ts);
      // under a thread system, its clock (the same one) is what its scheduler uses.
      clock: SHARED_CLOCK,
      ...(parent ? { parent } : {}),
    })
    LiveThread.#byActor.set(this.#actor, this)
    this.#subscription = this.actor.subscribe({
      next: (snapshot) => {
        if (snapshot.status === 'done' || (snapshot.value === 'cold' && this.#runtime === undefined && this.#wasLive)) {
          this.#retire()
        }
      },
      error: (error) => {
        this.#log('error', `thread machine failed: ${String(error)}`)
        stopChildren(this.actor)
        this.#failed(error)
      },
    })
    this.actor.start()
  }

  get #dialogs(): DialogBridge {
    return (this.#dialogBridge ??= new DialogBridge(
      (event) => this.actor.send(event),
      () => this.actor.getSnapshot().status === 'active',
    ))
  }

  get #asks(): AskBridge {
    return (this.#askBridge ??= new AskBridge(
      // Through the thread machine, which makes the ask-queue at the first turn.
      () =>
        this.actor.getSnapshot().status === 'active'
          ? ({ type, askId }) => this.actor.send({ type: type === 'ASK' ? 'TURN' : 'TURN.SIGNAL', askId })
          : undefined,
      (request) => this.#dialogs.ask(request),
    ))
  }

  get #terminals(): TerminalBridge {
    return (this.#terminalBridge ??= new TerminalBridge({
      asks: this.#asks,
      dialogs: this.#dialogs,
      append: (observation) => this.#show(observation),
      // Straight to the component's own dialog machine: DONE is the host's word, never a tab's.
      done: (dialogId) => (this.actor.getSnapshot().children[dialogId] as ActorRefFrom<typeof dialogMachine> | undefined)?.send({ type: 'DONE' }),
      cancel: (dialogId) => this.actor.send({ type: 'DIALOG.CANCEL', dialogId }),
    }))
  }

  /**
   * The thread's actor. A getter, not an own property: a resting slot's machine is made again from
   * its context (thread-slot.ts), and xstate walks the context's enumerable properties as it does.
   */
  get actor(): ThreadActor {
    return this.#actor
  }

  /** The UI bridge the runtime is built with (thread-ui-bridge.ts): the thread itself. */
  get ui(): UiBridge {
    return this
  }

  protected uiView() {
    return this.#feed.view
  }

  protected uiShow(observation: ObservationInput): void {
    this.#show(observation)
  }

  protected uiDialogs(): DialogBridge {
    return this.#dialogs
  }

  protected uiAsks(): AskBridge {
    return this.#asks
  }

  protected uiTerminals(): TerminalBridge {
    return this.#terminals
  }

  #show(observation: ObservationInput): void {
    if (this.#releasing) return
    this.#feed.append(observation)
  }

  /** Attaches the built runtime: the thread is live from here on. */
  attach(runtime: AgentRuntime): void {
    this.#runtime = runtime
    this.#wasLive = true
    this.#unsubscribe = runtime.subscribe((event) => this.#onRuntimeEvent(event))
    this.actor.send({ type: 'LIVE', run: runtime.lastRun() })
  }

  get live(): boolean {
    const value = this.actor.getSnapshot().value
    return this.actor.getSnapshot().status === 'active' && value !== 'cold'
  }

  /** Resolves once the runtime is fully released (after an idle timeout or a dispose). */
  get released(): Promise<void> {
    return this.#disposing
  }

  get run(): number {
    return this.actor.getSnapshot().context.run
  }

  /** A run is in flight (running or stopping): the machine's state, not a flag of ours. */
  get busy(): boolean {
    const snapshot = this.actor.getSnapshot()
    return snapshot.status === 'active' && snapshot.value !== 'idle' && snapshot.value !== 'cold'
  }

  /** What pi handles itself in a prompt (none before the runtime is attached). */
  commands(): CommandInfo[] {
    return this.#runtime?.commands() ?? []
  }

  /** Starts an extension's shortcut handler (no machine event: it acts through the runtime); false when none has that key. */
  runShortcut(key: string): boolean {
    return this.#runtime?.runShortcut?.(key) ?? false
  }

  /** A message the model reads with the next prompt (what a revert did); none before the runtime is attached. */
  note(entry: { customType: string; text: string }): void {
    this.#runtime?.note?.(entry)
  }

  /** pi's compaction; the registry calls it only while idle. */
  async compact(instructions?: string): Promise<void> {
    await this.#runtime?.compact(instructions)
  }

  /** Whether the thread's extensions let a fork before its user message `messageId` go ahead. */
  async beforeFork(messageId: string): Promise<{ cancelled: boolean }> {
    return (await this.#runtime?.beforeFork?.(messageId)) ?? { cancelled: false }
  }

  /** Moves the conversation in place (thread-versions.ts), only while idle; `undefined`: the runtime keeps one branch. */
  async navigate(target: NavigateTarget): Promise<NavigateResult | undefined> {
    return this.#runtime?.navigate?.(target)
  }

  /** A model or thinking level for the runs to come; the registry calls it only while idle. */
  async configure(change: { model?: string; thinkingLevel?: ThinkingLevel }): Promise<void> {
    await this.#runtime?.configure(change)
  }

  /**
   * Resolves with the machine's answer: admitted now, admitted once a pending stop settles, or refused.
   * `messageId`: the id the host journaled the prompt under before sending it (one is made if not).
   */
  prompt(request: Omit<PromptRequest, 'messageId'> & { messageId?: string }, images?: PromptImage[]): Promise<PromptOutcome> {
    const messageId = request.messageId ?? randomUUID()
    if (images?.length) (this.#images ??= new Map()).set(messageId, images)
    return this.#request(messageId, { type: 'PROMPT', messageId, ...request }, { kind: 'rejected', reason: 'disposed' }, (reply) => {
      if (reply.type === 'prompt.admitted') return { kind: 'admitted', messageId, run: reply.run, queued: reply.queued }
      if (reply.type === 'prompt.refused' && reply.reason !== 'disposed') return { kind: reply.reason }
      return { kind: 'rejected', reason: (reply.type === 'prompt.refused' && reply.closing) || 'disposed' }
    })
  }

  /** Stops the run: resolves with what the stop took off the queue (ids and texts), or why it was refused. */
  stop(run?: number): Promise<StopOutcome> {
    const replyTo = randomUUID()
    return this.#request(replyTo, { type: 'ABORT', run, replyTo }, { kind: 'not-live' }, (reply) => {
      if (reply.type === 'abort.answered') {
        // Handed back: the sending tab has its images (it puts them back as the run settles), the runtime no longer needs them.
        for (const p of reply.restored) this.#dropImages(p.messageId)
        return { kind: 'stopped', restored: reply.restored }
      }
      return reply.type === 'abort.refused' ? { kind: reply.reason } : { kind: 'not-live' }
    })
  }

  /** Takes the queued prompts back (pi's Alt+Up) and leaves the run going: resolves with them (ids and texts), or why it was refused. */
  takeQueue(run?: number): Promise<TakeOutcome> {
    const replyTo = randomUUID()
    return this.#request(replyTo, { type: 'TAKE_QUEUE', run, replyTo }, { kind: 'not-live' }, (reply) => {
      if (reply.type === 'take.answered') {
        // Handed back, as a stop's: the runtime no longer needs their images.
        for (const p of reply.restored) this.#dropImages(p.messageId)
        return { kind: 'taken', restored: reply.restored }
      }
      return reply.type === 'take.refused' ? { kind: reply.reason } : { kind: 'not-live' }
    })
  }

  /** An answer as it arrived (`cancelled: true` withdraws the question); the question's own dialog machine decides. */
  answer(dialogId: string, payload: Record<string, unknown>): Promise<AnswerOutcome> {
    const replyTo = randomUUID()
    const { cancelled, ...answer } = payload
    const event =
      cancelled === true
        ? ({ type: 'DIALOG.CANCEL', dialogId, replyTo } as const)
        : ({ type: 'DIALOG.ANSWER', dialogId, answer: cancelled === undefined ? answer : payload, replyTo } as const)
    return this.#request(replyTo, event, { kind: 'unknown' }, (reply) => {
      if (reply.type === 'dialog.answered') return { kind: 'answered' }
      return reply.type === 'dialog.refused' ? { kind: 'refused', refusal: reply.refusal } : { kind: 'unknown' }
    })
  }

  /** A key for an open terminal component, from tab `tab` (terminal-bridge.ts). */
  terminalInput(dialogId: string, data: unknown, tab: string): TerminalInputOutcome {
    // No component was ever shown: none is open.
    return this.#terminalBridge ? this.#terminalBridge.input(dialogId, data, tab) : { kind: 'unknown' }
  }

  /** The one way a request gets the machine's answer: send it with a correlation id, wait for the reply carrying it. */
  #request<R>(replyTo: string, event: ThreadEvent, ifGone: R, read: (reply: Reply) => R): Promise<R> {
    if (this.actor.getSnapshot().status !== 'active') return Promise.resolve(ifGone)
    this.#replies ??= new PendingReplies(this.actor, () => (this.#replies = undefined))
    return this.#replies.request(replyTo, event, ifGone, read)
  }

  /** Stops the run, settles every open dialog with `dialogOutcome`, reports queued prompts rejected, releases the runtime. */
  async dispose(reason: string, dialogOutcome: 'cancelled' | 'aborted'): Promise<void> {
    if (this.actor.getSnapshot().status === 'active') this.actor.send({ type: 'DISPOSE', reason, dialogOutcome })
    await this.#disposing
  }

  /** The thread machine with live-thread-actions.ts's actions, provided once for every thread (made at the first). */
  static #provided: ProvidedThreadMachine | undefined
  static readonly #byActor = new WeakMap<object, LiveThread>()

  static #machine(): ProvidedThreadMachine {
    return (LiveThread.#provided ??= provideThreadMachine<LiveThread>({
      threadOf: (actor) => LiveThread.#byActor.get(actor),
      feed: (thread) => thread.#feed,
      runtime: (thread) => thread.#runtime,
      dialogs: (thread) => thread.#dialogs,
      asks: (thread) => thread.#asks,
      inLog: (thread) => thread.#options.inLog,
      withImages: (thread, prompt) => thread.#withImages(prompt),
      handedOver: (thread, messageId) => thread.#handedOver(messageId),
      settled: (thread, run) => void (thread.#settledRun = run),
      release: (thread, reason) => void (thread.#disposing = thread.#releaseRuntime(reason)),
      reply: (thread, reply) => thread.#replies?.answer(reply),
      log: (thread, level, message) => thread.#log(level, message),
    }))
  }

  /** The prompt's images are no longer needed here; the map goes with its last entry. */
  #dropImages(messageId: string): void {
    if (this.#images?.delete(messageId) && this.#images.size === 0) this.#images = undefined
  }

  /** A prompt as the runtime takes it: its id, its text and the images it was admitted with. */
  #withImages(prompt: { messageId: string; text: string }): QueuedPrompt {
    const images = this.#images?.get(prompt.messageId)
    return { messageId: prompt.messageId, text: prompt.text, ...(images ? { images } : {}) }
  }

  #onRuntimeEvent(event: RuntimeEvent): void {
    // A prompt taken (or refused) no longer needs its images here.
    if (event.type === 'user-message' || event.type === 'prompt-rejected' || event.type === 'prompt-handled') this.#dropImages(event.messageId)
    switch (event.type) {
      case 'settled':
        // The prompts pi did not take ride into the next run in this step: if it fails, they are handed back (#failed).
        this.#carrying = [...event.unclaimed]
        try {
          this.actor.send({ type: 'SETTLED', aborted: event.aborted, unclaimed: event.unclaimed })
        } finally {
          this.#carrying = undefined
        }
        return
      case 'run-started':
        this.actor.send({ type: 'RUN_STARTED' })
        return
      case 'user-message':
        this.#feed.append({ ...event, run: this.run })
        return
      default:
        this.#feed.append(event)
    }
  }

  // ——— release ———

  /** From this instant the thread has no runtime and shows nothing more; runtime-release.ts lets the runtime go. */
  async #releaseRuntime(reason: string): Promise<void> {
    const runtime = this.#runtime
    this.#runtime = undefined
    this.#releasing = true
    this.#askBridge?.cancelAll()
    if (!runtime) return
    return releaseRuntime(runtime, {
      reason,
      feed: this.#feed,
      images: (messageId) => this.#images?.get(messageId),
      unsubscribe: () => {
        this.#unsubscribe?.()
        this.#unsubscribe = undefined
      },
      log: (level, message) => this.#log(level, message),
    })
  }

  /**
   * The machine failed (an action threw): nothing decides for this thread any more. It ends as a
   * stopped thread does — said on the feed, its queue handed back, its run stopped, its questions and
   * run settled aborted — and is retired, so the next request builds it again instead of finding a
   * thread that refuses everything.
   */
  #failed(error: unknown): void {
    const reason = 'the thread stopped on an internal error'
    // Carried into a run and not handed to pi when the step failed: answered 202 once, and in no queue the release clears.
    const carried = this.#carrying ?? []
    this.#carrying = undefined
    // After a release the machine began itself (a failure while disposing), once that one is done.
    const before = this.#disposing
    this.#disposing = Promise.all([before, this.#releaseRuntime(reason)]).then(() => {})
    try {
      const message = `this thread stopped on an internal error (${errorText(error)}): its run was stopped, and the next prompt starts it again`
      for (const observation of failedEnds(this.#feed.view, { reason, message, carried, settledRun: this.#settledRun })) {
        this.#feed.append(observation)
        // The extension that asked hears the outcome every follower saw, not the refusal #retire gives what is left.
        if (observation.type === 'dialog-settled') this.#dialogBridge?.resolve(observation.id, { outcome: observation.outcome })
      }
    } catch (failure) {
      // What failed the machine may be the feed itself: the thread is retired all the same.
      this.#log('error', `the failed thread's feed could not be settled: ${errorText(failure)}`)
    }
    this.#retire()
  }

  /** A prompt carried by a settle is pi's now: a failure after this does not hand it back. */
  #handedOver(messageId: string): void {
    if (this.#carrying) this.#carrying = this.#carrying.filter((p) => p.messageId !== messageId)
  }

  #retire(): void {
    if (this.#retired) return
    this.#retired = true
    // The machine replied to every request it took; one that reached it in the same instant as the
    // thread went away still hears back.
    this.#replies?.gone()
    // Nothing decides a question once the machine has ended: one asked re-entrantly as it ended is refused.
    this.#dialogBridge?.refuseAll()
    this.#askBridge?.cancelAll()
    // The registry hears it in this instant, so no request reaches a machine that has gone cold.
    this.#options.onRetired(this)
    queueMicrotask(() => this.#subscription?.unsubscribe())
  }

  #log(level: 'debug' | 'info' | 'warn' | 'error', message: string): void {
    this.#options.log?.(level, `[${this.threadId}] ${message}`)
  }
}

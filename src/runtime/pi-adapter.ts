/**
 * The AgentRuntime port implemented on pi 1.x's AgentSession, one session per thread.
 *
 * What this file adds to pi:
 * - ids: the run's prompt and, through the queue mirror (queue-mirror.ts), queued prompts keep the
 *   host's ids when pi delivers them;
 * - one `settled` per prompt: pi's `agent_settled` when the prompt started a run (pi delivers it to
 *   subscribers after the run's last event and before `prompt()` resolves), else `prompt()`'s own
 *   end — a refusal, or an extension that handled the input;
 * - a release pi's runtime would make: extensions hear `session_shutdown` before the session is
 *   disposed, within a bound (extension-shutdown.ts);
 * - pi's work runs as the thread's (extension-output.ts), so what extensions print is logged as theirs.
 *
 * Moving between branches of the session tree is session-navigation.ts; `!` commands, user-shell.ts;
 * the `/` menu and extensions' shortcuts, session-commands.ts.
 */
import { randomUUID } from 'node:crypto'
import type { AgentSession, AgentSessionEvent } from '@earendil-works/pi-coding-agent'
import type { CommandInfo, ThinkingLevel, TranscriptEntry } from '../schemas/index.js'
import type { ActionResult, AgentRuntime, ClearedQueue, NavigateResult, NavigateTarget, QueuedPrompt, RuntimeEvent, RuntimeListener } from './port.js'
import type { PiModels } from './pi-models.js'
import { errorText, type RuntimeLogger } from './extension-ui.js'
import { EventMapper } from './map-events.js'
import { skipUnheardEvents } from './unheard-events.js'
import { IDS_ENTRY, lastRun, RUN_ENTRY, userEntryId, type IdsMarker } from './transcript.js'
import { SessionNavigation } from './session-navigation.js'
import { sessionCommands, runSessionShortcut } from './session-commands.js'
import { shutdownExtensions } from './extension-shutdown.js'
import { QueueMirror, type QueuedInputDisposition } from './queue-mirror.js'
import { asThread } from './extension-output.js'
import { runUserShell, userShellCommand, type UserShellCommand } from './user-shell.js'

export interface PiRuntimeOptions {
  log: RuntimeLogger
  models?: PiModels
  /** Asked before the first run when pi needs a human to decide project trust (see project-trust.ts). */
  pendingTrust?: () => Promise<void>
  /** How the thread is named in log records of what its extensions write to stdout (extension-output.ts). */
  label: string
  /** How long extensions' `session_shutdown` handlers may take when the runtime is disposed (extension-shutdown.ts). */
  shutdownMs?: number
  /** The tool policy's bash rule for a `!`/`!!` command: why it may not run, or `undefined` to run it. */
  shellPermission?: (command: string) => Promise<string | undefined>
}

interface Run {
  number: number
  /** The prompt that started it; none for a run an extension started (`run-started`). */
  prompt?: QueuedPrompt
  promptDelivered: boolean
  aborted: boolean
  /** Handed to pi: from here pi's `agent_settled` ends it (before, a settle is another run's). */
  sent: boolean
  /** A `!`/`!!` command is the run's work (user-shell.ts). */
  shell?: boolean
}

/** A prompt's images as pi's image parts; undefined when it has none. */
function piImages(images: QueuedPrompt['images']) {
  return images?.length ? images.map((i) => ({ type: 'image' as const, data: i.data, mimeType: i.mimeType })) : undefined
}

export class PiRuntime implements AgentRuntime {
  private readonly listeners = new Set<RuntimeListener>()
  private readonly queue: QueueMirror
  private readonly mapper: EventMapper
  private readonly tree: SessionNavigation
  private readonly unsubscribe: Array<() => void> = []
  private run: Run | undefined
  private disposed = false
  private readonly log: RuntimeLogger
  private pendingTrust: (() => Promise<void>) | undefined
  /** Prompts extensions sent (pi.sendUserMessage) that have not ended yet, their preflight included. */
  private extensionPrompts = 0
  private readonly promptsEnded = new Set<() => void>()

  constructor(
    private readonly session: AgentSession,
    private readonly options: PiRuntimeOptions,
  ) {
    this.log = options.log
    this.pendingTrust = options.pendingTrust
    this.queue = new QueueMirror(session, (event) => this.emit(event))
    this.mapper = new EventMapper({ userMessageId: (text) => this.userMessageId(text) })
    this.tree = new SessionNavigation(session, {
      within: (work) => this.within(work),
      branched: (transcript) => this.emit({ type: 'branch', transcript }),
      append: (customType, data) => this.append(customType, data),
    })
    this.unsubscribe.push(session.subscribe((event) => this.onSessionEvent(event)))
    this.countExtensionPrompts()
  }

  /**
   * pi's `waitForIdle` is idle before a prompt an extension just sent has started (its input hooks
   * are still running): an extension's `pi.sendUserMessage(…); await ctx.waitForIdle()` would go on
   * at once. pi sends such a prompt through the session's own `prompt` (source `extension`), so it is
   * counted there, from its call to its run's end.
   */
  private countExtensionPrompts(): void {
    const session = this.session
    const prompt = session.prompt.bind(session)
    session.prompt = (text, options) => {
      if (options?.source !== 'extension') return prompt(text, options)
      this.extensionPrompts++
      return prompt(text, options).finally(() => {
        this.extensionPrompts--
        for (const ended of [...this.promptsEnded]) ended()
      })
    }
  }

  /** `ctx.waitForIdle()`: no run, and no prompt an extension sent still on its way to one. */
  async waitForIdle(): Promise<void> {
    for (;;) {
      await this.session.waitForIdle()
      if (this.extensionPrompts === 0 && this.session.isIdle) return
      await new Promise<void>((resolve) => {
        const ended = () => (this.promptsEnded.delete(ended), resolve())
        this.promptsEnded.add(ended)
      })
    }
  }

  lastRun(): number {
    return lastRun(this.session.sessionManager.getBranch())
  }

  prompt(prompt: QueuedPrompt, runNumber: number): void {
    this.within(() => this.begin(prompt, runNumber))
  }

  private begin(prompt: QueuedPrompt, runNumber: number): void {
    if (this.run) {
      this.emit({ type: 'prompt-rejected', messageId: prompt.messageId, reason: 'A run is already in progress.' })
      return
    }
    const run: Run = { number: runNumber, prompt, promptDelivered: false, aborted: false, sent: false }
    this.run = run
    this.append(RUN_ENTRY, { run: run.number })
    const trust = this.pendingTrust
    if (!trust) return this.start(run)
    // The trust question is part of the first run: the thread is busy, and Stop settles it like any question.
    this.pendingTrust = undefined
    trust().then(
      () => (run.aborted ? this.settle(run, true) : this.start(run)),
      (error: unknown) => {
        this.log.error(`project trust failed: ${errorText(error)}`)
        this.start(run)
      },
    )
  }

  private start(run: Run): void {
    // pi tells subscribers `agent_settled` before its agent is idle, and the host may start the next
    // run from inside that callback (a prompt that waited on a stop): sent then, pi would take it as a
    // message of the finishing run and resolve at once. So a run starts once pi is idle.
    void Promise.all([this.session.agent.waitForIdle(), this.session.waitForIdle()]).then(() =>
      setImmediate(() => (this.run === run ? this.send(run) : undefined)),
    )
  }

  private send(run: Run): void {
    const prompt = run.prompt!
    run.sent = true
    const shell = userShellCommand(prompt.text)
    if (shell) return void this.runShell(run, prompt, shell)
    // Before each run: a reload may have given the session a new runner.
    skipUnheardEvents(this.session.extensionRunner)
    // pi's own input path: extension commands, skills and prompt templates are handled as in its CLI.
    this.session
      .prompt(prompt.text, {
        ...(prompt.images?.length ? { images: piImages(prompt.images) } : {}),
        preflightResult: (disposition) => {
          if (disposition === 'handled') this.emit({ type: 'prompt-handled', messageId: prompt.messageId, text: prompt.text })
        },
      })
      .then(
        () => this.settle(run, false),
        (error: unknown) => {
          this.emit({ type: 'prompt-rejected', messageId: prompt.messageId, reason: errorText(error) })
          this.settle(run, false)
        },
      )
  }

  /** A `!`/`!!` command is the run's work (user-shell.ts): busy until it ends, so Stop ends it too. */
  private async runShell(run: Run, prompt: QueuedPrompt, shell: UserShellCommand): Promise<void> {
    run.shell = true
    try {
      await runUserShell(this.session, prompt, shell, {
        emit: (event) => this.emit(event),
        mark: (messageId) => this.mark({ messageId }),
        permission: this.options.shellPermission,
        stopped: () => run.aborted,
      })
    } finally {
      this.settle(run, run.aborted)
    }
  }

  steer(prompt: QueuedPrompt): void {
    this.within(() => this.enqueue('steer', prompt, (text) => this.session.steer(text, piImages(prompt.images))))
  }

  followUp(prompt: QueuedPrompt): void {
    this.within(() => this.enqueue('followUp', prompt, (text) => this.session.followUp(text, piImages(prompt.images))))
  }

  clearQueue(): ClearedQueue {
    return this.within(() => this.queue.clear())
  }

  abort(): Promise<void> {
    if (this.run) this.run.aborted = true
    if (this.run?.shell) this.session.abortBash()
    // Deliberately no clearQueue here: the host clears (and restores) the queue before it aborts.
    return this.within(() => this.session.abort())
  }

  subscribe(listener: RuntimeListener): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  transcript(): TranscriptEntry[] {
    return this.tree.transcript()
  }

  navigate(target: NavigateTarget): Promise<NavigateResult> {
    return this.tree.navigate(target)
  }

  navigateTree(
    targetId: string,
    options: { summarize?: boolean; customInstructions?: string; replaceInstructions?: boolean; label?: string },
  ): Promise<{ cancelled: boolean; editorText?: string }> {
    return this.tree.navigateTree(targetId, options)
  }

  commands(): CommandInfo[] {
    return sessionCommands(this.session)
  }

  runShortcut(key: string): boolean {
    return runSessionShortcut(this.session, key, (work) => this.within(work))
  }

  async compact(instructions?: string): Promise<void> {
    await this.within(() => this.session.compact(instructions || undefined))
  }

  /**
   * pi's `session_before_fork` for a fork before the user message `messageId`, as pi's own fork asks
   * it (position `before`). threadhost's fork makes a new thread and leaves this session as it is, so
   * pi's other fork events, which tell a session it now is the fork, have no session to go to here.
   */
  async beforeFork(messageId: string): Promise<ActionResult> {
    const runner = this.session.extensionRunner
    if (!runner.hasHandlers('session_before_fork')) return { cancelled: false }
    const entryId = userEntryId(this.session.sessionManager.getBranch(), messageId)
    if (entryId === undefined) return { cancelled: false }
    const result = await this.within(() => runner.emit({ type: 'session_before_fork', entryId, position: 'before' }))
    return { cancelled: result?.cancel === true }
  }

  note(entry: { customType: string; text: string }): void {
    // Idle: appended at once; during a run pi holds it to the end of the turn (never between a tool call and its result).
    this.within(() =>
      this.session
        .sendCustomMessage({ customType: entry.customType, content: entry.text, display: true }, { triggerTurn: false })
        .catch((error: unknown) => this.log.error(`note failed: ${errorText(error)}`)),
    )
  }

  async configure(change: { model?: string; thinkingLevel?: ThinkingLevel }): Promise<void> {
    if (change.model !== undefined) {
      const model = this.options.models?.find(change.model)
      if (!model) throw new Error(`Unknown model '${change.model}'.`)
      // Session-only, as pi's /model without persistence: the user's global default is untouched.
      await this.within(() => this.session.setModel(model))
    }
    if (change.thinkingLevel !== undefined) this.within(() => this.session.setThinkingLevel(change.thinkingLevel!))
  }

  async dispose(): Promise<void> {
    if (this.disposed) return
    this.disposed = true
    // Raise the signal but do not wait: a tool parked on a dialog nobody will answer must not hang shutdown.
    if (this.session.isStreaming) this.session.agent.abort()
    for (const off of this.unsubscribe) off()
    this.listeners.clear()
    await this.within(() =>
      shutdownExtensions(this.session.extensionRunner, { log: this.log, label: this.options.label, limitMs: this.options.shutdownMs }),
    )
    this.session.dispose()
  }

  /** Runs pi's work as this thread's, so what its extensions write to stdout is logged as theirs (extension-output.ts). */
  private within<T>(work: () => T): T {
    return asThread(this.options.label, this.log, work)
  }

  /** For failures pi reports outside the event stream (extension errors). */
  reportError(message: string): void {
    this.emit({ type: 'failure', message })
  }

  private enqueue(kind: 'steer' | 'followUp', prompt: QueuedPrompt, send: (text: string) => Promise<QueuedInputDisposition>): void {
    if (!this.run) {
      // Between runs a queued text would silently ride into the next one; refuse it instead.
      this.emit({ type: 'prompt-rejected', messageId: prompt.messageId, reason: 'No run is in progress to queue into.' })
      return
    }
    if (userShellCommand(prompt.text)) {
      // pi would take the text as a message to the model; a shell command runs as a run of its own.
      this.emit({ type: 'prompt-rejected', messageId: prompt.messageId, reason: 'A shell command (!) runs between runs: send it again when this run ends.' })
      return
    }
    if (this.run.aborted) {
      // pi would still deliver a steer into the stopping run (pi-runtime.md §2.2); refuse it instead.
      this.emit({ type: 'prompt-rejected', messageId: prompt.messageId, reason: 'The run is stopping.' })
      return
    }
    this.queue.enqueue(kind, prompt, send)
  }

  /** pi is delivering a user message: the run's own prompt first, then queued ones by text, oldest first. */
  private userMessageId(text: string): string {
    const run = this.run
    if (run?.prompt && !run.promptDelivered && text === run.prompt.text) {
      run.promptDelivered = true
      return run.prompt.messageId
    }
    const queued = this.queue.claim(text)
    if (queued !== undefined) return queued
    if (run?.prompt && !run.promptDelivered) {
      // An input handler rewrote the prompt's text; it is still this run's prompt.
      run.promptDelivered = true
      return run.prompt.messageId
    }
    return randomUUID()
  }

  /** The run the host numbered after `run-started`. */
  adoptRun(runNumber: number): void {
    if (!this.run || this.run.prompt) return
    this.run.number = runNumber
    this.append(RUN_ENTRY, { run: runNumber })
  }

  private onSessionEvent(event: AgentSessionEvent): void {
    // pi began a run nobody prompted (an extension's sendUserMessage or triggered turn): it is a run
    // of the thread, said before its first event so the host numbers it and its messages carry it.
    if (event.type === 'agent_start' && !this.run) {
      this.run = { number: 0, promptDelivered: true, aborted: false, sent: true }
      this.emit({ type: 'run-started' })
    }
    for (const mapped of this.mapper.map(event)) {
      // A user message outside a run (an extension's own sendUserMessage) keeps no run number.
      if (mapped.type === 'user-message') {
        this.mark({ messageId: mapped.messageId, ...(this.run ? { run: this.run.number } : {}) })
        const versions = this.tree.versionsHere(mapped.messageId)
        if (versions) Object.assign(mapped, { versions })
      }
      // Written before pi appends the message (subscribers run first), so the marker precedes it.
      if (mapped.type === 'assistant-end') this.mark({ messageId: mapped.messageId, ...(mapped.thinkingMs !== undefined ? { thinkingMs: mapped.thinkingMs } : {}) })
      this.emit(mapped)
    }
    // A settle before our run was handed to pi ends an extension's run inside it, not ours.
    if (event.type === 'agent_settled' && this.run?.sent) this.settle(this.run, event.aborted)
  }

  private mark(marker: IdsMarker): void {
    this.append(IDS_ENTRY, marker)
  }

  private append(customType: string, data: object): void {
    try {
      this.session.sessionManager.appendCustomEntry(customType, data)
    } catch (error) {
      this.log.warn(`could not record ${customType}: ${errorText(error)}`)
    }
  }

  /** Once per run: whichever of pi's `agent_settled` and `prompt()`'s end comes first (see the header). */
  private settle(run: Run, aborted: boolean): void {
    if (this.run !== run) return
    this.run = undefined
    this.emit({ type: 'settled', aborted: run.aborted || aborted, unclaimed: this.takeUnclaimed() })
  }

  /** Whatever is still queued when the run is over never ran; it leaves pi's queue with the settle. */
  private takeUnclaimed(): QueuedPrompt[] {
    if (!this.queue.isSending && this.session.pendingMessageCount === 0 && !this.session.agent.hasQueuedMessages()) {
      this.queue.forget()
      return []
    }
    const cleared = this.clearQueue()
    return [...cleared.steering, ...cleared.followUp]
  }

  private emit(event: RuntimeEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event)
      } catch (error) {
        this.log.error(`runtime listener failed on ${event.type}: ${errorText(error)}`)
      }
    }
  }
}

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
 *   disposed, within a bound;
 * - pi's work runs as the thread's (extension-output.ts), so what extensions print is logged as theirs.
 */
import { randomUUID } from 'node:crypto'
import type { AgentSession, AgentSessionEvent } from '@earendil-works/pi-coding-agent'
import type { CommandInfo, ThinkingLevel, TranscriptEntry } from '../schemas/index.js'
import type { ActionResult, AgentRuntime, ClearedQueue, NavigateResult, NavigateTarget, QueuedPrompt, RuntimeEvent, RuntimeListener } from './port.js'
import type { PiModels } from './pi-models.js'
import { errorText, type RuntimeLogger } from './extension-ui.js'
import { EventMapper } from './map-events.js'
import { skipUnheardEvents } from './unheard-events.js'
import { foldTranscript, IDS_ENTRY, lastRun, RUN_ENTRY, userEntryId, type IdsMarker } from './transcript.js'
import { anchorAtLeaf, anchorOf, BRANCH_ENTRY, SessionTree } from './session-branches.js'
import { QueueMirror, type QueuedInputDisposition } from './queue-mirror.js'
import { asThread } from './extension-output.js'
import { userShellArgs, userShellCommand, userShellResult, type UserShellCommand } from './user-shell.js'

export interface PiRuntimeOptions {
  log: RuntimeLogger
  models?: PiModels
  /** Asked before the first run when pi needs a human to decide project trust (see project-trust.ts). */
  pendingTrust?: () => Promise<void>
  /** How the thread is named in log records of what its extensions write to stdout (extension-output.ts). */
  label: string
  /** How long extensions' `session_shutdown` handlers may take when the runtime is disposed; default SHUTDOWN_HANDLERS_MS. */
  shutdownMs?: number
  /** The tool policy's bash rule for a `!`/`!!` command: why it may not run, or `undefined` to run it. */
  shellPermission?: (command: string) => Promise<string | undefined>
}

/** pi's own runtime waits for `session_shutdown` handlers unbounded; a server's release must not hang on one. */
export const SHUTDOWN_HANDLERS_MS = 3000

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

  /**
   * A `!`/`!!` command as pi's interactive mode runs it: the tool policy's bash rule first, then
   * extensions hear `user_bash` (and may take it over), then pi runs and records it. Its run is busy
   * until it ends, so Stop ends it too.
   */
  private async runShell(run: Run, prompt: QueuedPrompt, shell: UserShellCommand): Promise<void> {
    run.shell = true
    const { messageId, text } = prompt
    this.emit({ type: 'prompt-handled', messageId, text })
    const toolCallId = randomUUID()
    const end = (result: { output: string; exitCode: number | undefined; cancelled: boolean }) =>
      this.emit({ type: 'tool-end', toolCallId, ...userShellResult(result) })
    this.emit({ type: 'tool-start', toolCallId, name: 'bash', args: userShellArgs(shell), at: Date.now() })
    try {
      const refusal = await this.options.shellPermission?.(shell.command)
      if (refusal || run.aborted) {
        end({ output: refusal ?? 'The run was stopped before the command ran.', exitCode: undefined, cancelled: true })
        return
      }
      const { command, excludeFromContext } = shell
      const session = this.session
      // An extension that fails here is reported by pi (onError); as in pi, the command then does not run.
      const taken = await session.extensionRunner.emitUserBash({ type: 'user_bash', command, excludeFromContext, cwd: session.sessionManager.getCwd() })
      // Pairs the `bashExecution` message pi writes next with this entry's id (transcript.ts).
      this.mark({ messageId: toolCallId })
      if (taken?.result) {
        session.recordBashResult(command, taken.result, { excludeFromContext })
        end(taken.result)
        return
      }
      let output = ''
      const result = await session.executeBash(
        command,
        (chunk) => {
          output += chunk
          this.emit({ type: 'tool-update', toolCallId, partial: userShellResult({ output, exitCode: 0, cancelled: false }).result })
        },
        { excludeFromContext, ...(taken?.operations ? { operations: taken.operations } : {}) },
      )
      end(result)
    } catch (error) {
      end({ output: errorText(error), exitCode: undefined, cancelled: true })
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
    const manager = this.session.sessionManager
    const tree = new SessionTree(manager.getEntries())
    return foldTranscript(manager.getBranch(), (id) => tree.versionsOf(id))
  }

  async navigate(target: NavigateTarget): Promise<NavigateResult> {
    const tree = new SessionTree(this.session.sessionManager.getEntries())
    const entry = tree.userEntry('before' in target ? target.before : target.to)
    if (!entry) return { kind: 'unknown-message' }
    // Before a prompt: where it hangs, so the next prompt hangs there too. To a version: where its branch ends.
    const leaf = 'before' in target ? anchorOf(entry, tree.byId) : tree.latestUnder(entry.id)
    return (await this.moveTo(leaf)) ? { kind: 'moved' } : { kind: 'cancelled' }
  }

  /**
   * pi's tree navigation to exactly `leaf` (`null`: before the first message). pi moves above a user
   * message it is sent to (for its editor), so it is sent to a branch marker written at `leaf`
   * instead, which it takes as it is; extensions hear `session_before_tree` (and may refuse) and
   * `session_tree`, and pi rebuilds the model's context from the new branch. False: refused.
   */
  private async moveTo(leaf: string | null): Promise<boolean> {
    const manager = this.session.sessionManager
    const from = manager.getLeafId()
    if (leaf === from) return true
    const go = (id: string | null) => (id === null ? manager.resetLeaf() : manager.branch(id))
    go(leaf)
    const marker = manager.appendCustomEntry(BRANCH_ENTRY, {})
    go(from)
    try {
      const result = await this.within(() => this.session.navigateTree(marker))
      if (result.cancelled) return false
    } finally {
      this.keepLeaf()
    }
    this.emit({ type: 'branch', transcript: this.transcript() })
    return true
  }

  /**
   * `ctx.navigateTree()` as pi's RPC mode binds it (pi's navigation, with the extension's options),
   * then the branch is kept for a restart and shown to the people watching.
   */
  async navigateTree(
    targetId: string,
    options: { summarize?: boolean; customInstructions?: string; replaceInstructions?: boolean; label?: string },
  ): Promise<{ cancelled: boolean; editorText?: string }> {
    const before = this.session.sessionManager.getLeafId()
    let result: { cancelled: boolean; editorText?: string }
    try {
      result = await this.within(() => this.session.navigateTree(targetId, options))
    } finally {
      this.keepLeaf()
    }
    if (!result.cancelled && this.session.sessionManager.getLeafId() !== before) this.emit({ type: 'branch', transcript: this.transcript() })
    return { cancelled: result.cancelled, ...(result.editorText ? { editorText: result.editorText } : {}) }
  }

  /** pi resumes a session file at its last entry: when that is not the leaf, a branch marker at the leaf makes it so. */
  private keepLeaf(): void {
    const manager = this.session.sessionManager
    if (manager.getEntries().at(-1)?.id !== (manager.getLeafId() ?? undefined)) this.append(BRANCH_ENTRY, {})
  }

  commands(): CommandInfo[] {
    const extension = this.session.extensionRunner
      .getRegisteredCommands()
      .map((c): CommandInfo => ({ name: c.invocationName, description: c.description ?? '', kind: 'extension' }))
    const templates = this.session.promptTemplates.map((t): CommandInfo => ({ name: t.name, description: t.description, kind: 'template' }))
    const skills = this.session.resourceLoader
      .getSkills()
      .skills.map((s): CommandInfo => ({ name: `skill:${s.name}`, description: s.description, kind: 'skill' }))
    const shortcuts = [...this.shortcuts().entries()].map(
      ([key, s]): CommandInfo => ({ name: key, description: s.description ?? '', kind: 'shortcut' }),
    )
    return [...extension, ...templates, ...skills, ...shortcuts]
  }

  /** pi's resolution of extensions' shortcuts (the last registration of a key wins); no terminal keys are reserved here. */
  private shortcuts() {
    return this.session.extensionRunner.getShortcuts({})
  }

  runShortcut(key: string): boolean {
    const shortcut = [...this.shortcuts()].find(([id]) => id === key.toLowerCase())?.[1]
    if (!shortcut) return false
    const runner = this.session.extensionRunner
    // As pi's terminal runs it: the handler gets the extension context; a failure is the extension's, reported as pi reports it.
    void this.within(async () => {
      try {
        await shortcut.handler(runner.createContext())
      } catch (error) {
        runner.emitError({ extensionPath: shortcut.extensionPath, event: `shortcut ${key}`, error: errorText(error) })
      }
    })
    return true
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
    await this.within(() => this.shutdownExtensions())
    this.session.dispose()
  }

  /**
   * What pi's own runtime does before it disposes a session: extensions hear `session_shutdown`
   * (reason `quit`) — an auto-commit, a watcher closed, a child process ended. A handler that hangs
   * is left behind after `shutdownMs`, said in the log, so a release or a server's stop goes on.
   */
  private async shutdownExtensions(): Promise<void> {
    const runner = this.session.extensionRunner
    if (!runner.hasHandlers('session_shutdown')) return
    const limit = this.options.shutdownMs ?? SHUTDOWN_HANDLERS_MS
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), limit)))
    // pi's emit reports a handler's failure to onError itself and resolves.
    const handled = runner.emit({ type: 'session_shutdown', reason: 'quit' }).then(
      () => 'done' as const,
      (error: unknown) => (this.log.error(`session_shutdown failed: ${errorText(error)}`), 'done' as const),
    )
    const outcome = await Promise.race([handled, late])
    clearTimeout(timer)
    if (outcome === 'late') this.log.warn(`${this.options.label}: extensions' session_shutdown handlers took longer than ${limit} ms; closed without them`)
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
        const versions = this.versionsHere(mapped.messageId)
        if (versions) Object.assign(mapped, { versions })
      }
      // Written before pi appends the message (subscribers run first), so the marker precedes it.
      if (mapped.type === 'assistant-end') this.mark({ messageId: mapped.messageId, ...(mapped.thinkingMs !== undefined ? { thinkingMs: mapped.thinkingMs } : {}) })
      this.emit(mapped)
    }
    // A settle before our run was handed to pi ends an extension's run inside it, not ours.
    if (event.type === 'agent_settled' && this.run?.sent) this.settle(this.run, event.aborted)
  }

  /** The versions of the prompt pi is about to write at the leaf: those already hanging where it hangs, and itself. */
  private versionsHere(messageId: string): string[] | undefined {
    const manager = this.session.sessionManager
    const tree = new SessionTree(manager.getEntries())
    const ids = [...tree.versionsAt(anchorAtLeaf(manager.getLeafId(), tree.byId)), messageId]
    return ids.length > 1 ? ids : undefined
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

/**
 * What a request does to one thread, once the registry has found it: prompts (journaled first, or a
 * threadhost command), stops, answers, settings, forks, shortcuts and the composer's commands. The
 * registry (thread-registry.ts) owns the slots and their rows (slot-table.ts) and the way out
 * (shutdown-drain.ts); this file only uses them through `RequestHost`, and every method here is run
 * by the registry as a tracked command.
 */
import type { CreateOutcome, DialogOutcomeForRoute, TakeQueueOutcome, EditOutcome, PromptRouteOutcome, ShortcutOutcome, TerminalInputRouteOutcome, VersionOutcome } from '../schemas/outcomes.js'
import type { CommandInfo, ThinkingLevel, ThreadSummary } from '../schemas/index.js'
import { SessionDamaged, type ActionResult, type ForkCut, type ModelCatalog, type RuntimeFactory } from '../runtime/port.js'
import { HOST_COMMANDS, parseCommand } from './commands.js'
import { forkAt, forkThread, type ForkDeps, type ForkOutcome } from './fork.js'
import { move, promptAt } from './thread-versions.js'
import { LiveThread, type AbortOutcome } from './live-thread.js'
import type { PromptAdmission, PromptRequestBody } from './prompt-admission.js'
import type { Log } from './store/journal.js'
import type { IdempotencyClaim, ThreadRow } from './store/port.js'
import { runHostCommand, type CommandTarget, type ThreadChange, type UpdateOutcome } from './thread-commands.js'
import { summaryOf } from './thread-display.js'
import type { ThreadFeeds } from './thread-feeds.js'
import { ThreadGone, type ThreadSlot } from './thread-slot.js'
import type { Workspaces } from './workspaces.js'

export interface CreateRequest {
  id?: string
  title?: string
  model?: string
  thinkingLevel?: ThinkingLevel
  cwd?: string
  /** Its own git worktree (worktrees.ts). */
  worktree?: boolean
}

export type DialogBody = { id: string; [field: string]: unknown }

/** Why a command found no live thread to run on. */
type BuildRefusal =
  | { kind: 'closing' }
  | { kind: 'rejected'; reason: 'deleted' }
  | { kind: 'unavailable'; reason: string }
  | { kind: 'build-failed'; reason: string }

/** What a request needs of the registry. */
export interface RequestHost {
  readonly options: { models: ModelCatalog; workspaces: Workspaces; runtimes: RuntimeFactory; defaultModel: string; log?: Log }
  readonly feeds: ThreadFeeds
  readonly admission: PromptAdmission
  closing(): boolean
  slot(threadId: string): ThreadSlot | undefined
  /** The slot, unless it is being deleted. */
  present(threadId: string): ThreadSlot | undefined
  /** A new thread's slot and row (the first prompt to an unknown id). */
  remember(threadId: string, request: CreateRequest & { model: string; cwd: string }): ThreadSlot
  /** Writes the slot's row (`record`: the one about to be taken). */
  persist(slot: ThreadSlot, record?: ThreadRow): void
  create(request: CreateRequest): Promise<CreateOutcome>
  get(threadId: string): ThreadSummary | undefined
}

export class ThreadRequests {
  constructor(private readonly host: RequestHost) {}

  /** A new thread holding this one's history before a prompt, linked to it and named as its fork (fork.ts). */
  async fork(threadId: string, fromMessageId: string): Promise<ForkOutcome> {
    const slot = this.host.present(threadId)
    if (!slot) return { kind: 'unknown' }
    // The source's extensions are asked, as pi asks them before its own fork: a cold source is built to ask them.
    const ask = async (messageId: string) => {
      if (slot.damage !== undefined) return { cancelled: false }
      const live = await slot.ensureLive().catch((error: unknown) => {
        this.host.options.log?.('warn', `[${threadId}] fork: the thread's extensions could not be asked (${String(error)})`)
        return undefined
      })
      return (await live?.beforeFork(messageId)) ?? { cancelled: false }
    }
    return forkThread({ ...this.#forkDeps(threadId), ask }, slot.record, fromMessageId)
  }

  #forkDeps(sourceThreadId: string): ForkDeps {
    const create = async (request: CreateRequest, run: number) => {
      const created = await this.host.create(request)
      const forked = created.kind === 'created' ? this.host.slot(created.threadId) : undefined
      if (forked) {
        forked.begun = { reason: 'fork', previousThreadId: sourceThreadId }
        forked.record = { ...forked.record, run }
        this.host.persist(forked)
        // The new thread's link to its source is in its session file (written before it was created).
        await this.host.feeds.describe(forked)
      }
      return created
    }
    return { runtimes: this.host.options.runtimes, create, summary: (id) => this.host.get(id) }
  }

  /**
   * An extension's `ctx.fork(entryId)` (its extensions already asked, by the runtime): a new thread,
   * announced to the thread's followers with its link, as `ctx.newSession()` is.
   */
  async forkFor(slot: ThreadSlot, live: LiveThread, cut: ForkCut): Promise<ActionResult> {
    const forked = await forkAt(this.#forkDeps(slot.threadId), slot.record, cut)
    if (forked.kind !== 'forked') {
      const why = forked.kind === 'invalid' || forked.kind === 'unavailable' ? forked.reason : 'the conversation has no such point'
      live.ui.notify(`An extension asked to fork this thread (ctx.fork()), but no fork could be made: ${why}.`, 'warning')
      return { cancelled: true }
    }
    live.ui.notify(`An extension forked this thread: #/threads/${encodeURIComponent(forked.summary.threadId)}`, 'info')
    return { cancelled: false }
  }

  /**
   * An extension's `ctx.switchSession(path)`: a tab shows one thread at a time, and this one stays
   * where it is — so a session that is one of this host's threads is offered as a link to it, and
   * any other is refused with a notice (threadhost opens no session file that is not a thread's).
   */
  switchSessionFor(live: LiveThread, request: { sessionPath: string; threadId?: string }): ActionResult {
    const target = request.threadId !== undefined ? this.host.get(request.threadId) : undefined
    if (!target) {
      live.ui.notify(
        `An extension asked to switch to the session ${request.sessionPath} (ctx.switchSession()), which is not a thread of this threadhost; nothing changed.`,
        'warning',
      )
      return { cancelled: true }
    }
    live.ui.notify(`An extension switched to another thread: #/threads/${encodeURIComponent(target.threadId)}`, 'info')
    return { cancelled: false }
  }

  /**
   * An Edit (`text`) or a Regenerate (none) in place (thread-versions.ts): back to just before the
   * prompt, then the text sent there as a prompt, journaled as any is. `claim`: the request's key.
   */
  async edit(threadId: string, body: { messageId: string; text?: string }, claim?: IdempotencyClaim): Promise<EditOutcome> {
    if (this.host.closing()) return { kind: 'closing' }
    const found = await this.#liveFor(threadId)
    if (!('live' in found)) return found
    const { slot, live } = found
    const prompt = promptAt(slot.feed?.view.transcript ?? [], body.messageId)
    if (!prompt) return { kind: 'unknown-message' }
    const moved = await move(live, slot.admitting, { before: prompt.messageId })
    if (moved.kind !== 'moved') return moved
    return this.prompt(threadId, { message: body.text ?? prompt.text, admission: 'reject', deliverAs: 'steer' }, claim)
  }

  /** Shows another version of a prompt, where its conversation ends (thread-versions.ts). */
  async version(threadId: string, messageId: string): Promise<VersionOutcome> {
    const found = await this.#liveFor(threadId)
    if (!('live' in found)) return found
    return move(found.live, found.slot.admitting, { to: messageId })
  }

  /** The thread's live thread, built if cold; or why there is none. */
  async #liveFor(threadId: string): Promise<{ slot: ThreadSlot; live: LiveThread } | Exclude<VersionOutcome, { kind: 'moved' }>> {
    const slot = this.host.present(threadId)
    if (!slot) return { kind: 'unknown' }
    if (slot.damage !== undefined) return { kind: 'unavailable', reason: slot.damage }
    const live = await this.#built(slot)
    if (live instanceof LiveThread) return { slot, live }
    return live.kind === 'closing' || live.kind === 'rejected' ? { kind: 'unknown' } : live
  }

  /** A rename takes effect at once; a model or thinking level applies from the next run (refused `busy` during one). */
  async update(threadId: string, change: ThreadChange): Promise<UpdateOutcome> {
    const slot = this.host.present(threadId)
    if (!slot) return { kind: 'unknown' }
    const configures = change.model !== undefined || change.thinkingLevel !== undefined
    if (configures && slot.damage !== undefined) return { kind: 'unavailable', reason: slot.damage }
    if (change.model !== undefined) {
      const check = await this.host.options.models.check(change.model)
      if (!check.ok) return { kind: 'invalid', reason: check.reason }
    }
    const live = configures ? await slot.currentLive() : undefined
    if (live?.busy || (configures && slot.admitting > 0)) return { kind: 'busy' }
    const { title, model, thinkingLevel } = change
    const before = slot.record
    const record = {
      ...before,
      ...(title !== undefined ? { title } : {}),
      ...(model !== undefined ? { model } : {}),
      ...(thinkingLevel !== undefined ? { thinkingLevel } : {}),
      updatedAt: Date.now(),
    }
    // Written before the runtime takes it: a write the disk refuses (503/507) leaves the thread as it was.
    this.host.persist(slot, record)
    slot.record = record
    try {
      await live?.configure({ model, thinkingLevel })
    } catch (error) {
      // The runtime refused it: the row goes back to what the runtime still runs.
      this.host.persist(slot, before)
      slot.record = before
      throw error
    }
    return { kind: 'updated', summary: summaryOf(slot, this.host.options.workspaces.default) }
  }

  /** What the composer can run on this thread: threadhost's commands and pi's (the thread is built to know them). */
  async commands(threadId: string): Promise<CommandInfo[] | undefined> {
    const slot = this.host.present(threadId)
    if (!slot) return undefined
    const live = slot.damage !== undefined ? undefined : await slot.ensureLive().catch(() => undefined)
    return [...HOST_COMMANDS, ...(live?.commands() ?? [])]
  }

  /**
   * An extension's `ctx.newSession()`: a new thread like this one (its model, thinking level and
   * workspace, as `/new` makes), announced to the thread's followers with its link. pi's
   * `parentSession` is not kept: a thread's parent is a fork's.
   */
  async newThreadFor(slot: ThreadSlot, live: LiveThread): Promise<{ cancelled: boolean }> {
    const created = await runHostCommand(this.#commandTarget(slot, live), 'new', '')
    if (created.kind !== 'command-done') {
      const why = created.kind === 'invalid' ? created.reason : 'no new thread id was free'
      live.ui.notify(`An extension asked for a new session (ctx.newSession()), but no thread could be made: ${why}.`, 'warning')
      return { cancelled: true }
    }
    const made = this.host.slot(created.summary.threadId)
    if (made) made.begun = { reason: 'new', previousThreadId: slot.threadId }
    live.ui.notify(`An extension started a new thread: #/threads/${encodeURIComponent(created.summary.threadId)}`, 'info')
    return { cancelled: false }
  }

  /** What a `/command` (or an extension's session action) may do to the registry on this thread's behalf. */
  #commandTarget(slot: ThreadSlot, live: LiveThread): CommandTarget {
    return {
      live,
      settings: slot.record,
      update: (change) => this.update(slot.threadId, change),
      create: (request) => this.host.create(request),
      summary: (id) => this.host.get(id),
      touch: () => {
        const record = { ...slot.record, updatedAt: Date.now() }
        this.host.persist(slot, record)
        slot.record = record
        return summaryOf(slot, this.host.options.workspaces.default)
      },
    }
  }

  /** The slot's live thread, built if needed; or why there is none, in the words every command uses. */
  async #built(slot: ThreadSlot): Promise<LiveThread | BuildRefusal> {
    try {
      return await slot.ensureLive()
    } catch (error) {
      if (error instanceof ThreadGone) return error.reason === 'closing' ? { kind: 'closing' } : { kind: 'rejected', reason: 'deleted' }
      if (error instanceof SessionDamaged) return { kind: 'unavailable', reason: error.reason }
      return { kind: 'build-failed', reason: error instanceof Error ? error.message : String(error) }
    }
  }

  /** Runs an extension's shortcut on the thread's runtime (built if cold, as for its commands). */
  async shortcut(threadId: string, key: string): Promise<ShortcutOutcome> {
    const slot = this.host.present(threadId)
    if (!slot) return { kind: 'unknown' }
    if (slot.damage !== undefined) return { kind: 'unavailable', reason: slot.damage }
    const live = await this.#built(slot)
    if (!(live instanceof LiveThread)) return live.kind === 'closing' || live.kind === 'rejected' ? { kind: 'unknown' } : live
    if (live.runShortcut(key)) return { kind: 'started' }
    return { kind: 'unknown-shortcut', shortcuts: live.commands().filter((c) => c.kind === 'shortcut').map((c) => c.name) }
  }

  /**
   * The first prompt to an unknown id creates the thread. A `/command` is threadhost's (applied to
   * the thread, never queued), pi's (prompted as any text: pi runs it), or unknown (refused).
   * `claim`: the request's `Idempotency-Key`, claimed for the prompt when it is journaled.
   */
  async prompt(threadId: string, request: PromptRequestBody, claim?: IdempotencyClaim): Promise<PromptRouteOutcome> {
    if (this.host.closing()) return { kind: 'closing' }
    const slot = this.host.slot(threadId) ?? this.host.remember(threadId, { model: this.host.options.defaultModel, cwd: this.host.options.workspaces.default })
    if (!slot.present) return { kind: 'rejected', reason: 'deleted' }
    if (slot.damage !== undefined) return { kind: 'rejected', reason: 'unavailable' }
    // A prompt on its way to the machine makes the thread busy for a model change (which would
    // otherwise slip in between the runtime being built and the run starting); a threadhost command is not one.
    slot.admitting++
    try {
      const live = await this.#built(slot)
      if (!(live instanceof LiveThread)) return live.kind === 'unavailable' ? { kind: 'rejected', reason: 'unavailable' } : live
      const command = parseCommand(request.message, live.commands())
      if (command.kind === 'unknown') return { kind: 'unknown-command', name: command.name, suggestions: command.suggestions }
      if (command.kind !== 'host') {
        if (request.images?.length && !(await this.#takesImages(slot.record.model))) return { kind: 'no-images', model: slot.record.model }
        return await this.host.admission.admit(slot, live, request, claim)
      }
      slot.admitting--
      try {
        return await runHostCommand(this.#commandTarget(slot, live), command.name, command.args)
      } finally {
        slot.admitting++
      }
    } finally {
      slot.admitting--
    }
  }

  /** Whether the thread's model takes images, as the catalog says (pi's `input`). */
  async #takesImages(model: string): Promise<boolean> {
    const check = await this.host.options.models.check(model)
    return check.ok && check.model.images === true
  }

  /** A tab's composer draft, for extensions that read the editor. It never builds a runtime. */
  reportDraft(threadId: string, text: string): boolean {
    const live = this.host.slot(threadId)?.live
    live?.reportDraft(text)
    return live !== undefined
  }

  async abort(threadId: string, run?: number): Promise<AbortOutcome> {
    const slot = this.host.slot(threadId)
    const thread = slot?.thread
    if (!slot || !thread) return { kind: 'not-live' }
    const outcome = await thread.stop(run)
    if (outcome.kind !== 'stopped') return outcome
    // Handed back to the caller: each prompt's fate, by the id it was journaled under.
    for (const p of outcome.restored) slot.journal.fate(p.messageId, { kind: 'restored' })
    return { kind: 'stopped', restored: outcome.restored.map((p) => p.text) }
  }

  /** pi's Alt+Up: the queued prompts come back as a stop hands them back (fates `restored`, the emptied queue on the feed), and the run goes on. */
  async takeQueue(threadId: string, run?: number): Promise<TakeQueueOutcome> {
    const slot = this.host.slot(threadId)
    const thread = slot?.thread
    if (!slot || !thread) return { kind: 'not-live' }
    const outcome = await thread.takeQueue(run)
    if (outcome.kind !== 'taken') return outcome
    for (const p of outcome.restored) slot.journal.fate(p.messageId, { kind: 'restored' })
    return { kind: 'taken', restored: outcome.restored.map((p) => p.text) }
  }

  /** Finds the thread; the question's own dialog machine decides whether the payload answers it. */
  async answer(threadId: string, body: DialogBody): Promise<DialogOutcomeForRoute> {
    const live = this.host.slot(threadId)?.live
    if (!live) return { kind: 'not-live' }
    const { id, ...payload } = body
    return live.answer(id, payload)
  }

  /** A key for an open terminal component; its thread's terminal bridge takes or refuses it. */
  terminalInput(threadId: string, dialogId: string, body: { data: unknown; tab?: string }): TerminalInputRouteOutcome {
    const live = this.host.slot(threadId)?.live
    if (!live) return { kind: 'not-live' }
    return live.terminalInput(dialogId, body.data, body.tab ?? '')
  }
}

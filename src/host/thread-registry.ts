/**
 * The thread registry: a directory of thread slots. Each slot's machine says whether its thread is
 * live; the modules beside this one do the jobs (thread-slot.ts, thread-feeds.ts, recovery.ts,
 * prompt-admission.ts, thread-commands.ts, fork.ts). This file finds the slot a request names, builds
 * a runtime only for a prompt or a command, and writes what it answered before a shutdown closes the store.
 *
 * Abort, dialog answers and follows *peek*: they never build a runtime, so a cold thread answers 404
 * there (and a follow shows its persisted transcript). It knows nothing of HTTP; the server maps the
 * outcomes to status codes.
 */
import { randomUUID } from 'node:crypto'
import type { CommandInfo, ExtensionList, ModelList, ThinkingLevel, ThreadSummary } from '../schemas/index.js'
import type { CreateOutcome, DialogOutcomeForRoute, PromptRouteOutcome, ShortcutOutcome } from '../schemas/outcomes.js'
import { SessionDamaged, type ModelCatalog, type RuntimeFactory } from '../runtime/port.js'
import { HOST_COMMANDS, parseCommand } from './commands.js'
import type { Feed } from './feed.js'
import { forkThread, type ForkOutcome } from './fork.js'
import type { AbortOutcome, LiveThread } from './live-thread.js'
import { PromptAdmission, type PromptRequestBody } from './prompt-admission.js'
import { rebuildIndex, recoveredRow, recoverInFlight, survey, type RecoveryDeps } from './recovery.js'
import { lostCeiling, ThreadJournal, type Log } from './store/journal.js'
import type { IdempotencyClaim, ThreadRow, ThreadStore } from './store/port.js'
import { SqliteThreadStore } from './store/sqlite.js'
import { runHostCommand, type ThreadChange, type UpdateOutcome } from './thread-commands.js'
import { summaryOf } from './thread-display.js'
import { provideSlotMachine, runtimeOf } from './slot-lifecycle.js'
import { ThreadFeeds } from './thread-feeds.js'
import { ThreadGone, ThreadSlot } from './thread-slot.js'
import type { Workspaces } from './workspaces.js'

export type { CommandOutcome, ThreadChange, UpdateOutcome } from './thread-commands.js'
export type { PromptRequestBody } from './prompt-admission.js'

export interface RegistryOptions {
  dataDir: string
  runtimes: RuntimeFactory
  models: ModelCatalog
  workspaces: Workspaces
  defaultModel: string
  idleMs: number
  ringSize?: number
  log?: Log
  /** The host's durable state. Default: the SQLite store in `dataDir` (threadhost.db); host tests pass an in-memory one. */
  store?: ThreadStore
}

export interface CreateRequest {
  id?: string
  title?: string
  model?: string
  thinkingLevel?: ThinkingLevel
  cwd?: string
}

/** What each command comes to: src/schemas/outcomes.ts holds the vocabularies and what each outcome is on the wire. */
export type { CreateOutcome, DialogOutcomeForRoute, PromptRouteOutcome }

export type DialogBody = { id: string; [field: string]: unknown }

export class ThreadRegistry {
  readonly #slots = new Map<string, ThreadSlot>()
  readonly #options: RegistryOptions
  readonly #store: ThreadStore
  readonly #feeds: ThreadFeeds
  readonly #admission: PromptAdmission
  readonly #machine: ReturnType<typeof provideSlotMachine>
  #closing = false
  #shutdown?: Promise<void>
  #surveyed: Promise<void> = Promise.resolve()
  /** Commands under way: a shutdown closes the store only after each has written what it answers. */
  readonly #inflight = new Set<Promise<unknown>>()
  readonly #liveListeners = new Set<(thread: LiveThread, event: 'started' | 'retired') => void>()

  private constructor(options: RegistryOptions, store: ThreadStore) {
    this.#options = options
    this.#store = store
    this.#feeds = new ThreadFeeds({
      store,
      runtimes: options.runtimes,
      ringSize: options.ringSize,
      log: options.log,
      onDamaged: (slot, damage) => this.#unavailable(slot, damage),
      persist: (slot) => this.#persist(slot),
    })
    this.#admission = new PromptAdmission(store, (slot) => this.#row(slot), options.log)
    this.#machine = provideSlotMachine({
      slot: (threadId) => this.#slots.get(threadId),
      feeds: this.#feeds,
      store,
      runtimes: options.runtimes,
      defaultCwd: options.workspaces.default,
      idleMs: options.idleMs,
      log: options.log,
      closing: () => this.#closing,
      persist: (slot) => this.#persist(slot),
      notifyLive: (thread, event) => {
        for (const listener of this.#liveListeners) listener(thread, event)
      },
      threadActions: (slot, live) => ({ newThread: () => this.#newThreadFor(slot, live) }),
    })
  }

  /** Opens the store and recovers before anything is accepted (recovery.ts); the session files are surveyed behind the start. */
  static async open(options: RegistryOptions): Promise<ThreadRegistry> {
    const opened = options.store
      ? { store: options.store, origin: 'kept' as const, reason: undefined }
      : SqliteThreadStore.open(options.dataDir, { floorSeq: () => lostCeiling() })
    const registry = new ThreadRegistry(options, opened.store)
    await registry.#recover(opened.origin, opened.reason)
    registry.#surveyed = registry.#survey()
    return registry
  }

  get #recovery(): RecoveryDeps {
    const { runtimes, models, workspaces, defaultModel, log } = this.#options
    return { store: this.#store, runtimes, models, workspaces, defaultModel, log }
  }

  async #recover(origin: Parameters<typeof rebuildIndex>[1], reason: string | undefined): Promise<void> {
    await rebuildIndex(this.#recovery, origin, reason)
    for (const row of this.#store.threads()) this.#add(recoveredRow(this.#store, row))
    await recoverInFlight(this.#recovery, this.#slots, (slot, damage) => this.#unavailable(slot, damage))
  }

  /** Resolves once every session file was checked after the start; until then a damaged thread is found when first touched. */
  get surveyed(): Promise<void> {
    return this.#surveyed
  }

  async #survey(): Promise<void> {
    await survey(this.#options.runtimes, this.#slots, {
      damaged: (slot, damage) => this.#unavailable(slot, damage),
      facts: (slot, facts) => this.#feeds.keepFacts(slot, facts),
    })
  }

  /** The durable state (tests and the inspector read the journal). */
  get store(): ThreadStore {
    return this.#store
  }

  get closing(): boolean {
    return this.#closing
  }

  /** Live threads, for the inspector. */
  liveThreads(): LiveThread[] {
    return [...this.#slots.values()].flatMap((s) => (s.live ? [s.live] : []))
  }

  onLiveChange(listener: (thread: LiveThread, event: 'started' | 'retired') => void): () => void {
    this.#liveListeners.add(listener)
    return () => this.#liveListeners.delete(listener)
  }

  /** Every feed as it is loaded, and at once those loaded now (metrics). */
  watchFeeds(watcher: (threadId: string, feed: Feed) => void): () => void {
    return this.#feeds.watch(watcher, this.#slots.values())
  }

  /** What a new thread may run on, and what it gets when it names nothing. */
  async models(): Promise<ModelList> {
    return { models: await this.#options.models.list(), default: this.#options.defaultModel }
  }

  /** What became of the extensions the runtime loaded; `undefined` when it cannot say. */
  extensions(): ExtensionList | undefined {
    return this.#options.runtimes.extensions?.()
  }

  /** An unknown model, one without credentials, or a cwd outside the workspaces is refused before anything is written. */
  create(request: CreateRequest): Promise<CreateOutcome> {
    return this.#tracked(async () => {
      const threadId = request.id ?? randomUUID().slice(0, 8)
      if (this.#slots.has(threadId)) return { kind: 'taken' }
      const workspace = this.#options.workspaces.check(request.cwd)
      if (!workspace.ok) return { kind: 'invalid', reason: workspace.reason }
      const model = request.model ?? this.#options.defaultModel
      const check = await this.#options.models.check(model)
      if (!check.ok) return { kind: 'invalid', reason: check.reason }
      // The id may have been taken while the model was checked.
      if (this.#slots.has(threadId)) return { kind: 'taken' }
      this.#remember(threadId, { ...request, model, cwd: workspace.cwd })
      return { kind: 'created', threadId }
    })
  }

  /** A new thread holding this one's history before a prompt, linked to it (fork.ts: edit and resend, regenerate). */
  fork(threadId: string, fromMessageId: string): Promise<ForkOutcome> {
    return this.#tracked(async () => {
      const slot = this.#present(threadId)
      if (!slot) return { kind: 'unknown' }
      const create = async (request: CreateRequest, run: number) => {
        const created = await this.create(request)
        const forked = created.kind === 'created' ? this.#slots.get(created.threadId) : undefined
        if (forked) {
          forked.record = { ...forked.record, run }
          this.#persist(forked)
          // The new thread's link to its source is in its session file (written before it was created).
          await this.#feeds.describe(forked)
        }
        return created
      }
      // The source's extensions are asked, as pi asks them before its own fork: a cold source is built to ask them.
      const ask = async (messageId: string) => {
        if (slot.damage !== undefined) return { cancelled: false }
        const live = await slot.ensureLive().catch((error: unknown) => {
          this.#options.log?.('warn', `[${threadId}] fork: the thread's extensions could not be asked (${String(error)})`)
          return undefined
        })
        return (await live?.beforeFork(messageId)) ?? { cancelled: false }
      }
      return forkThread({ runtimes: this.#options.runtimes, create, summary: (id) => this.get(id), ask }, slot.record, fromMessageId)
    })
  }

  list(): ThreadSummary[] {
    return [...this.#slots.values()]
      .filter((s) => s.present)
      .map((s) => summaryOf(s, this.#options.workspaces.default))
      .sort((a, b) => b.updatedAt - a.updatedAt)
  }

  get(threadId: string): ThreadSummary | undefined {
    const slot = this.#present(threadId)
    return slot && summaryOf(slot, this.#options.workspaces.default)
  }

  /** A rename takes effect at once; a model or thinking level applies from the next run (refused `busy` during one). */
  update(threadId: string, change: ThreadChange): Promise<UpdateOutcome> {
    return this.#tracked(async () => {
      const slot = this.#present(threadId)
      if (!slot) return { kind: 'unknown' }
      const configures = change.model !== undefined || change.thinkingLevel !== undefined
      if (configures && slot.damage !== undefined) return { kind: 'unavailable', reason: slot.damage }
      if (change.model !== undefined) {
        const check = await this.#options.models.check(change.model)
        if (!check.ok) return { kind: 'invalid', reason: check.reason }
      }
      const live = configures ? await slot.currentLive() : undefined
      if (live?.busy) return { kind: 'busy' }
      await live?.configure({ model: change.model, thinkingLevel: change.thinkingLevel })
      const { title, model, thinkingLevel } = change
      const record = {
        ...slot.record,
        ...(title !== undefined ? { title } : {}),
        ...(model !== undefined ? { model } : {}),
        ...(thinkingLevel !== undefined ? { thinkingLevel } : {}),
        updatedAt: Date.now(),
      }
      // Written before it is taken: a write the disk refuses (503/507) leaves the thread as it was.
      this.#persist(slot, record)
      slot.record = record
      return { kind: 'updated', summary: summaryOf(slot, this.#options.workspaces.default) }
    })
  }

  /**
   * A live thread is disposed first: its run stops and its open dialogs settle `cancelled`. The slot
   * stays (hidden, its id not reusable) until its files are gone.
   */
  delete(threadId: string): Promise<boolean> {
    return this.#tracked(async () => {
      const slot = this.#present(threadId)
      if (!slot) return false
      // The rows go first: a write the disk refuses (503/507) leaves the thread as it was, its run
      // going on. From here its journal writes nothing, so the dispose leaves no rows behind.
      this.#store.deleteThread(threadId)
      slot.journal.stop()
      try {
        await slot.delete()
      } finally {
        if (this.#slots.get(threadId) === slot) this.#slots.delete(threadId)
      }
      return true
    })
  }

  /** What the composer can run on this thread: threadhost's commands and pi's (the thread is built to know them). */
  async commands(threadId: string): Promise<CommandInfo[] | undefined> {
    const slot = this.#present(threadId)
    if (!slot) return undefined
    const live = slot.damage !== undefined ? undefined : await slot.ensureLive().catch(() => undefined)
    return [...HOST_COMMANDS, ...(live?.commands() ?? [])]
  }

  /**
   * An extension's `ctx.newSession()`: a new thread like this one (its model, thinking level and
   * workspace, as `/new` makes), announced to the thread's followers with its link. pi's
   * `parentSession` is not kept: a thread's parent is a fork's.
   */
  async #newThreadFor(slot: ThreadSlot, live: LiveThread): Promise<{ cancelled: boolean }> {
    const { model, thinkingLevel, cwd } = slot.record
    const created = await this.create({ model, ...(thinkingLevel ? { thinkingLevel } : {}), ...(cwd ? { cwd } : {}) })
    if (created.kind !== 'created') {
      const why = created.kind === 'invalid' ? created.reason : 'the id is taken'
      live.ui.notify(`An extension asked for a new session (ctx.newSession()), but no thread could be made: ${why}.`, 'warning')
      return { cancelled: true }
    }
    live.ui.notify(`An extension started a new thread: #/threads/${encodeURIComponent(created.threadId)}`, 'info')
    return { cancelled: false }
  }

  /** Runs an extension's shortcut on the thread's runtime (built if cold, as for its commands). */
  async shortcut(threadId: string, key: string): Promise<ShortcutOutcome> {
    const slot = this.#present(threadId)
    if (!slot) return { kind: 'unknown' }
    if (slot.damage !== undefined) return { kind: 'unavailable', reason: slot.damage }
    let live: LiveThread
    try {
      live = await slot.ensureLive()
    } catch (error) {
      if (error instanceof ThreadGone) return { kind: 'unknown' }
      if (error instanceof SessionDamaged) return { kind: 'unavailable', reason: error.reason }
      return { kind: 'build-failed', reason: error instanceof Error ? error.message : String(error) }
    }
    if (runtimeOf(live)?.runShortcut?.(key)) return { kind: 'started' }
    return { kind: 'unknown-shortcut', shortcuts: live.commands().filter((c) => c.kind === 'shortcut').map((c) => c.name) }
  }

  /**
   * The first prompt to an unknown id creates the thread. A `/command` is threadhost's (applied to
   * the thread, never queued), pi's (prompted as any text: pi runs it), or unknown (refused).
   * `claim`: the request's `Idempotency-Key`, claimed for the prompt when it is journaled.
   */
  prompt(threadId: string, request: PromptRequestBody, claim?: IdempotencyClaim): Promise<PromptRouteOutcome> {
    return this.#tracked(async () => {
      if (this.#closing) return { kind: 'closing' }
      const slot = this.#slots.get(threadId) ?? this.#remember(threadId, { model: this.#options.defaultModel, cwd: this.#options.workspaces.default })
      if (!slot.present) return { kind: 'rejected', reason: 'deleted' }
      if (slot.damage !== undefined) return { kind: 'rejected', reason: 'unavailable' }
      let live: LiveThread
      try {
        live = await slot.ensureLive()
      } catch (error) {
        if (error instanceof ThreadGone) return error.reason === 'closing' ? { kind: 'closing' } : { kind: 'rejected', reason: 'deleted' }
        if (error instanceof SessionDamaged) return { kind: 'rejected', reason: 'unavailable' }
        return { kind: 'build-failed', reason: error instanceof Error ? error.message : String(error) }
      }
      const command = parseCommand(request.message, live.commands())
      if (command.kind === 'unknown') return { kind: 'unknown-command', name: command.name, suggestions: command.suggestions }
      if (command.kind === 'host') return runHostCommand(
        {
          live,
          update: (change) => this.update(threadId, change),
          create: (request) => this.create(request),
          summary: (id) => this.get(id),
          touch: () => {
            const record = { ...slot.record, updatedAt: Date.now() }
            this.#persist(slot, record)
            slot.record = record
            return summaryOf(slot, this.#options.workspaces.default)
          },
          settings: slot.record,
        },
        command.name,
        command.args,
      )
      return this.#admission.admit(slot, live, request, claim)
    })
  }

  /** A tab's composer draft, for extensions that read the editor. It never builds a runtime. */
  reportDraft(threadId: string, text: string): boolean {
    const live = this.#slots.get(threadId)?.live
    live?.reportDraft(text)
    return live !== undefined
  }

  abort(threadId: string, run?: number): Promise<AbortOutcome> {
    return this.#tracked(async () => {
      const slot = this.#slots.get(threadId)
      const thread = slot?.thread
      if (!slot || !thread) return { kind: 'not-live' }
      const outcome = await thread.stop(run)
      if (outcome.kind !== 'stopped') return outcome
      // Handed back to the caller: each prompt's fate, by the id it was journaled under.
      for (const p of outcome.restored) slot.journal.fate(p.messageId, { kind: 'restored' })
      return { kind: 'stopped', restored: outcome.restored.map((p) => p.text) }
    })
  }

  /** Finds the thread; the question's own dialog machine decides whether the payload answers it. */
  async answer(threadId: string, body: DialogBody): Promise<DialogOutcomeForRoute> {
    const live = this.#slots.get(threadId)?.live
    if (!live) return { kind: 'not-live' }
    const { id, ...payload } = body
    return live.answer(id, payload)
  }

  /** The thread's feed, loading a cold thread's persisted transcript without building a runtime. */
  async feed(threadId: string): Promise<Feed | undefined> {
    const slot = this.#present(threadId)
    return slot && this.#feeds.of(slot)
  }

  /** Refuse new work, stop every run (queued prompts reported), settle open dialogs `aborted`, close the store. */
  shutdown(): Promise<void> {
    this.#shutdown ??= this.#drain()
    return this.#shutdown
  }

  #tracked<T>(work: () => Promise<T>): Promise<T> {
    const done = work()
    this.#inflight.add(done)
    const forget = () => void this.#inflight.delete(done)
    done.then(forget, forget)
    return done
  }

  async #drain(): Promise<void> {
    this.#closing = true
    await Promise.all(
      [...this.#slots.values()].map(async (slot) => {
        const live = await slot.currentLive()
        await live?.dispose('shutdown', 'aborted')
        slot.feed?.close()
      }),
    )
    // What was answered (or is about to be) is written before the store closes: a delete's removal,
    // a rename, a fork's new row. New requests are refused by now; these finish against stopped threads.
    while (this.#inflight.size > 0) await Promise.allSettled([...this.#inflight])
    // Journal writes the disk refused get a last try; what still cannot be written, recovery settles.
    for (const slot of this.#slots.values()) {
      if (!slot.journal.flush()) this.#options.log?.('error', `[${slot.threadId}] shut down with journal writes the disk refused (${slot.journal.waiting.join('; ')}); the next start recovers them`)
      slot.journal.stop()
    }
    this.#store.close()
  }

  // ——— slots ———

  #present(threadId: string): ThreadSlot | undefined {
    const slot = this.#slots.get(threadId)
    return slot?.present ? slot : undefined
  }

  #add(row: ThreadRow): ThreadSlot {
    const slot = new ThreadSlot(row, new ThreadJournal(row.threadId, this.#store, { ceiling: row.seq, run: row.run }, this.#options.log), this.#machine)
    this.#slots.set(row.threadId, slot)
    return slot
  }

  #remember(threadId: string, request: CreateRequest & { model: string; cwd: string }): ThreadSlot {
    const now = Date.now()
    const row: ThreadRow = {
      threadId,
      title: request.title?.trim() || threadId,
      model: request.model,
      ...(request.thinkingLevel ? { thinkingLevel: request.thinkingLevel } : {}),
      cwd: request.cwd,
      createdAt: now,
      updatedAt: now,
      run: 0,
      seq: 0,
    }
    this.#store.putThread(row)
    return this.#add(row)
  }

  /** The slot's row as written (`record`: the one about to be taken): the run its live thread owns, the seq ceiling its journal reserved. */
  #row(slot: ThreadSlot, record = slot.record): ThreadRow {
    return { ...record, run: slot.run, seq: slot.journal.ceiling }
  }

  /** Writes the slot's row — unless it is being deleted or was replaced: a late write would bring a deleted thread back. */
  #persist(slot: ThreadSlot, record = slot.record): void {
    if (!slot.present || this.#slots.get(slot.threadId) !== slot) return
    this.#store.putThread(this.#row(slot, record))
  }

  #unavailable(slot: ThreadSlot, damage: SessionDamaged): void {
    if (slot.state !== 'cold') return
    this.#options.log?.('error', `${damage.message}; the thread is unavailable until the file is repaired or the thread deleted`)
    slot.damaged(damage.reason)
  }

}

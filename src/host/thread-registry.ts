/**
 * The thread registry: a directory of thread slots. Each slot's machine says whether its thread is
 * live; the modules beside this one do the jobs (slot-table.ts, thread-slot.ts, slot-lifecycle.ts,
 * thread-feeds.ts, recovery.ts, thread-requests.ts with prompt-admission.ts and thread-commands.ts,
 * fork.ts, shutdown-drain.ts). This file opens and recovers the store, wires the slots (slot-table.ts
 * keeps them and their rows) to those modules, and tracks each command, so that a shutdown closes
 * the store only once what it answered is written.
 *
 * Abort, dialog answers and follows *peek*: they never build a runtime, so a cold thread answers 404
 * there (and a follow shows its persisted transcript). It knows nothing of HTTP; the server maps the
 * outcomes to status codes.
 */
import type { CommandInfo, ExtensionList, ModelList, Observation, ThreadSummary } from '../schemas/index.js'
import type { ChangesOutcome, CreateOutcome, DeleteOutcome, DialogOutcomeForRoute, EditOutcome, FollowOutcome, PromptRouteOutcome, RestoreRouteOutcome, ShortcutOutcome, TakeQueueOutcome, TerminalInputRouteOutcome, VersionOutcome } from '../schemas/outcomes.js'
import type { ModelCatalog, RuntimeFactory } from '../runtime/port.js'
import type { ThreadView } from '../shared/projection.js'
import type { Feed } from './feed.js'
import type { ForkOutcome } from './fork.js'
import type { AbortOutcome, LiveThread } from './live-thread.js'
import { PromptAdmission, type PromptRequestBody } from './prompt-admission.js'
import { rebuildIndex, recoveredRow, recoverInFlight, survey, type RecoveryDeps } from './recovery.js'
import { lostCeiling, type Log } from './store/journal.js'
import type { IdempotencyClaim, ThreadStore } from './store/port.js'
import { SqliteThreadStore } from './store/sqlite.js'
import type { ThreadChange, UpdateOutcome } from './thread-commands.js'
import { factsOf } from './thread-display.js'
import { provideSlotMachine, type ClusterThreadHooks } from './slot-lifecycle.js'
import { ThreadFeeds } from './thread-feeds.js'
import { SlotTable } from './slot-table.js'
import { ThreadRequests, type CreateRequest, type DialogBody } from './thread-requests.js'
import type { Workspaces } from './workspaces.js'
import { ThreadSearch } from './thread-search.js'
import { INDEX_FILE } from './store/sqlite/message-index.js'
import { join } from 'node:path'
import { Checkpoints } from './checkpoints/checkpoints.js'
import { ChangeRequests } from './checkpoints/change-requests.js'
import { Worktrees, type WorktreeHolds } from './worktrees.js'
import { ShutdownDrain } from './shutdown-drain.js'
import type { AdoptedRow } from './cluster-directory.js'

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

/** What each command comes to: src/schemas/outcomes.ts holds the vocabularies and what each outcome is on the wire. */
export type { CreateOutcome, DialogOutcomeForRoute, PromptRouteOutcome }

export type { CreateRequest, DialogBody } from './thread-requests.js'

/** What a cluster node gives the registry (src/host/cluster/cluster-node.ts, `attachCluster`). */
export interface ClusterHooks extends ClusterThreadHooks {
  /** The feed a follow resuming `after` reads; `behind`: this node's copy of the log has not reached `after` and cannot now. */
  follow(threadId: string, after?: number): Promise<Feed | 'behind' | undefined>
  base(threadId: string): Promise<ThreadView | undefined>
}

export class ThreadRegistry {
  /** The slots and their rows (slot-table.ts), kept in step with the cluster's index in cluster mode. */
  readonly #slots: SlotTable
  readonly #options: RegistryOptions
  readonly #store: ThreadStore
  readonly #feeds: ThreadFeeds
  readonly #admission: PromptAdmission
  readonly #machine: ReturnType<typeof provideSlotMachine>
  readonly #requests: ThreadRequests
  /** The commands under way, and the shutdown that waits for them (shutdown-drain.ts). */
  readonly #drain: ShutdownDrain
  #surveyed: Promise<void> = Promise.resolve()
  /** Search over every thread's messages (thread-search.ts), kept beside the store. */
  #search?: ThreadSearch
  readonly #liveListeners = new Set<(thread: LiveThread, event: 'started' | 'retired') => void>()
  /** Cluster mode: follows are served from the thread's log (src/host/cluster/cluster-node.ts). */
  #follow?: ClusterHooks['follow']
  /** Cluster mode: what a live thread built here asks of the node (slot-lifecycle.ts, `ClusterThreadHooks`). */
  #threadHooks?: ClusterThreadHooks
  readonly #checkpoints: Checkpoints
  readonly #changes: ChangeRequests
  readonly #worktrees: Worktrees

  private constructor(options: RegistryOptions, store: ThreadStore) {
    this.#options = options
    this.#store = store
    this.#checkpoints = new Checkpoints({ dataDir: options.dataDir, log: options.log })
    this.#worktrees = new Worktrees(options.dataDir)
    this.#slots = new SlotTable({
      store,
      options,
      worktrees: this.#worktrees,
      machine: () => this.#machine,
      log: options.log,
      clustered: () => this.#follow !== undefined,
      unsearch: (threadId) => this.#search?.forget(threadId),
    })
    this.#drain = new ShutdownDrain({
      slots: () => this.#slots.values(),
      checkpoints: this.#checkpoints,
      store,
      search: () => this.#search,
      log: options.log,
    })
    this.#feeds = new ThreadFeeds({
      changes: (threadId) => this.#checkpoints.view(threadId),
      store,
      runtimes: options.runtimes,
      ringSize: options.ringSize,
      log: options.log,
      onDamaged: (slot, damage) => this.#slots.unavailable(slot, damage),
      persist: (slot) => this.#slots.persist(slot),
    })
    this.#admission = new PromptAdmission(store, (slot) => this.#slots.row(slot), options.log)
    this.#requests = new ThreadRequests({
      options,
      feeds: this.#feeds,
      admission: this.#admission,
      closing: () => this.#drain.closing,
      slot: (threadId) => this.#slots.get(threadId),
      present: (threadId) => this.#slots.present(threadId),
      remember: (threadId, request) => this.#slots.remember(threadId, request),
      persist: (slot, record) => this.#slots.persist(slot, record),
      create: (request) => this.create(request),
      get: (threadId) => this.get(threadId),
    })
    this.#machine = provideSlotMachine({
      slot: (threadId) => this.#slots.get(threadId),
      feeds: this.#feeds,
      store,
      runtimes: options.runtimes,
      defaultCwd: options.workspaces.default,
      idleMs: options.idleMs,
      log: options.log,
      closing: () => this.#drain.closing,
      persist: (slot) => this.#slots.persist(slot),
      notifyLive: (thread, event) => {
        for (const listener of this.#liveListeners) listener(thread, event)
      },
      threadActions: (slot, live) => ({
        newThread: () => this.#requests.newThreadFor(slot, live),
        fork: (cut) => this.#requests.forkFor(slot, live, cut),
        switchSession: async (request) => this.#requests.switchSessionFor(live, request),
      }),
      checkpoints: this.#checkpoints,
      worktrees: this.#worktrees,
      cluster: () => this.#threadHooks,
    })
    this.#changes = new ChangeRequests({
      checkpoints: this.#checkpoints,
      present: (threadId) => this.#slots.present(threadId),
      feed: (slot) => this.#feeds.of(slot),
      defaultCwd: options.workspaces.default,
      log: options.log,
    })
  }

  /** Opens the store and recovers before anything is accepted (recovery.ts); the session files are surveyed behind the start. */
  static async open(options: RegistryOptions): Promise<ThreadRegistry> {
    const opened = options.store
      ? { store: options.store, origin: 'kept' as const, reason: undefined }
      : SqliteThreadStore.open(options.dataDir, { floorSeq: () => lostCeiling() })
    const registry = new ThreadRegistry(options, opened.store)
    // A revert a crash interrupted is finished before any thread runs again (checkpoints.ts).
    await registry.#checkpoints.recover()
    await registry.#recover(opened.origin, opened.reason)
    registry.#surveyed = registry.#survey()
    registry.#search = new ThreadSearch({
      file: options.store ? ':memory:' : join(options.dataDir, INDEX_FILE),
      threads: () => registry.list(),
      readTranscript: (threadId) => options.runtimes.readTranscript(threadId),
      watchFeeds: (watcher) => registry.watchFeeds(watcher),
      observeFeeds: (observer) => registry.observeFeeds(observer),
      log: options.log,
    })
    return registry
  }

  get #recovery(): RecoveryDeps {
    const { runtimes, models, workspaces, defaultModel, log } = this.#options
    return { store: this.#store, runtimes, models, workspaces, defaultModel, log }
  }

  async #recover(origin: Parameters<typeof rebuildIndex>[1], reason: string | undefined): Promise<void> {
    await rebuildIndex(this.#recovery, origin, reason)
    for (const row of this.#store.threads()) this.#slots.add(recoveredRow(this.#store, row))
    await recoverInFlight(this.#recovery, this.#slots.map, (slot, damage) => this.#slots.unavailable(slot, damage))
  }

  /** Resolves once every session file was checked after the start; until then a damaged thread is found when first touched. */
  get surveyed(): Promise<void> {
    return this.#surveyed
  }

  async #survey(): Promise<void> {
    await survey(this.#options.runtimes, this.#slots.map, {
      damaged: (slot, damage) => this.#slots.unavailable(slot, damage),
      facts: (slot, facts) => this.#feeds.keepFacts(slot, facts),
    })
  }

  /** The durable state (tests and the inspector read the journal). */
  get store(): ThreadStore {
    return this.#store
  }

  /** The threads whose messages match every word of `query` (as prefixes), each with its best match. */
  search(query: string, limit?: number): ReturnType<ThreadSearch['find']> {
    return this.#search?.find(query, limit) ?? []
  }

  /** Resolves once the message index holds every thread that existed at the start. */
  get searchBuilt(): Promise<void> {
    return this.#search?.built ?? Promise.resolve()
  }

  get closing(): boolean {
    return this.#drain.closing
  }

  /** Live threads, for the inspector. */
  liveThreads(): LiveThread[] {
    return [...this.#slots.values()].flatMap((s) => (s.live ? [s.live] : []))
  }

  onLiveChange(listener: (thread: LiveThread, event: 'started' | 'retired') => void): () => void {
    this.#liveListeners.add(listener)
    return () => this.#liveListeners.delete(listener)
  }

  /** Every observation of every feed, after the feed's journal and before its followers (metrics, search, push). */
  observeFeeds(observer: (threadId: string, feed: Feed, o: Observation) => void): () => void {
    return this.#feeds.observe(observer)
  }

  /** Every feed as it is loaded, and at once those loaded now (search, the cluster). */
  watchFeeds(watcher: (threadId: string, feed: Feed) => void): () => void {
    return this.#feeds.watch(watcher, this.#slots.values())
  }

  /** What a new thread may run on, and what it gets when it names nothing. */
  async models(): Promise<ModelList> {
    return { models: await this.#options.models.list(), default: this.#options.defaultModel }
  }

  /** The roots a new thread's workspace may be (`--workspace`), the default first. */
  workspaceRoots(): { roots: string[]; default: string } {
    const { roots, default: first } = this.#options.workspaces
    return { roots: [...roots], default: first }
  }

  /** What became of the extensions the runtime loaded; `undefined` when it cannot say. */
  extensions(): ExtensionList | undefined {
    return this.#options.runtimes.extensions?.()
  }

  /** An unknown model, one without credentials, or a cwd outside the workspaces is refused before anything is written. */
  create(request: CreateRequest): Promise<CreateOutcome> {
    return this.#drain.tracked(() => this.#slots.create(request))
  }

  list(): ThreadSummary[] {
    return this.#slots.list()
  }

  /** Whether the thread is listed here now (no summary built). */
  lists(threadId: string): boolean {
    return this.#slots.present(threadId) !== undefined
  }

  get(threadId: string): ThreadSummary | undefined {
    return this.#slots.summary(threadId)
  }

  /** What deleting the thread would discard of its own worktree (commits no other branch has, uncommitted changes); undefined: nothing. */
  async worktreeHolds(threadId: string): Promise<WorktreeHolds | undefined> {
    if (!this.#slots.present(threadId)) return undefined
    return this.#worktrees.holds(threadId).catch(() => undefined)
  }

  /**
   * A live thread is disposed first: its run stops and its open dialogs settle `cancelled`. The slot
   * stays (hidden, its id not reusable) until its files are gone (slot-table.ts).
   */
  delete(threadId: string): Promise<DeleteOutcome> {
    return this.#drain.tracked(() => this.#slots.delete(threadId))
  }

  // ——— requests on one thread (thread-requests.ts), each tracked so a shutdown waits for what it answered ———

  /** A new thread holding this one's history before a prompt, linked to it and named as its fork (fork.ts). */
  fork(threadId: string, fromMessageId: string): Promise<ForkOutcome> {
    return this.#drain.tracked(() => this.#requests.fork(threadId, fromMessageId))
  }

  /** A rename takes effect at once; a model or thinking level applies from the next run (refused `busy` during one). */
  update(threadId: string, change: ThreadChange): Promise<UpdateOutcome> {
    return this.#drain.tracked(() => this.#requests.update(threadId, change))
  }

  /** The first prompt to an unknown id creates the thread; a `/command` is threadhost's, pi's, or refused. */
  prompt(threadId: string, request: PromptRequestBody, claim?: IdempotencyClaim): Promise<PromptRouteOutcome> {
    return this.#drain.tracked(() => this.#requests.prompt(threadId, request, claim))
  }

  abort(threadId: string, run?: number): Promise<AbortOutcome> {
    return this.#drain.tracked(() => this.#requests.abort(threadId, run))
  }

  /** Takes the queued prompts back and leaves the run going (pi's Alt+Up). */
  takeQueue(threadId: string, run?: number): Promise<TakeQueueOutcome> {
    return this.#drain.tracked(() => this.#requests.takeQueue(threadId, run))
  }

  answer(threadId: string, body: DialogBody): Promise<DialogOutcomeForRoute> {
    return this.#requests.answer(threadId, body)
  }

  terminalInput(threadId: string, dialogId: string, body: { data: unknown; tab?: string }): TerminalInputRouteOutcome {
    return this.#requests.terminalInput(threadId, dialogId, body)
  }

  commands(threadId: string): Promise<CommandInfo[] | undefined> {
    return this.#requests.commands(threadId)
  }

  /** An Edit or a Regenerate as a new version of a prompt, in place (thread-versions.ts). */
  edit(threadId: string, body: { messageId: string; text?: string }, claim?: IdempotencyClaim): Promise<EditOutcome> {
    return this.#drain.tracked(() => this.#requests.edit(threadId, body, claim))
  }

  /** Shows another version of a prompt (thread-versions.ts). */
  version(threadId: string, messageId: string): Promise<VersionOutcome> {
    return this.#drain.tracked(() => this.#requests.version(threadId, messageId))
  }

  shortcut(threadId: string, key: string): Promise<ShortcutOutcome> {
    return this.#requests.shortcut(threadId, key)
  }

  // ——— what the agent changed (checkpoints/) ———

  /** A run's diff, or (no `run`) the thread's cumulative one. */
  changes(threadId: string, run?: number): Promise<ChangesOutcome> {
    return this.#changes.changes(threadId, run)
  }

  /** The workspace as it was before run `toRun`; refused during a run, or when a file changed since. */
  revert(threadId: string, toRun: number): Promise<RestoreRouteOutcome> {
    return this.#drain.tracked(() => this.#changes.revert(threadId, toRun))
  }

  redo(threadId: string): Promise<RestoreRouteOutcome> {
    return this.#drain.tracked(() => this.#changes.redo(threadId))
  }

  reportDraft(threadId: string, text: string): boolean {
    return this.#requests.reportDraft(threadId, text)
  }

  /** The thread's feed, loading a cold thread's persisted transcript without building a runtime. */
  async feed(threadId: string): Promise<Feed | undefined> {
    const found = await this.follow(threadId, undefined)
    return found.kind === 'following' ? found.feed : undefined
  }

  /** The feed a follow resuming `after` reads: in cluster mode, this node's copy of the log may not have reached `after` yet. */
  async follow(threadId: string, after: number | undefined): Promise<{ kind: 'following'; feed: Feed } | FollowOutcome> {
    const slot = this.#slots.present(threadId)
    const feed = slot && (this.#follow ? await this.#follow(threadId, after) : await this.#feeds.of(slot))
    if (feed === 'behind') return { kind: 'behind', threadId, after: after! }
    return feed ? { kind: 'following', feed } : { kind: 'unknown' }
  }

  // ——— cluster mode (src/host/cluster/cluster-node.ts, its index: node-index.ts): the node's hooks into the directory ———

  /**
   * Follows come from `follow`; a feed this node loads starts from `base` when the thread's log has
   * one; a live thread built here asks `fence` before each tool call and session-file write, and
   * `inLog` before an answer reaches its run; `deleted` hears of a delete here once its runtime and feed are gone.
   */
  attachCluster(hooks: ClusterHooks): void {
    const { follow, base, ...threadHooks } = hooks
    this.#follow = follow
    this.#feeds.base = base
    this.#threadHooks = threadHooks
  }

  /** The feed this node writes (its own, as the thread's owner), not the one its follows read. */
  async ownFeed(threadId: string): Promise<Feed | undefined> {
    const slot = this.#slots.present(threadId)
    return slot && this.#feeds.of(slot)
  }

  /** A thread another node made or changed, at the index's `revision`: its slot here, or its row brought up to date (runs never go back). */
  adopt(row: AdoptedRow, revision?: number): void {
    this.#slots.directory.adopt(row, revision)
  }

  /** This node's row of the thread made at `createdAt` is in the cluster's index at `revision` (undefined: never written). */
  indexed(threadId: string, createdAt: number, revision: number | undefined): void {
    this.#slots.directory.indexed(threadId, createdAt, revision)
  }

  /**
   * The thread's row written again, with what its feed says for its summary now: a cluster's owner writes
   * it as it loads the thread, as a run ends and as the thread moves to another branch — the other nodes
   * list the thread from its row, and it names the node whose message index has the thread as it stands.
   */
  rewriteRow(threadId: string, always: boolean): void {
    const slot = this.#slots.get(threadId)
    if (!slot?.feed) return
    const facts = factsOf(slot.feed.view.transcript, slot.record.facts)
    // Unless asked to (another node wrote it last), only when what it says for the summary changed.
    if (!always) return this.#feeds.keepFacts(slot, facts)
    slot.record = { ...slot.record, facts }
    try {
      this.#slots.persist(slot)
    } catch (error) {
      this.#options.log?.('warn', `[${threadId}] store write failed: ${String(error)}`)
    }
  }

  /** A thread deleted on another node: its slot and its rows in this node's store go here (its files were the other node's to remove). */
  forget(threadId: string, revision?: number): void {
    this.#slots.directory.forget(threadId, revision)
  }

  /** Another node owns the thread now: its run here stops and this node's feed of it goes (the log has the truth). */
  async fence(threadId: string): Promise<void> {
    const slot = this.#slots.get(threadId)
    if (!slot) return
    const live = await slot.currentLive()
    await live?.dispose('fenced', 'aborted')
    slot.feed?.close()
    slot.feed = undefined
    slot.feedLoading = undefined
  }

  /** Refuse new work, stop every run (queued prompts reported), settle open dialogs `aborted`, close the store. */
  shutdown(): Promise<void> {
    return this.#drain.shutdown()
  }
}

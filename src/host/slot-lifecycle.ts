/**
 * What a thread slot's machine does when it builds, releases and removes a thread, provided once for
 * every slot: the runtime is built for a new LiveThread (and disposed again if the thread was deleted
 * or threadhost is shutting down meanwhile); a retired thread's row is written before its runtime
 * goes; a removed thread is disposed before its files and row go.
 */
import { fromPromise, type AnyActorRef } from 'xstate'
import { threadSlotMachine } from '../machines/thread-slot.machine.js'
import { SessionDamaged, type RuntimeFactory, type SessionChange, type ThreadActions } from '../runtime/port.js'
import { LiveThread } from './live-thread.js'
import { stopThread, threadSystem } from './thread-system.js'
import type { Checkpoints } from './checkpoints/checkpoints.js'
import { watchRuns, type RunWatch } from './checkpoints/run-watch.js'
import type { Worktrees } from './worktrees.js'
import type { Log } from './store/journal.js'
import type { ThreadStore } from './store/port.js'
import { factsOf } from './thread-display.js'
import type { ThreadFeeds } from './thread-feeds.js'
import { ThreadGone, type ThreadSlot } from './thread-slot.js'


/** A delete whose thread was lost to this node (a cluster) before its `deleted` record was in the log: nothing of it is removed. */
export class ThreadPassedOn extends Error {
  constructor(readonly threadId: string) {
    super(`thread ${threadId} passed to another node before its delete was in its log`)
    this.name = 'ThreadPassedOn'
  }
}

export interface SlotLifecycleDeps {
  slot: (threadId: string) => ThreadSlot | undefined
  feeds: ThreadFeeds
  store: ThreadStore
  runtimes: RuntimeFactory
  defaultCwd: string
  idleMs: number
  log?: Log
  closing: () => boolean
  /** Writes the slot's row (skipped for a deleted thread). */
  persist: (slot: ThreadSlot) => void
  /** A LiveThread started or retired (the inspector watches them). */
  notifyLive: (thread: LiveThread, event: 'started' | 'retired') => void
  /** What the host does for the thread's extensions' session actions (`ctx.newSession()` …). */
  threadActions?: (slot: ThreadSlot, live: LiveThread) => ThreadActions
  /** What each run changed in the workspace (checkpoints/): taken before a run's first file change. */
  checkpoints?: Checkpoints
  /** Threads' own git worktrees (worktrees.ts): removed with their thread. */
  worktrees?: Worktrees
  /** Cluster mode: what a thread here asks of the node; unset on one node. */
  cluster?: () => ClusterThreadHooks | undefined
}

/** What a thread's runtime, live thread and delete ask of its cluster node (src/host/cluster/cluster-node.ts). */
export interface ClusterThreadHooks {
  /** Why this node may no longer act for the thread (cluster/fence-guard.ts): asked before each tool call and session-file write. */
  fence?: (threadId: string) => string | undefined
  /** Resolves once what the thread wrote so far is in its log (`LiveThreadOptions.inLog`). */
  inLog?: (threadId: string) => Promise<unknown>
  /**
   * The thread is deleted here: its runtime disposed (what that wrote is written) and its feed closed.
   * Resolves whether its `deleted` record is in the thread's log: false once the thread is not this node's.
   */
  deleted?: (threadId: string) => Promise<boolean>
}

export function provideSlotMachine(deps: SlotLifecycleDeps) {
  const slotOf = (threadId: string) => deps.slot(threadId)!
  // One actor system for this host's live threads (thread-system.ts).
  const system = threadSystem()
  return threadSlotMachine.provide({
    actors: {
      build: fromPromise(({ input }) => build(deps, slotOf(input.threadId), system)),
      release: fromPromise(({ input }) => (input.thread as LiveThread).released),
      remove: fromPromise(async ({ input }) => {
        const slot = slotOf(input.threadId)
        await (input.thread as LiveThread | undefined)?.dispose('deleted', 'cancelled')
        const feed = slot.feed ?? (await slot.feedLoading?.catch(() => undefined))
        feed?.close()
        // Before its files go: a removal that fails leaves the thread deleted all the same.
        const inLog = deps.cluster?.()?.deleted?.(slot.threadId)
        // Again, for a row written while the thread was disposed (a prompt admitted meanwhile); the
        // delete took the rows before it began, so a write the disk refuses here is only logged.
        try {
          deps.store.deleteThread(slot.threadId)
        } catch (error) {
          deps.log?.('error', `[${slot.threadId}] store write failed while deleting: ${String(error)}`)
        }
        // Lost to this node before its record was in: the thread stays, files and all (cluster-node.ts, `threadDeleted`).
        if (inLog && !(await inLog)) throw new ThreadPassedOn(slot.threadId)
        await deps.runtimes.remove(slot.threadId)
        await deps.checkpoints?.remove(slot.threadId)
        await deps.worktrees?.remove(slot.threadId)
      }),
    },
    actions: {
      releaseFeed: (_, { threadId }) => {
        const slot = deps.slot(threadId)
        if (slot) deps.feeds.release(slot, true)
      },
      keepRetired: (_, { threadId }) => {
        const slot = slotOf(threadId)
        const feed = slot.feed
        slot.record = { ...slot.record, run: slot.run, seq: feed?.seq ?? slot.record.seq, facts: factsOf(feed?.view.transcript ?? [], slot.record.facts) }
        // Also at a shutdown: the store closes only once every thread has retired.
        keep(deps, slot)
      },
    },
    guards: {
      damaged: (_, { error }) => error instanceof SessionDamaged,
    },
  })
}

/** Builds the runtime for a slot; a delete or a shutdown meanwhile disposes what was built. */
async function build(deps: SlotLifecycleDeps, slot: ThreadSlot, system: AnyActorRef): Promise<LiveThread> {
  const feed = await deps.feeds.of(slot)
  const { threadId, model, thinkingLevel, cwd } = slot.record
  let runs: RunWatch | undefined
  const cluster = deps.cluster?.()
  const inLog = cluster?.inLog
  const live = new LiveThread({
    threadId: slot.threadId,
    feed,
    run: slot.record.run,
    idleMs: deps.idleMs,
    system,
    log: deps.log,
    ...(inLog ? { inLog: () => inLog(threadId) } : {}),
    onRetired: (thread) => {
      runs?.stop()
      retired(deps, slot, thread)
    },
  })
  deps.notifyLive(live, 'started')
  runs = deps.checkpoints && watchRuns(deps.checkpoints, threadId, cwd ?? deps.defaultCwd, feed, () => live.run)
  try {
    const actions = deps.threadActions?.(slot, live)
    const fence = cluster?.fence
    const runtime = await deps.runtimes.create({
      threadId,
      model,
      ...(thinkingLevel ? { thinkingLevel } : {}),
      cwd: cwd ?? deps.defaultCwd,
      ui: live.ui,
      onSessionChange: (change) => sessionChanged(deps, slot, change),
      ...(actions ? { actions } : {}),
      ...(slot.begun ? { begun: slot.begun } : {}),
      ...(runs ? { beforeFileChange: runs.beforeFileChange } : {}),
      ...(fence ? { fence: () => fence(threadId) } : {}),
    })
    slot.begun = undefined
    if (slot.doomed || deps.closing()) {
      await runtime.dispose()
      throw new ThreadGone(deps.closing() ? 'closing' : 'deleted')
    }
    live.attach(runtime)
    return live
  } catch (error) {
    runs?.stop()
    stopThread(live.actor)
    deps.notifyLive(live, 'retired')
    throw error
  }
}

/**
 * The thread's session changed itself (an extension's pi.setModel, setThinkingLevel, setSessionName):
 * its row says so at once — the summary, the list and the settings show it — and the next build of
 * its runtime uses the model and thinking level it switched to.
 */
function sessionChanged(deps: SlotLifecycleDeps, slot: ThreadSlot, change: SessionChange): void {
  if (change.name !== undefined) {
    const { name: _old, ...facts } = slot.record.facts ?? {}
    deps.feeds.keepFacts(slot, change.name ? { ...facts, name: change.name } : facts)
  }
  const model = change.model ?? slot.record.model
  const thinkingLevel = change.thinkingLevel ?? slot.record.thinkingLevel
  if (model === slot.record.model && thinkingLevel === slot.record.thinkingLevel) return
  slot.record = { ...slot.record, model, ...(thinkingLevel ? { thinkingLevel } : {}) }
  keep(deps, slot)
}

/**
 * Writes a row nobody is waiting on an answer for: a write the disk refuses is logged, and the row
 * in memory (what the summary and a rebuild read) is carried by the row's next write.
 */
function keep(deps: SlotLifecycleDeps, slot: ThreadSlot): void {
  try {
    deps.persist(slot)
  } catch (error) {
    deps.log?.('error', `[${slot.threadId}] store write failed: ${String(error)}`)
  }
}

/** The live thread's machine went cold or was disposed: the slot hears it now, the actor stops after. */
function retired(deps: SlotLifecycleDeps, slot: ThreadSlot, thread: LiveThread): void {
  if (slot.thread === thread) slot.retired()
  queueMicrotask(() => {
    stopThread(thread.actor)
    deps.notifyLive(thread, 'retired')
  })
}

/**
 * What a start recovers before anything is accepted (docs/flows/durability.md): a lost or unusable
 * index is rebuilt from the runtime's persisted threads, and each thread's journal is reconciled
 * with its transcript — per thread, so the same step can run for one thread taken over elsewhere.
 * threadhost never refuses to start because of its own data.
 */
import type { TranscriptEntry } from '../schemas/index.js'
import type { ModelCatalog, PersistedThread, RuntimeFactory } from '../runtime/port.js'
import { SessionDamaged } from '../runtime/port.js'
import { lostCeiling, reconcile, type Log } from './store/journal.js'
import type { StoreOrigin, ThreadFacts, ThreadRow, ThreadStore } from './store/port.js'
import type { ThreadSlot } from './thread-slot.js'
import type { Workspaces } from './workspaces.js'

export interface RecoveryDeps {
  store: ThreadStore
  runtimes: RuntimeFactory
  models: ModelCatalog
  workspaces: Workspaces
  defaultModel: string
  log?: Log
}

/** What the runtime has persisted; a runtime that cannot list them has none to offer. */
export async function persistedThreads(runtimes: RuntimeFactory): Promise<PersistedThread[]> {
  return (await runtimes.listPersisted?.().catch(() => [])) ?? []
}

/** A rebuilt or missing index gets a row for every persisted thread it lacks, numbered above any seq a tab saw. */
export async function rebuildIndex(deps: RecoveryDeps, origin: StoreOrigin, reason: string | undefined): Promise<void> {
  if (origin === 'kept') return
  const { store, log } = deps
  const known = new Set(store.threads().map((t) => t.threadId))
  const missing = (await persistedThreads(deps.runtimes)).filter((p) => !known.has(p.threadId))
  for (const p of missing) {
    const model = p.model && (await deps.models.check(p.model).catch(() => ({ ok: false }))).ok ? p.model : deps.defaultModel
    const workspace = deps.workspaces.check(p.cwd)
    store.putThread({
      threadId: p.threadId,
      title: p.threadId,
      model,
      ...(p.thinkingLevel ? { thinkingLevel: p.thinkingLevel } : {}),
      cwd: workspace.ok ? workspace.cwd : deps.workspaces.default,
      createdAt: p.createdAt,
      updatedAt: p.updatedAt,
      run: p.lastRun,
      seq: lostCeiling(),
      ...(p.facts ? { facts: p.facts } : {}),
    })
  }
  if (origin === 'rebuilt' || missing.length > 0) {
    const why = origin === 'rebuilt' ? `the database was unusable (${reason ?? 'unknown'}; kept aside)` : 'the database was missing'
    log?.('warn', `thread index rebuilt: ${why}; ${missing.length} thread(s) recovered from the session directories`)
  } else if (origin === 'migrated') {
    log?.('info', 'thread index migrated from threads.json to threadhost.db')
  }
}

/** A thread's row as recovery leaves it: its run is the highest any journal row says began. */
export function recoveredRow(store: ThreadStore, row: ThreadRow): ThreadRow {
  const run = Math.max(row.run, ...store.openRuns(row.threadId).map((r) => r.run))
  return { ...row, run }
}

/** The threads with anything in flight at a crash (after a clean shutdown, none). */
export function threadsInFlight(store: ThreadStore): Set<string> {
  return new Set([...store.openPrompts(), ...store.openRuns(), ...store.openDialogs()].map((r) => r.threadId))
}

export type ThreadRecovery = { rejected: number; interrupted: number } | { damaged: SessionDamaged }

/**
 * Settles what one thread had in flight: unstarted prompts reported rejected (restart), interrupted
 * runs ended aborted. A damaged session file leaves its journal open until it is repaired.
 */
export async function recoverThread(deps: RecoveryDeps, threadId: string, run: number): Promise<ThreadRecovery> {
  let transcript: TranscriptEntry[]
  try {
    transcript = await deps.runtimes.readTranscript(threadId)
  } catch (error) {
    if (error instanceof SessionDamaged) return { damaged: error }
    transcript = []
  }
  const done = reconcile(deps.store, threadId, run, transcript)
  return { rejected: done?.rejected.length ?? 0, interrupted: done?.interruptedRuns.length ?? 0 }
}

/** Every thread with anything in flight at a crash, recovered; one warning line says what was settled. */
export async function recoverInFlight(
  deps: RecoveryDeps,
  slots: ReadonlyMap<string, ThreadSlot>,
  unavailable: (slot: ThreadSlot, damage: SessionDamaged) => void,
): Promise<void> {
  let rejected = 0
  let interrupted = 0
  for (const threadId of threadsInFlight(deps.store)) {
    const slot = slots.get(threadId)
    if (!slot) continue
    const done = await recoverThread(deps, threadId, slot.run)
    if ('damaged' in done) {
      unavailable(slot, done.damaged)
      continue
    }
    rejected += done.rejected
    interrupted += done.interrupted
  }
  if (rejected || interrupted) {
    deps.log?.('warn', `recovered from an unclean stop: ${interrupted} run(s) ended aborted, ${rejected} accepted prompt(s) reported rejected (restart)`)
  }
}

/**
 * Every session file checked once after the start (it reads every file, so it runs behind the
 * start): damaged ones make their threads unavailable, and threads from before the store kept their
 * facts (schema 1) learn them once.
 */
export async function survey(
  runtimes: RuntimeFactory,
  slots: ReadonlyMap<string, ThreadSlot>,
  found: { damaged: (slot: ThreadSlot, damage: SessionDamaged) => void; facts: (slot: ThreadSlot, facts: ThreadFacts) => void },
): Promise<void> {
  for (const p of await persistedThreads(runtimes)) {
    const slot = slots.get(p.threadId)
    if (!slot) continue
    if (p.damaged !== undefined) found.damaged(slot, new SessionDamaged(p.threadId, p.damaged))
    if (!slot.record.facts && p.facts) found.facts(slot, p.facts)
  }
}

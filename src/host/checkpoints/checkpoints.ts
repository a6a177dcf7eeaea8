/**
 * Checkpoints: what each run changed in its thread's workspace, and the way back.
 *
 * Before a run's first file change (pi's `write`, `edit` and `bash`, through the runtime's
 * `beforeFileChange` hook) the workspace's state is recorded as a tree in the thread's shadow
 * (shadow.ts); when the run settles, the state it left is recorded too, and the difference is the
 * run's change. A revert makes the workspace what it was before a run; a redo undoes the last
 * revert. Both are refused with the conflicting paths when a file they would touch was changed
 * since threadhost last left it — nothing is overwritten silently.
 *
 * What survives a crash: each thread's `state.json` is replaced whole (write, fsync, rename); a
 * revert or redo first writes its intent (`pending.json`: the tree, the paths, the state after),
 * then restores the files, then writes the state and drops the intent. At a start, `recover()`
 * finishes any intent it finds, so a SIGKILL in the middle leaves the workspace after the revert,
 * never half-way. Everything is kept under `<data dir>/checkpoints/<thread>` and goes with the thread.
 *
 * One thread's operations run one at a time (a queue per thread): a run's first change waits for a
 * revert under way, so a revert never races the agent's own writes.
 */
import { closeSync, fsyncSync, openSync, readdirSync, readFileSync, renameSync, writeSync } from 'node:fs'
import { readFile, rm, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import type { ChangesReport, FileChange, ObservationInput, ThreadChanges } from '../../schemas/index.js'
import type { FileChangeIntent } from '../../runtime/port.js'
import { GitFailed } from './git.js'
import { EMPTY_TREE, WorkspaceShadow } from './shadow.js'

export const BASH_UNTRACKED = "bash ran: outside a git repository, changes other than the file tools' are not tracked"
export const TOO_SLOW = 'the workspace took too long to checkpoint; its changes are not tracked'
export const CHECKPOINT_FAILED = 'no checkpoint could be taken'

interface RunRecord {
  run: number
  /** The workspace before the run's first change. */
  before: string
  /** The workspace as the run left it (once it settled). */
  after?: string
  /** Outside git: the paths the file tools touched (relative to the workspace). */
  paths: string[]
  untracked?: string
  files?: FileChange[]
  reverted?: true
}

interface Revert {
  toRun: number
  /** The workspace before the revert (what a redo restores). */
  from: string
  to: string
  runs: number[]
}

interface State {
  version: 1
  cwd: string
  runs: RunRecord[]
  /** The state threadhost last left the workspace in: the last run's `after`, or a revert's target. */
  head?: string
  /** Reverts a redo can undo, the latest last; a run that changes the workspace clears them. */
  reverts: Revert[]
}

interface Pending {
  action: 'revert' | 'redo'
  tree: string
  paths: string[]
  next: State
}

export type RestoreOutcome =
  | { kind: 'restored'; action: 'revert' | 'redo'; files: string[]; runs: number[]; observation: ObservationInput }
  /** No run at or after `toRun` changed anything that is not already reverted; or nothing to redo. */
  | { kind: 'nothing'; action: 'revert' | 'redo' }
  /** A file the revert (or redo) would touch was changed since threadhost left it. */
  | { kind: 'conflict'; paths: string[] }
  | { kind: 'failed'; reason: string }

export interface CheckpointsOptions {
  dataDir: string
  /** A git command of a checkpoint is killed past this, and the thread's changes are no longer tracked. */
  timeoutMs?: number
  log?: (level: 'debug' | 'info' | 'warn' | 'error', message: string) => void
}

interface ThreadShadow {
  shadow?: WorkspaceShadow
  state: State
  /** The checkpoints gave up for this process (too slow, or git failed). */
  disabled?: string
}

export class Checkpoints {
  readonly #threads = new Map<string, Promise<ThreadShadow>>()
  readonly #queues = new Map<string, Promise<unknown>>()
  readonly #root: string

  constructor(private readonly options: CheckpointsOptions) {
    this.#root = join(options.dataDir, 'checkpoints')
  }

  #dir(threadId: string): string {
    return join(this.#root, threadId)
  }

  /** One thread's operations, one at a time. */
  #serial<T>(threadId: string, work: () => Promise<T>): Promise<T> {
    const before = this.#queues.get(threadId) ?? Promise.resolve()
    const done = before.then(work, work)
    const tail = done.catch(() => undefined)
    this.#queues.set(threadId, tail)
    void tail.then(() => {
      if (this.#queues.get(threadId) === tail) this.#queues.delete(threadId)
    })
    return done
  }

  #load(threadId: string, cwd: string): Promise<ThreadShadow> {
    let loaded = this.#threads.get(threadId)
    if (!loaded) {
      loaded = (async () => {
        const state = readState(this.#dir(threadId)) ?? { version: 1, cwd, runs: [], reverts: [] }
        try {
          const shadow = await WorkspaceShadow.open({
            dir: this.#dir(threadId),
            cwd: state.cwd,
            exclude: [this.options.dataDir],
            timeoutMs: this.options.timeoutMs ?? 20_000,
          })
          return { shadow, state }
        } catch (error) {
          this.options.log?.('warn', `[${threadId}] checkpoints: ${String(error)}`)
          return { state, disabled: CHECKPOINT_FAILED }
        }
      })()
      this.#threads.set(threadId, loaded)
    }
    return loaded
  }

  /** Whether the thread ever took a checkpoint: until then nothing is opened or written for it. */
  #known(threadId: string): boolean {
    return this.#threads.has(threadId) || readState(this.#dir(threadId)) !== undefined
  }

  #save(threadId: string, state: State): void {
    writeAtomic(join(this.#dir(threadId), 'state.json'), state)
  }

  #giveUp(threadId: string, t: ThreadShadow, error: unknown): string {
    t.disabled = error instanceof GitFailed && error.timedOut ? TOO_SLOW : CHECKPOINT_FAILED
    this.options.log?.('warn', `[${threadId}] checkpoints stopped: ${String(error)}`)
    return t.disabled
  }

  /**
   * Called (and awaited) before a tool that may change files runs: the run's checkpoint is taken
   * before its first change. Never throws: a checkpoint that cannot be taken lets the tool run, and
   * the run's change is then said to be untracked.
   */
  beforeChange(threadId: string, cwd: string, run: number, change: FileChangeIntent): Promise<void> {
    return this.#serial(threadId, async () => {
      const t = await this.#load(threadId, cwd)
      if (!t.shadow || t.disabled) return
      const shadow = t.shadow
      const plainBash = shadow.mode === 'plain' && change.tool === 'bash'
      const rel = change.path !== undefined ? shadow.relative(change.path) : undefined
      try {
        let record = t.state.runs.find((r) => r.run === run)
        if (!record) {
          const before = await shadow.snapshot(rel ? [rel] : [])
          record = { run, before, paths: shadow.mode === 'plain' && rel ? [rel] : [] }
          t.state.runs.push(record)
          // The workspace moves on from here: what was reverted can no longer be redone.
          t.state.reverts = []
        } else if (shadow.mode === 'plain' && rel && !record.paths.includes(rel)) {
          // Outside git the before-state grows file by file, each as it was before its first change.
          record.before = (await shadow.track([rel]))!
          record.paths.push(rel)
        } else if (!plainBash || record.untracked) return
        if (plainBash) record.untracked ??= BASH_UNTRACKED
        this.#save(threadId, t.state)
      } catch (error) {
        this.#giveUp(threadId, t, error)
      }
    })
  }

  /** The run settled: what it changed, as the observation every follower gets (none when it took no checkpoint). */
  settled(threadId: string, cwd: string, run: number): Promise<ObservationInput | undefined> {
    return this.#serial(threadId, async () => {
      if (!this.#known(threadId)) return undefined
      const t = await this.#load(threadId, cwd)
      const record = t.state.runs.find((r) => r.run === run)
      if (!record || record.after || !t.shadow) return undefined
      try {
        if (t.disabled) throw new Error(t.disabled)
        record.after = await t.shadow.snapshot(record.paths)
        record.files = await t.shadow.summary(record.before, record.after)
        t.state.head = record.after
      } catch (error) {
        record.untracked = t.disabled ?? this.#giveUp(threadId, t, error)
        record.files ??= []
      }
      this.#save(threadId, t.state)
      return { type: 'run-changes', run, files: record.files, ...(record.untracked ? { untracked: record.untracked } : {}) }
    })
  }

  /** The thread's changes as its view holds them (read from disk: a feed seeds its view with it). */
  view(threadId: string): ThreadChanges | undefined {
    const state = readState(this.#dir(threadId))
    if (!state || state.runs.length === 0) return undefined
    const runs: ThreadChanges['runs'] = {}
    for (const r of state.runs) {
      if (!r.files) continue
      runs[r.run] = { files: r.files, ...(r.untracked ? { untracked: r.untracked } : {}), ...(r.reverted ? { reverted: true } : {}) }
    }
    return { runs, canRedo: state.reverts.length > 0 }
  }

  /** A run's diff (`run`), or the thread's cumulative one; undefined when that run took no checkpoint. */
  report(threadId: string, cwd: string, run?: number): Promise<ChangesReport | undefined> {
    return this.#serial(threadId, async () => {
      if (!this.#known(threadId)) return run === undefined ? { threadId, files: [] } : undefined
      const t = await this.#load(threadId, cwd)
      if (!t.shadow) return run === undefined ? { threadId, files: [] } : undefined
      if (run !== undefined) {
        const record = t.state.runs.find((r) => r.run === run)
        if (!record?.after) return undefined
        return {
          threadId,
          run,
          files: await t.shadow.diff(record.before, record.after),
          ...(record.untracked ? { untracked: record.untracked } : {}),
          ...(record.reverted ? { reverted: true as const } : {}),
        }
      }
      const first = t.state.runs.find((r) => r.after)
      if (!first || !t.state.head) return { threadId, files: [] }
      const untracked = t.state.runs.find((r) => r.untracked && !r.reverted)?.untracked
      return { threadId, files: await t.shadow.diff(first.before, t.state.head), ...(untracked ? { untracked } : {}) }
    })
  }

  /** Makes the workspace what it was before run `toRun`: the runs from there on are reverted. */
  revert(threadId: string, cwd: string, toRun: number): Promise<RestoreOutcome> {
    return this.#serial(threadId, async () => {
      if (!this.#known(threadId)) return { kind: 'nothing', action: 'revert' }
      const t = await this.#load(threadId, cwd)
      const runs = t.state.runs.filter((r) => r.run >= toRun && r.after && !r.reverted)
      if (!t.shadow || runs.length === 0 || !t.state.head) return { kind: 'nothing', action: 'revert' }
      const from = t.state.head
      const to = runs[0].before
      const next: State = structuredClone(t.state)
      for (const r of next.runs) if (runs.some((u) => u.run === r.run)) r.reverted = true
      next.head = to
      next.reverts.push({ toRun, from, to, runs: runs.map((r) => r.run) })
      return this.#restore(threadId, t, 'revert', from, to, next, runs.map((r) => r.run))
    })
  }

  /** Undoes the last revert, while nothing it restored was changed since. */
  redo(threadId: string, cwd: string): Promise<RestoreOutcome> {
    return this.#serial(threadId, async () => {
      if (!this.#known(threadId)) return { kind: 'nothing', action: 'redo' }
      const t = await this.#load(threadId, cwd)
      const last = t.state.reverts.at(-1)
      if (!t.shadow || !last || !t.state.head) return { kind: 'nothing', action: 'redo' }
      const next: State = structuredClone(t.state)
      for (const r of next.runs) if (last.runs.includes(r.run)) delete r.reverted
      next.head = last.from
      next.reverts.pop()
      return this.#restore(threadId, t, 'redo', t.state.head, last.from, next, last.runs)
    })
  }

  async #restore(threadId: string, t: ThreadShadow, action: 'revert' | 'redo', from: string, to: string, next: State, runs: number[]): Promise<RestoreOutcome> {
    const shadow = t.shadow!
    try {
      const paths = await shadow.changed(from, to)
      // What the workspace holds now, against what threadhost left: a path changed since is someone else's.
      const now = await shadow.snapshot(paths)
      const touched = new Set(await shadow.changed(now, from))
      const conflicts = paths.filter((p) => touched.has(p))
      if (conflicts.length > 0) return { kind: 'conflict', paths: conflicts }
      const dir = this.#dir(threadId)
      writeAtomic(join(dir, 'pending.json'), { action, tree: to, paths, next } satisfies Pending)
      await shadow.restore(to, paths)
      await this.#finish(threadId, next)
      t.state = next
      const observation: ObservationInput = {
        type: 'workspace-restored',
        action,
        files: paths,
        reverted: action === 'revert' ? runs : [],
        restored: action === 'redo' ? runs : [],
        canRedo: next.reverts.length > 0,
      }
      return { kind: 'restored', action, files: paths, runs, observation }
    } catch (error) {
      this.options.log?.('error', `[${threadId}] ${action} failed: ${String(error)}`)
      return { kind: 'failed', reason: error instanceof Error ? error.message : String(error) }
    }
  }

  async #finish(threadId: string, next: State): Promise<void> {
    this.#save(threadId, next)
    await unlink(join(this.#dir(threadId), 'pending.json'))
  }

  /** At a start: a revert or redo a crash interrupted is finished (the files restored again, its state written). */
  async recover(): Promise<string[]> {
    let names: string[]
    try {
      names = readdirSync(this.#root)
    } catch {
      return []
    }
    const finished: string[] = []
    for (const threadId of names) {
      const file = join(this.#dir(threadId), 'pending.json')
      let pending: Pending
      try {
        pending = JSON.parse(await readFile(file, 'utf8')) as Pending
      } catch {
        continue
      }
      try {
        const t = await this.#load(threadId, pending.next.cwd)
        await t.shadow?.restore(pending.tree, pending.paths)
        await this.#finish(threadId, pending.next)
        t.state = pending.next
        finished.push(threadId)
        this.options.log?.('info', `[${threadId}] finished the ${pending.action} a stop interrupted (${pending.paths.length} files)`)
      } catch (error) {
        this.options.log?.('error', `[${threadId}] the interrupted ${pending.action} could not be finished: ${String(error)}`)
      }
    }
    return finished
  }

  /** Resolves once no checkpoint work is under way (a shutdown waits for it before the data dir may go). */
  async idle(): Promise<void> {
    while (this.#queues.size > 0) await Promise.all([...this.#queues.values()])
  }

  /** The thread is deleted: its checkpoints go with it. */
  remove(threadId: string): Promise<void> {
    return this.#serial(threadId, async () => {
      this.#threads.delete(threadId)
      await rm(this.#dir(threadId), { recursive: true, force: true })
    })
  }
}

function readState(dir: string): State | undefined {
  try {
    return JSON.parse(readFileSync(join(dir, 'state.json'), 'utf8')) as State
  } catch {
    return undefined
  }
}

/** Replaces a file whole: written beside it, flushed, renamed over it. */
function writeAtomic(file: string, value: unknown): void {
  const temp = `${file}.${process.pid}.tmp`
  const fd = openSync(temp, 'w')
  try {
    writeSync(fd, JSON.stringify(value))
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  renameSync(temp, file)
}

export { EMPTY_TREE }

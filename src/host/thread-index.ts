/**
 * The thread index: what threads exist, with their titles and counters, in one small JSON file.
 *
 * Every write is atomic (temp file + rename) and serialised, and a request that changes the index
 * is answered only after its write is on disk, so a restart loses no thread.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { ThinkingLevel } from '../schemas/index.js'

export interface ThreadRecord {
  threadId: string
  title: string
  model: string
  /** Unset: pi's configured default for the model. */
  thinkingLevel?: ThinkingLevel
  /** The thread's workspace, fixed at creation. Absent in records from before workspaces: the default root. */
  cwd?: string
  createdAt: number
  updatedAt: number
  /** The last run number, so run numbers keep counting across restarts. */
  run: number
  /** The last feed seq, so a tab's Last-Event-ID from before a restart is never mistaken for a new frame. */
  seq: number
}

export class ThreadIndex {
  readonly #file: string
  readonly #records = new Map<string, ThreadRecord>()
  #writing: Promise<void> = Promise.resolve()
  #tmpCounter = 0

  private constructor(readonly dataDir: string) {
    this.#file = join(dataDir, 'threads.json')
  }

  static async open(dataDir: string): Promise<ThreadIndex> {
    await mkdir(dataDir, { recursive: true })
    const index = new ThreadIndex(dataDir)
    try {
      const parsed = JSON.parse(await readFile(index.#file, 'utf8')) as { threads?: ThreadRecord[] }
      for (const r of parsed.threads ?? []) index.#records.set(r.threadId, r)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    }
    return index
  }

  get(threadId: string): ThreadRecord | undefined {
    return this.#records.get(threadId)
  }

  list(): ThreadRecord[] {
    return [...this.#records.values()]
  }

  /** Applies a change in memory now and resolves once it is on disk. */
  put(record: ThreadRecord): Promise<void> {
    this.#records.set(record.threadId, record)
    return this.#flush()
  }

  /** Changes a record in memory only; the next put, delete or flush writes it. */
  update(record: ThreadRecord): void {
    this.#records.set(record.threadId, record)
  }

  delete(threadId: string): Promise<void> {
    this.#records.delete(threadId)
    return this.#flush()
  }

  flush(): Promise<void> {
    return this.#flush()
  }

  #flush(): Promise<void> {
    const write = async () => {
      const tmp = `${this.#file}.${process.pid}.${++this.#tmpCounter}.tmp`
      await writeFile(tmp, JSON.stringify({ threads: this.list() }, null, 1))
      await rename(tmp, this.#file)
    }
    // Serialise writes so an older snapshot never lands after a newer one.
    this.#writing = this.#writing.then(write, write)
    return this.#writing
  }
}

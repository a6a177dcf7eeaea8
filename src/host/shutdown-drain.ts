/**
 * The registry's way out (thread-registry.ts): the commands under way, and the shutdown that waits
 * for them. New work is refused from its first instant (`closing`); every run stops, and the store
 * closes only once each command has written what it answered.
 */
import type { Checkpoints } from './checkpoints/checkpoints.js'
import type { Log } from './store/journal.js'
import type { ThreadStore } from './store/port.js'
import type { ThreadSearch } from './thread-search.js'
import type { ThreadSlot } from './thread-slot.js'

export interface DrainDeps {
  slots: () => Iterable<ThreadSlot>
  checkpoints: Checkpoints
  store: ThreadStore
  search: () => ThreadSearch | undefined
  log?: Log
}

export class ShutdownDrain {
  #closing = false
  #shutdown?: Promise<void>
  /** Commands under way: a shutdown closes the store only after each has written what it answers. */
  readonly #inflight = new Set<Promise<unknown>>()

  constructor(private readonly deps: DrainDeps) {}

  get closing(): boolean {
    return this.#closing
  }

  /** A command, waited for by a shutdown. */
  tracked<T>(work: () => Promise<T>): Promise<T> {
    const done = work()
    this.#inflight.add(done)
    const forget = () => void this.#inflight.delete(done)
    done.then(forget, forget)
    return done
  }

  /** Refuse new work, stop every run (queued prompts reported), settle open dialogs `aborted`, close the store. */
  shutdown(): Promise<void> {
    this.#shutdown ??= this.#drain()
    return this.#shutdown
  }

  async #drain(): Promise<void> {
    this.#closing = true
    await Promise.all(
      [...this.deps.slots()].map(async (slot) => {
        const live = await slot.currentLive()
        await live?.dispose('shutdown', 'aborted')
        slot.feed?.close()
      }),
    )
    // What was answered (or is about to be) is written before the store closes: a delete's removal,
    // a rename, a fork's new row. New requests are refused by now; these finish against stopped threads.
    while (this.#inflight.size > 0) await Promise.allSettled([...this.#inflight])
    // A settled run's changes are recorded (git writes under the data dir) before the store closes.
    await this.deps.checkpoints.idle()
    // Journal writes the disk refused get a last try; what still cannot be written, recovery settles.
    for (const slot of this.deps.slots()) {
      if (!slot.journal.flush()) this.deps.log?.('error', `[${slot.threadId}] shut down with journal writes the disk refused (${slot.journal.waiting.join('; ')}); the next start recovers them`)
      slot.journal.stop()
    }
    this.deps.search()?.close()
    this.deps.store.close()
  }
}

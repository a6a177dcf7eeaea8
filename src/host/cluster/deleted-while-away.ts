/**
 * As a node starts: the threads it lists from its own store that the cluster's index does not have. One
 * whose log ends at its `deleted` record was deleted on another node while this one was down, and is
 * forgotten here, its rows in the store included. A thread whose log is empty or ends otherwise stays listed.
 */
import type { ThreadLogs, ThreadRecord } from './port.js'

/** How long the check waits for a thread's last record. */
const LAST_RECORD_MS = 5000
/** How many threads are checked at once: a node that lists thousands the index lacks is not minutes at it. */
const CHECKS_AT_ONCE = 8

export interface ListedThreads {
  list(): Array<{ threadId: string }>
  forget(threadId: string): void
}

/**
 * `inIndex`: the threads the index has had since the node started, added to while this runs — a row
 * heard meanwhile is a thread made again under the id, and the index's word stands.
 */
export async function forgetDeletedWhileAway(logs: ThreadLogs, registry: ListedThreads, inIndex: Set<string>, stopped: () => boolean): Promise<void> {
  const listed = registry.list().map(({ threadId }) => threadId)
  let next = 0
  const check = async () => {
    while (next < listed.length && !stopped()) {
      const threadId = listed[next++]
      if (inIndex.has(threadId)) continue
      try {
        const last = await lastRecord(logs, threadId)
        if (last?.kind === 'deleted' && !inIndex.has(threadId)) registry.forget(threadId)
      } catch {
        // Not read, or not forgotten (its rows could not be removed): it stays listed, and the other checks go on.
      }
    }
  }
  await Promise.all(Array.from({ length: CHECKS_AT_ONCE }, check))
}

/** The last record of the thread's log; undefined when it has none, or the engine did not give it within LAST_RECORD_MS. */
async function lastRecord(logs: ThreadLogs, threadId: string): Promise<ThreadRecord | undefined> {
  const position = await logs.last(threadId)
  if (position === 0) return undefined
  return new Promise((resolve) => {
    let found: ThreadRecord | undefined
    let reader: { stop(): void } | undefined
    let ended = false
    const end = () => {
      if (ended) return
      ended = true
      clearTimeout(timer)
      reader?.stop()
      resolve(found)
    }
    const timer = setTimeout(end, LAST_RECORD_MS).unref()
    reader = logs.read(threadId, (record, at) => void (at >= position && (found ??= record)), end, position - 1)
    // An adapter may deliver, and end, within the call itself.
    if (ended) reader.stop()
  })
}

/**
 * The clock the threads' machines keep time on (their idle release, their questions' expiry): one
 * Node timer per distinct delay, not one per armed delay.
 *
 * Every idle live thread arms the same `idleMs` release, and a Node `Timeout` each (with its list
 * links and xstate's callback) is memory a thousand idle threads would hold a thousand times. What
 * is armed with one delay falls due in the order it was armed (the monotonic clock), so a delay's
 * pending entries are a Set in insertion order and its one timer waits for the first of them.
 * Whether and when a release is armed stays the machine's (its `after` delay); this only keeps time.
 * The timers never hold the process open on their own.
 */
import { performance } from 'node:perf_hooks'

interface Entry {
  fn: () => void
  due: number
  ms: number
}

interface Lane {
  entries: Set<Entry>
  timer?: NodeJS.Timeout
  /** Its due entries are being run: what they arm or clear meanwhile is settled once they are done. */
  firing?: boolean
}

const lanes = new Map<number, Lane>()

function arm(lane: Lane, ms: number, wait: number): void {
  lane.timer = setTimeout(() => fire(lane, ms), Math.max(0, wait)).unref()
}

function fire(lane: Lane, ms: number): void {
  lane.timer = undefined
  lane.firing = true
  const now = performance.now()
  let failure: { error: unknown } | undefined
  for (const entry of lane.entries) {
    // Node's timer may wake a little before the monotonic due time: the rest waits for its own turn.
    if (entry.due > now) break
    lane.entries.delete(entry)
    try {
      entry.fn()
    } catch (error) {
      // The others still fire; the first failure is thrown as a lone timer's would be.
      failure ??= { error }
    }
  }
  lane.firing = false
  const next = lane.entries.values().next()
  if (next.done) lanes.delete(ms)
  else arm(lane, ms, next.value.due - performance.now())
  if (failure) throw failure.error
}

export const SHARED_CLOCK = {
  setTimeout(fn: (...args: unknown[]) => void, ms: number): Entry {
    const entry: Entry = { fn: fn as () => void, due: performance.now() + ms, ms }
    let lane = lanes.get(ms)
    if (!lane) lanes.set(ms, (lane = { entries: new Set() }))
    lane.entries.add(entry)
    if (!lane.timer && !lane.firing) arm(lane, ms, ms)
    return entry
  },
  clearTimeout(id: unknown): void {
    const entry = id as Entry
    const lane = lanes.get(entry.ms)
    if (!lane?.entries.delete(entry) || lane.entries.size > 0 || lane.firing) return
    // A lane with nothing pending keeps no timer; one whose first entry went waits on and re-arms for the next.
    clearTimeout(lane.timer)
    lanes.delete(entry.ms)
  },
}

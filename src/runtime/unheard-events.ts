/**
 * pi's extension runner builds a full extension context (about thirty getters) and a list of every
 * extension's handlers for each agent event it emits, including each streamed text delta, whether or
 * not any extension listens to that event. With no extension listening to `message_update`, that is
 * most of pi's own CPU and allocation per streamed delta (docs/benchmarks.md).
 *
 * `skipUnheardEvents` makes one runner's `emit` return at once for an event type no extension has a
 * handler for: what pi's `emit` does then too (no handler runs, it resolves undefined), without
 * building the context. Events someone listens to go to pi's own `emit` unchanged. pi builds a new
 * runner when a session reloads, so the adapter applies this to whichever runner is current before
 * each run; a runner never seen simply keeps pi's behaviour.
 */
import type { AgentSession } from '@earendil-works/pi-coding-agent'

type Runner = AgentSession['extensionRunner']

const quieted = new WeakSet<Runner>()

export function skipUnheardEvents(runner: Runner | undefined): void {
  if (!runner || quieted.has(runner)) return
  quieted.add(runner)
  type Emit = (event: { type: string }) => Promise<unknown>
  const emit = runner.emit.bind(runner) as Emit
  ;(runner as unknown as { emit: Emit }).emit = (event) => (runner.hasHandlers(event.type) ? emit(event) : Promise.resolve(undefined))
}

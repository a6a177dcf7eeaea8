/**
 * Letting go of a thread's runtime once its thread is done with it (a dispose, an idle timeout, a
 * failed machine): its queued prompts handed back as rejected, its events no longer heard, its run
 * stopped within a bound, the runtime disposed. A release always releases: what fails on the way is
 * said, and the rest still runs. The live thread (live-thread.ts) has already let go of the runtime.
 */
import type { PromptImage } from '../schemas/index.js'
import type { AgentRuntime } from '../runtime/port.js'
import { errorText } from '../runtime/extension-ui.js'
import type { Feed } from './feed.js'

export interface ReleaseOf {
  /** Why: each queued prompt is rejected with it. */
  reason: string
  feed: Feed
  /** The images a prompt was admitted with, while the thread still holds them for the runtime. */
  images: (messageId: string) => PromptImage[] | undefined
  /** Stops hearing the runtime's events. */
  unsubscribe: () => void
  log: (level: 'warn' | 'error', message: string) => void
}

export async function releaseRuntime(runtime: AgentRuntime, of: ReleaseOf): Promise<void> {
  const { reason, feed, log } = of
  try {
    // Queued prompts never ride into a later run and are never dropped silently.
    const cleared = runtime.clearQueue()
    for (const p of [...cleared.steering, ...cleared.followUp]) {
      const images = p.images ?? of.images(p.messageId)
      feed.append({ type: 'prompt-rejected', messageId: p.messageId, reason, text: p.text, ...(images?.length ? { images } : {}) })
    }
  } catch (error) {
    // A release must still release: the loss is said, and the runtime is still stopped and disposed.
    try {
      feed.append({ type: 'failure', message: `the queue could not be cleared: ${errorText(error)}` })
    } catch (failure) {
      log('error', `the queue could not be cleared (${errorText(error)}), nor that said: ${errorText(failure)}`)
    }
  }
  // Nothing the released runtime says afterwards belongs on the feed: the thread has moved on.
  of.unsubscribe()
  try {
    const stopped = runtime.abort()
    // Open dialogs settle and asks are cancelled, so a tool's wait ends and the abort resolves;
    // a tool that ignores its signal must still not hold the release for ever.
    const bound = delay(5000)
    await Promise.race([stopped, bound.done])
    // The bound is no longer needed: cleared, so a released thread does not hold a 5 s timer, its promise and closure.
    bound.cancel()
    await runtime.dispose()
  } catch (error) {
    log('warn', `runtime release: ${errorText(error)}`)
  }
}

/** A timer that never holds the process open, and can be cleared once it is not needed (it then never resolves). */
function delay(ms: number): { done: Promise<void>; cancel: () => void } {
  let timer: ReturnType<typeof setTimeout> | undefined
  const done = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms).unref()))
  return { done, cancel: () => clearTimeout(timer) }
}

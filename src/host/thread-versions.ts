/**
 * Versions of a prompt in one thread: an Edit or a Regenerate goes back to just before the prompt in
 * pi's session tree and sends there, so the thread keeps one conversation whose prompts may have
 * several versions (‹ 2 / 3 ›), and choosing one moves the conversation in place. The runtime moves
 * (its `navigate`) and says the new branch to every follower (a `branch` frame); this file decides
 * whether a move may happen now and where to.
 */
import type { TranscriptEntry } from '../schemas/index.js'
import type { VersionOutcome } from '../schemas/outcomes.js'
import type { NavigateTarget } from '../runtime/port.js'
import { forkPrompt } from './fork.js'
import type { LiveThread } from './live-thread.js'

/** The prompt an Edit or a Regenerate at `messageId` replaces: the user message itself, or the one that produced a reply. */
export function promptAt(transcript: TranscriptEntry[], messageId: string): { messageId: string; text: string } | undefined {
  return forkPrompt(transcript, messageId)
}

/**
 * Moves the conversation, between runs only: a run's messages hang on the branch it began on.
 * `admitting`: prompts on their way to the machine (they would start a run on the old branch).
 */
export async function move(live: LiveThread, admitting: number, target: NavigateTarget): Promise<VersionOutcome> {
  if (live.busy || admitting > 0) return { kind: 'busy' }
  const moved = await live.navigate(target)
  if (!moved) return { kind: 'invalid', reason: "this thread's runtime keeps no versions" }
  if (moved.kind === 'cancelled') return { kind: 'version-cancelled' }
  return moved
}

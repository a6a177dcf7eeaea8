/**
 * Stop's and Alt+Up's hand-back, as a tab sees it: the server returns every text that was waiting —
 * this tab's and any other tab's. The texts go back through the composer's draft, the images this
 * tab sent with them come back beside it, and the texts this tab did not queue are named in a note,
 * so nothing arrives in the draft unexplained. To the store it is a stop: this tab's prompts the
 * runtime never claimed leave the transcript.
 */
import type { PromptImage, ThreadStatus } from '../schemas/index.js'
import { isConflict, isStaleRun } from './api.js'
import type { ThreadStore } from './thread-store.js'

/** Restored texts that this tab did not queue: what is left of `restored` after taking out `own`, once each. */
export function foreignTexts(restored: readonly string[], own: readonly string[]): string[] {
  const left = [...own]
  return restored.filter((t) => {
    const i = left.indexOf(t)
    if (i === -1) return true
    left.splice(i, 1)
    return false
  })
}

const quote = (t: string) => `“${t.length > 60 ? `${t.slice(0, 59)}…` : t}”`

/** Asks for the hand-back (`ask` gets the run this tab shows, if busy); resolves the texts for the draft. */
export async function handBack(
  store: ThreadStore | undefined,
  status: ThreadStatus | undefined,
  ask: (run: number | undefined) => Promise<{ restored: string[] }>,
  attach: (images: PromptImage[]) => void,
): Promise<string[]> {
  const queued = (store?.getSnapshot().context.pending ?? []).filter((p) => p.queued)
  const own = queued.map((p) => p.text)
  store?.trigger.stopping()
  try {
    const receipt = await ask(status?.busy ? status.run : undefined)
    store?.trigger.stopped()
    const left = [...receipt.restored]
    const images = queued.flatMap((p) => {
      const i = left.indexOf(p.text)
      if (i === -1) return []
      left.splice(i, 1)
      return p.images ?? []
    })
    if (images.length) attach(images)
    const foreign = foreignTexts(receipt.restored, own)
    if (foreign.length > 0) {
      store?.trigger.noted({
        note: {
          id: `restored:${Date.now()}`,
          title: foreign.length === 1 ? 'One restored message' : `${foreign.length} restored messages`,
          reason: `queued in another tab, now in your draft too: ${foreign.map(quote).join(', ')}`,
          at: Date.now(),
        },
      })
    }
    return receipt.restored
  } catch (err) {
    store?.trigger.stopFailed()
    if (isStaleRun(err)) {
      // The run this tab showed has ended and a newer one started (in another tab): not ours to stop unseen.
      store?.trigger.noted({
        note: { id: `stale:${Date.now()}`, title: 'Not stopped', reason: 'a newer run has started since; press Stop again to stop it', at: Date.now() },
      })
      return []
    }
    if (isConflict(err)) return [] // nothing in flight any more
    throw err
  }
}

/**
 * What a fork hands to the pane that opens the new thread: the prompt it was forked before, to put
 * in the composer (Edit) or to send at once (Regenerate). Kept here, outside any element, because
 * opening the new thread may re-render the pane for another id, or make a new pane.
 */
export interface ForkHandoff {
  text: string
  /** Send it at once (Regenerate) rather than leave it to be edited (Edit). */
  resend: boolean
}

const handoffs = new Map<string, ForkHandoff>()

/** The fork `threadId` is about to be opened: this is for its composer. */
export function handOff(threadId: string, handoff: ForkHandoff): void {
  handoffs.set(threadId, handoff)
}

/** What was handed to `threadId`, once: the first pane that opens it takes it. */
export function takeHandoff(threadId: string): ForkHandoff | undefined {
  const handoff = handoffs.get(threadId)
  handoffs.delete(threadId)
  return handoff
}

/** Into the composer: filled, and sent for a Regenerate. */
export async function deliver(composer: { fill(text: string): void; sendDraft(): Promise<void>; updateComplete: Promise<unknown> }, handoff: ForkHandoff): Promise<void> {
  await composer.updateComplete
  composer.fill(handoff.text)
  if (handoff.resend) await composer.sendDraft()
}

/**
 * What a fork hands to the pane that opens the new thread: the prompt it was forked before, to put
 * in the composer. Kept here, outside any element, because opening the new thread may re-render the
 * pane for another id, or make a new pane. (Edit and Regenerate stay in the thread: message-versions.ts.)
 */
export interface ForkHandoff {
  text: string
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

/** Into the composer, to edit and send. */
export async function deliver(composer: { fill(text: string): void; updateComplete: Promise<unknown> }, handoff: ForkHandoff): Promise<void> {
  await composer.updateComplete
  composer.fill(handoff.text)
}

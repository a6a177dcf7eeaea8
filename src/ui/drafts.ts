/**
 * Each thread's unsent draft, kept in the browser's localStorage: it stays with its thread when the
 * person switches threads, and survives a reload, a closed tab and the thread's deletion in another
 * tab (the text is the person's; only sending it clears it). Storage that is full or refused (a
 * private window) only costs the keeping, never the typing.
 */
const PREFIX = 'threadhost:draft:'

export function loadDraft(threadId: string): string {
  try {
    return globalThis.localStorage?.getItem(PREFIX + threadId) ?? ''
  } catch {
    return ''
  }
}

export function saveDraft(threadId: string, text: string): void {
  try {
    if (text.trim() === '') globalThis.localStorage?.removeItem(PREFIX + threadId)
    else globalThis.localStorage?.setItem(PREFIX + threadId, text)
  } catch {
    // Full or refused: the draft is still in the box.
  }
}

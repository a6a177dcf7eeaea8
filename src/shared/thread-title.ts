/**
 * How a thread nobody titled is called, in the server's summaries and in the pane before the list
 * catches up: one rule, so the list and the pane never name the same thread differently.
 */
export const UNTITLED = 'New thread'
export const TITLE_CHARS = 60
export const PREVIEW_CHARS = 120

/** One line of at most `max` characters, cut at a word where it can be, with an ellipsis when cut. */
export function oneLine(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim()
  if (line.length <= max) return line
  const cut = line.slice(0, max - 1)
  const space = cut.lastIndexOf(' ')
  return `${(space > max / 2 ? cut.slice(0, space) : cut).trimEnd()}…`
}

/** A first prompt as a title; "New thread" when nothing was said. */
export function promptTitle(firstPrompt: string | undefined): string {
  return firstPrompt?.trim() ? oneLine(firstPrompt, TITLE_CHARS) : UNTITLED
}

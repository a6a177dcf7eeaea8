/**
 * Extensions' shortcuts (pi's key ids, `ctrl+alt+p`) matched against a browser's key presses. Only
 * combinations a page can receive are bound: the browser keeps some for itself (a tab, a window),
 * and the composer keeps Enter and Escape for sending and stopping.
 */

const MODIFIERS = ['ctrl', 'alt', 'shift', 'meta'] as const

/** pi's key id, its modifiers in a fixed order, so two spellings of one combination compare equal. */
export function normalizeKey(id: string): string {
  const parts = id.toLowerCase().split('+').filter(Boolean)
  const key = parts.pop() ?? ''
  const mods = MODIFIERS.filter((m) => parts.includes(m) || (m === 'meta' && (parts.includes('super') || parts.includes('cmd'))))
  return [...mods, key].join('+')
}

/** The key id of a key press, or `undefined` for a bare modifier. The physical key, so Alt's special characters still match. */
export function keyIdOf(e: Pick<KeyboardEvent, 'key' | 'code' | 'ctrlKey' | 'altKey' | 'shiftKey' | 'metaKey'>): string | undefined {
  if (['Control', 'Alt', 'Shift', 'Meta', 'AltGraph'].includes(e.key)) return undefined
  const key = /^Key[A-Z]$/.test(e.code) ? e.code.slice(3).toLowerCase() : /^Digit\d$/.test(e.code) ? e.code.slice(5) : e.key.toLowerCase()
  const mods = MODIFIERS.filter((m) => e[`${m}Key`])
  return [...mods, key].join('+')
}

/** What the browser or the composer takes before an extension could: never bound. */
const TAKEN = new Set(
  ['ctrl+w', 'ctrl+t', 'ctrl+n', 'ctrl+q', 'ctrl+tab', 'ctrl+shift+tab', 'ctrl+shift+n', 'ctrl+shift+t', 'ctrl+shift+w', 'alt+f4', 'meta+w', 'meta+t', 'meta+n', 'meta+q'].map(
    normalizeKey,
  ),
)

/** A page can receive it, it has a modifier (so typing is never taken), and it is not the composer's Enter or Escape. */
export function browserCanDeliver(id: string): boolean {
  const normal = normalizeKey(id)
  const parts = normal.split('+')
  const key = parts.at(-1)!
  const mods = parts.slice(0, -1).filter((m) => m !== 'shift')
  return mods.length > 0 && !TAKEN.has(normal) && key !== 'enter' && key !== 'escape'
}

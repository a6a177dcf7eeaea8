/**
 * A browser key press as the bytes a terminal sends for it (xterm's legacy encoding), which is what
 * pi-tui's `matchesKey` parses on the host: Enter `\r`, Escape `\x1b`, arrows `\x1b[A`…, Shift+Tab
 * `\x1b[Z`, Ctrl+letter its control code, Alt+key ESC then the key. Undefined for a key a terminal
 * would not send (a lone modifier, a function key pi does not use, the browser's own shortcuts).
 */

const CSI = '\x1b['

const NAMED: Record<string, string> = {
  Enter: '\r',
  Escape: '\x1b',
  Backspace: '\x7f',
  Tab: '\t',
  ArrowUp: `${CSI}A`,
  ArrowDown: `${CSI}B`,
  ArrowRight: `${CSI}C`,
  ArrowLeft: `${CSI}D`,
  Home: `${CSI}H`,
  End: `${CSI}F`,
  Insert: `${CSI}2~`,
  Delete: `${CSI}3~`,
  PageUp: `${CSI}5~`,
  PageDown: `${CSI}6~`,
}

/** xterm's modifier parameter: 1 + shift(1) + alt(2) + ctrl(4). */
function modifier(e: Pick<KeyboardEvent, 'shiftKey' | 'altKey' | 'ctrlKey'>): number {
  return 1 + (e.shiftKey ? 1 : 0) + (e.altKey ? 2 : 0) + (e.ctrlKey ? 4 : 0)
}

export type KeyLike = Pick<KeyboardEvent, 'key' | 'shiftKey' | 'altKey' | 'ctrlKey' | 'metaKey'>

export function terminalBytes(e: KeyLike): string | undefined {
  if (e.metaKey) return undefined
  const { key } = e
  if (key === 'Tab' && e.shiftKey) return `${CSI}Z`
  if (key === 'Enter' && e.shiftKey) return '\x1b\r'
  const named = NAMED[key]
  if (named !== undefined) {
    const mod = modifier(e)
    // Modified arrows and the like: CSI 1;<mod> <final> (xterm), which pi-tui reads as e.g. ctrl+left.
    if (mod > 1 && named.startsWith(CSI) && key !== 'Tab') {
      const final = named.at(-1)!
      return final === '~' ? `${named.slice(0, -1)};${mod}~` : `${CSI}1;${mod}${final}`
    }
    return e.altKey && key !== 'Escape' ? `\x1b${named}` : named
  }
  if (key.length !== 1 && [...key].length !== 1) return undefined
  if (e.ctrlKey) {
    // Ctrl+V is the browser's paste, which reaches the component as the pasted text.
    if (key.toLowerCase() === 'v') return undefined
    const code = key.toLowerCase().charCodeAt(0)
    if (code >= 97 && code <= 122) return (e.altKey ? '\x1b' : '') + String.fromCharCode(code - 96)
    if (key === ' ' || key === '@') return '\x00'
    if (key === '[') return '\x1b'
    if (key === '\\') return '\x1c'
    if (key === ']') return '\x1d'
    return undefined
  }
  return e.altKey ? `\x1b${key}` : key
}

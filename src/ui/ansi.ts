/**
 * ANSI-styled lines (what pi's components and theme write) as runs of styled text for the page:
 * SGR colours (16, 256 and true colour), bold, dim, italic, underline, inverse and strike-through.
 * Every other escape (hyperlinks, cursor markers, titles) is dropped and the text it wrapped kept.
 */

export interface Run {
  text: string
  /** A CSS declaration list, '' for plain text. */
  style: string
}

interface Pen {
  fg?: string
  bg?: string
  bold?: boolean
  dim?: boolean
  italic?: boolean
  underline?: boolean
  inverse?: boolean
  strike?: boolean
}

/** xterm's default 16 colours. */
const BASE16 = [
  '#000000', '#cd0000', '#00cd00', '#cdcd00', '#0000ee', '#cd00cd', '#00cdcd', '#e5e5e5',
  '#7f7f7f', '#ff0000', '#00ff00', '#ffff00', '#5c5cff', '#ff00ff', '#00ffff', '#ffffff',
]

function color256(n: number): string | undefined {
  if (!(n >= 0 && n <= 255)) return undefined
  if (n < 16) return BASE16[n]
  if (n >= 232) {
    const v = 8 + (n - 232) * 10
    return `rgb(${v},${v},${v})`
  }
  const i = n - 16
  const level = (c: number) => (c === 0 ? 0 : 55 + c * 40)
  return `rgb(${level(Math.floor(i / 36))},${level(Math.floor(i / 6) % 6)},${level(i % 6)})`
}

/** Applies one SGR parameter list to the pen. */
function apply(pen: Pen, params: number[]): Pen {
  let p: Pen = { ...pen }
  for (let i = 0; i < params.length; i++) {
    const code = params[i]
    if (code === 0) p = {}
    else if (code === 1) p.bold = true
    else if (code === 2) p.dim = true
    else if (code === 3) p.italic = true
    else if (code === 4) p.underline = true
    else if (code === 7) p.inverse = true
    else if (code === 9) p.strike = true
    else if (code === 22) p.bold = p.dim = false
    else if (code === 23) p.italic = false
    else if (code === 24) p.underline = false
    else if (code === 27) p.inverse = false
    else if (code === 29) p.strike = false
    else if (code >= 30 && code <= 37) p.fg = BASE16[code - 30]
    else if (code >= 90 && code <= 97) p.fg = BASE16[code - 90 + 8]
    else if (code >= 40 && code <= 47) p.bg = BASE16[code - 40]
    else if (code >= 100 && code <= 107) p.bg = BASE16[code - 100 + 8]
    else if (code === 39) delete p.fg
    else if (code === 49) delete p.bg
    else if (code === 38 || code === 48) {
      let value: string | undefined
      if (params[i + 1] === 5) {
        value = color256(params[i + 2])
        i += 2
      } else if (params[i + 1] === 2) {
        const [r, g, b] = params.slice(i + 2, i + 5)
        value = `rgb(${r ?? 0},${g ?? 0},${b ?? 0})`
        i += 4
      }
      if (value) p[code === 38 ? 'fg' : 'bg'] = value
    }
  }
  return p
}

function css(pen: Pen): string {
  const fg = pen.inverse ? (pen.bg ?? 'var(--term-bg, #1e1e1e)') : pen.fg
  const bg = pen.inverse ? (pen.fg ?? 'var(--term-fg, #e5e5e5)') : pen.bg
  const parts: string[] = []
  if (fg) parts.push(`color:${fg}`)
  if (bg) parts.push(`background:${bg}`)
  if (pen.bold) parts.push('font-weight:bold')
  if (pen.dim) parts.push('opacity:0.7')
  if (pen.italic) parts.push('font-style:italic')
  const lines = [pen.underline ? 'underline' : '', pen.strike ? 'line-through' : ''].filter(Boolean)
  if (lines.length) parts.push(`text-decoration:${lines.join(' ')}`)
  return parts.join(';')
}

// CSI … final byte, OSC … BEL/ST, APC/DCS/PM … BEL/ST, or a lone two-byte escape.
const ESCAPE = /\x1b(?:\[([0-9;:?]*)([@-~])|\][^\x07\x1b]*(?:\x07|\x1b\\)|[_P^][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])/g

/** The line's styled runs, adjacent runs of one style merged. The pen starts plain on every line. */
export function ansiRuns(line: string): Run[] {
  const runs: Run[] = []
  let pen: Pen = {}
  let last = 0
  const push = (text: string) => {
    if (!text) return
    const style = css(pen)
    const prev = runs.at(-1)
    if (prev && prev.style === style) prev.text += text
    else runs.push({ text, style })
  }
  for (const m of line.matchAll(ESCAPE)) {
    push(line.slice(last, m.index))
    last = m.index + m[0].length
    if (m[2] === 'm') pen = apply(pen, (m[1] || '0').split(/[;:]/).map((n) => (n === '' ? 0 : Number(n))))
  }
  push(line.slice(last))
  return runs
}

/** The line's text as a terminal shows it: every escape dropped. */
export function ansiText(line: string): string {
  return ansiRuns(line)
    .map((r) => r.text)
    .join('')
}

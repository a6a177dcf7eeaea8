/**
 * ANSI-styled lines as a `<pre>`'s content: styled runs (ansi.ts), a newline between lines. What
 * widgets, headers and footers given as component factories are drawn with beside the composer; a
 * component the user types into is an xterm.js terminal instead (terminal-view.ts).
 */
import { html, nothing } from 'lit'
import { ansiRuns } from './ansi.js'

export function ansiBlock(lines: readonly string[]) {
  return lines.map(
    (line, i) => html`${i > 0 ? '\n' : nothing}${ansiRuns(line).map((r) => (r.style ? html`<span style=${r.style}>${r.text}</span>` : r.text))}`,
  )
}

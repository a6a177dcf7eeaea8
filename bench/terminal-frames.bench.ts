/**
 * What a terminal component costs on the wire (issue 21): a 60-line component (pi-tui's Editor
 * under a 58-line styled list, as question.ts draws) redrawing on every keystroke, 30 keystrokes a
 * second, 10 followers. Each keystroke is rendered by the real ComponentHost, diffed and encoded as
 * the feed encodes it; the same bytes go to every follower. Compared with sending the whole screen.
 *
 *   node --import tsx bench/terminal-frames.bench.ts
 */
import { Editor } from '@earendil-works/pi-tui'
import { initTheme } from '@earendil-works/pi-coding-agent'
import { encodeObservation } from '../src/host/frame.js'
import { ComponentHost } from '../src/runtime/terminal-host.js'
import { diffScreen } from '../src/shared/terminal-screen.js'
import type { Observation, TerminalScreen } from '../src/schemas/index.js'

const KEYS = 300
const PER_SECOND = 30
const FOLLOWERS = 10

initTheme(undefined, false)
const screens: TerminalScreen[] = []
const host = new ComponentHost({ size: { cols: 80, rows: 24 }, onScreen: (s) => screens.push(s) })
let selected = 0
const editorTheme = { borderColor: (s: string) => `\x1b[36m${s}\x1b[39m`, selectList: { selectedPrefix: (t: string) => t, selectedText: (t: string) => t, description: (t: string) => t, scrollInfo: (t: string) => t, noMatch: (t: string) => t } }
const editor = new Editor(host.tui, editorTheme)
host.mount({
  render: (width) => [
    ...Array.from({ length: 57 }, (_, i) => (i === selected % 57 ? `\x1b[7m> ${i + 1}. option number ${i + 1}\x1b[27m` : `  \x1b[2m${i + 1}. option number ${i + 1}\x1b[22m`)),
    ...editor.render(width),
  ].slice(0, 60),
  handleInput: (d) => {
    if (d === '\x1b[B') selected++
    else editor.handleInput(d)
  },
  invalidate: () => {},
})
const tick = () => new Promise((r) => setImmediate(r))
await tick()
let seq = 1
let diffBytes = 0
let fullBytes = 0
let cpu = 0
let last = screens.at(-1)!
console.log(`screen: ${last.lines.length} lines`)
for (let k = 0; k < KEYS; k++) {
  host.input(k % 2 ? '\x1b[B' : 'x')
  await tick()
  const next = screens.at(-1)!
  const t0 = process.hrtime.bigint()
  const frame = diffScreen(last, next)
  const diff = encodeObservation({ seq: ++seq, type: 'terminal-frame', id: 'd', ...frame } as Observation)
  cpu += Number(process.hrtime.bigint() - t0)
  const full = encodeObservation({ seq, type: 'terminal-frame', id: 'd', ...diffScreen(undefined, next) } as Observation)
  diffBytes += diff.length
  fullBytes += full.length
  last = next
}
const perFrame = diffBytes / KEYS
const perFull = fullBytes / KEYS
console.log(`bytes per frame: diff ${perFrame.toFixed(0)} B, whole screen ${perFull.toFixed(0)} B (${(perFull / perFrame).toFixed(1)}×)`)
console.log(`at ${PER_SECOND} keys/s to ${FOLLOWERS} followers: diff ${((perFrame * PER_SECOND * FOLLOWERS) / 1024).toFixed(1)} KiB/s, whole screen ${((perFull * PER_SECOND * FOLLOWERS) / 1024).toFixed(1)} KiB/s`)
const r0 = process.hrtime.bigint()
for (let k = 0; k < KEYS; k++) host.render()
const render = Number(process.hrtime.bigint() - r0) / KEYS
console.log(`host CPU per redraw: render ${(render / 1e3).toFixed(1)} µs + diff and encode ${(cpu / KEYS / 1e3).toFixed(1)} µs (once for all followers: the same bytes go to each)`)
host.dispose()

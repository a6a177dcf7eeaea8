/**
 * pi's terminal components hosted with no terminal (issue 21, step 1): pi's own example
 * extensions, installed unmodified, build their components with threadhost's TUI stand-in; the
 * component renders to 80-column lines, takes terminal bytes, and its `done(value)` is the value
 * `ctx.ui.custom()` resolves with. The bridge here stands in for the host (it opens every component
 * at once); the host's side is test/server/terminal-components.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { stripVTControlCharacters } from 'node:util'
import { join } from 'node:path'
import { visibleWidth } from '@earendil-works/pi-tui'
import type { TerminalScreen } from '../../src/schemas/index.js'
import type { DialogResolution, TerminalControl, TerminalRequest } from '../../src/runtime/port.js'
import { ComponentHost, screenOf } from '../../src/runtime/terminal-host.js'
import { FakeBridge, installExamples, keptLog, piRuntimes, Recorder, tempDir, waitFor } from './helpers.js'

const KEY = { up: '\x1b[A', down: '\x1b[B', left: '\x1b[D', right: '\x1b[C', enter: '\r', escape: '\x1b', tab: '\t' }

interface Shown {
  request: TerminalRequest
  screens: TerminalScreen[]
  control: TerminalControl
  settled?: DialogResolution
  resolve(resolution: DialogResolution): void
}

/** A bridge that shows every component at once and records its screens; `done` settles it answered. */
class TerminalBridge extends FakeBridge {
  readonly terminals: Shown[] = []
  showTerminal(request: TerminalRequest): Promise<DialogResolution> {
    return new Promise((resolve) => {
      const shown = {
        request,
        screens: [],
        resolve: (resolution: DialogResolution) => {
          if (shown.settled) return
          shown.settled = resolution
          shown.control.close()
          resolve(resolution)
        },
      } as unknown as Shown
      this.terminals.push(shown)
      shown.control = request.open({
        frame: (screen) => shown.screens.push(screen),
        done: () => shown.resolve({ outcome: 'answered' }),
        cancel: () => shown.resolve({ outcome: 'cancelled' }),
      })
    })
  }
}

const cleanups: Array<() => unknown> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

async function thread(examples: string[]) {
  const tmp = tempDir()
  cleanups.push(tmp.cleanup)
  const agentDir = join(tmp.dir, 'agent')
  installExamples(agentDir, ...examples)
  const log = keptLog()
  const { create } = await piRuntimes({ dataDir: tmp.dir, agentDir, log })
  const ui = new TerminalBridge()
  const runtime = await create({ threadId: 't', model: 'demo', ui })
  cleanups.push(() => runtime.dispose())
  return { ui, runtime, rec: new Recorder(runtime), log }
}

const text = (screen: TerminalScreen | undefined) => (screen?.lines ?? []).map((l) => stripVTControlCharacters(l))

/** Waits for the n-th component and for a screen of it that satisfies `ok`. */
async function screenOfTerminal(ui: TerminalBridge, n: number, ok: (lines: string[]) => boolean, what: string): Promise<string[]> {
  await waitFor(() => ui.terminals[n]?.screens.some((s) => ok(text(s))) ?? false, what)
  return text(ui.terminals[n].screens.at(-1))
}

describe('the component host', () => {
  it('renders at 80 columns: lines wider are cut by width, the cursor marker becomes the cursor, fake cursors reverse video', () => {
    const screen = screenOf(['x'.repeat(100), `ab\x1b_pi:c\x07\x1b_pi:fc\x07c\x1b_pi:/fc\x07`, '日本語'.repeat(20)], { cols: 80, rows: 24 })
    expect(visibleWidth(screen.lines[0])).toBe(80)
    expect(screen.lines[1]).toBe('ab\x1b[7mc\x1b[27m')
    expect(screen.cursor).toEqual({ row: 1, col: 2 })
    expect(visibleWidth(screen.lines[2])).toBeLessThanOrEqual(80)
  })

  it('coalesces every render request and key of one event-loop turn into one frame', async () => {
    const screens: TerminalScreen[] = []
    const host = new ComponentHost({ size: { cols: 80, rows: 24 }, onScreen: (s) => screens.push(s) })
    let keys = ''
    host.mount({
      render: () => [`typed: ${keys}`],
      handleInput: (d) => {
        keys += d
        host.tui.requestRender()
      },
      invalidate: () => {},
    })
    for (const k of 'hello') host.input(k)
    host.tui.requestRender()
    await new Promise((r) => setImmediate(r))
    await new Promise((r) => setImmediate(r))
    expect(screens.map((s) => s.lines[0])).toEqual(['typed: hello'])
    host.dispose()
    host.input('!')
    await new Promise((r) => setImmediate(r))
    expect(screens).toHaveLength(1)
  })
})

describe("pi's example components, hosted", () => {
  it('ctx.mode is "tui" where the host draws components: /todos (todo.ts) shows the todo list, and Escape closes it with done()', async () => {
    const { ui, runtime, rec, log } = await thread(['todo.ts'])
    runtime.prompt({ messageId: 'p', text: '/todos' })
    const lines = await screenOfTerminal(ui, 0, (l) => l.some((x) => x.includes('Todos')), 'the todo list')
    expect(lines.join('\n')).toMatch(/No todos yet/)
    expect(ui.terminals[0].request).toMatchObject({ cols: 80, origin: { kind: 'extension' } })
    ui.terminals[0].control.input(KEY.escape)
    await waitFor(() => ui.terminals[0].settled !== undefined, 'the list to close')
    expect(ui.terminals[0].settled).toEqual({ outcome: 'answered' })
    await rec.next('settled')
    expect(ui.notes.map((n) => n.message).join('\n')).not.toMatch(/requires interactive mode|needs a terminal/)
    expect(log.errors).toEqual([])
  })

  it('question.ts: arrows move the selection, Enter picks an option, and the tool gets it back', async () => {
    const { ui, runtime, rec } = await thread(['question.ts'])
    runtime.prompt({ messageId: 'p', text: 'call question {"question":"Which colour?","options":[{"label":"Red"},{"label":"Green"},{"label":"Blue"}]}' })
    const first = await screenOfTerminal(ui, 0, (l) => l.some((x) => x.includes('Which colour?')), 'the question')
    expect(first.join('\n')).toMatch(/> 1\. Red/)
    ui.terminals[0].control.input(KEY.down)
    ui.terminals[0].control.input(KEY.down)
    await screenOfTerminal(ui, 0, (l) => l.some((x) => x.includes('> 3. Blue')), 'Blue selected')
    ui.terminals[0].control.input(KEY.enter)
    const end = await rec.next('tool-end')
    expect(end.result.text).toMatch(/User selected: 3\. Blue/)
  })

  it('question.ts: "Type something." opens the inline editor; typed text and Enter answer, Escape in the list cancels', async () => {
    const { ui, runtime, rec } = await thread(['question.ts'])
    runtime.prompt({ messageId: 'p', text: 'call question {"question":"Name?","options":[{"label":"Ann"}]}' })
    await screenOfTerminal(ui, 0, (l) => l.some((x) => x.includes('Name?')), 'the question')
    const c = ui.terminals[0].control
    c.input(KEY.down)
    c.input(KEY.enter)
    await screenOfTerminal(ui, 0, (l) => l.some((x) => x.includes('Your answer:')), 'the inline editor')
    for (const ch of 'Zoë') c.input(ch)
    await screenOfTerminal(ui, 0, (l) => l.some((x) => x.includes('Zoë')), 'the typed text')
    c.input(KEY.enter)
    expect((await rec.next('tool-end')).result.text).toMatch(/User wrote: Zoë/)
    await rec.next('settled')

    runtime.prompt({ messageId: 'q', text: 'call question {"question":"Again?","options":[{"label":"Yes"}]}' })
    await screenOfTerminal(ui, 1, (l) => l.some((x) => x.includes('Again?')), 'the second question')
    ui.terminals[1].control.input(KEY.escape)
    expect((await rec.next('tool-end', 2)).result.text).toMatch(/User cancelled/)
  })

  it('snake.ts: it renders the board, reacts to an arrow key, and Escape quits', async () => {
    const { ui, runtime, rec } = await thread(['snake.ts'])
    runtime.prompt({ messageId: 'p', text: '/snake' })
    const board = await screenOfTerminal(ui, 0, (l) => l.some((x) => x.includes('SNAKE')), 'the board')
    expect(board.length).toBeGreaterThan(10)
    expect(board.every((l) => visibleWidth(l) <= 80)).toBe(true)
    const before = ui.terminals[0].screens.length
    ui.terminals[0].control.input(KEY.up)
    await waitFor(() => ui.terminals[0].screens.length > before, 'a frame after the key')
    ui.terminals[0].control.input(KEY.escape)
    await waitFor(() => ui.terminals[0].settled !== undefined, 'the game to end')
    expect(ui.terminals[0].settled?.outcome).toBe('answered')
    await rec.next('settled')
  })
})

describe('widget, header and footer factories, hosted', () => {
  it('custom-header.ts draws its header as the widget pi.header above the composer, colours kept; /footer (custom-footer.ts) draws pi.footer below it and removes it again', async () => {
    const { ui, runtime, rec, log } = await thread(['custom-header.ts', 'custom-footer.ts'])
    const widgets = (key: string) => ui.shown.filter((c) => c[0] === 'setWidget' && c[1] === key)
    await waitFor(() => widgets('pi.header').length > 0, 'the header')
    const [, , header, placement] = widgets('pi.header')[0] as [string, string, string[], string]
    expect(placement).toBe('aboveEditor')
    expect(header.join('\n')).toMatch(/\x1b\[/)
    expect(header.map((l) => stripVTControlCharacters(l)).join('\n')).toMatch(/shitty coding agent/)
    runtime.prompt({ messageId: 'p', text: '/footer' })
    await rec.next('settled')
    await waitFor(() => widgets('pi.footer').length > 0, 'the footer')
    const footer = widgets('pi.footer')[0] as [string, string, string[], string]
    expect(footer[3]).toBe('belowEditor')
    expect(stripVTControlCharacters(footer[2][0])).toMatch(/↑0 ↓0 \$0\.000 .*demo/)
    runtime.prompt({ messageId: 'q', text: '/footer' })
    await rec.next('settled', 2)
    expect(widgets('pi.footer').at(-1)).toEqual(['setWidget', 'pi.footer', undefined, 'belowEditor'])
    expect(ui.notes.map((n) => n.message).join('\n')).not.toMatch(/needs a terminal/)
    expect(log.errors).toEqual([])
  })
})

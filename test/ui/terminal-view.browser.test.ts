/**
 * The terminal view in the browser: an xterm.js terminal that shows a component's screen (read back
 * through xterm's buffer, `text`) and sends what is typed into it as the terminal bytes pi-tui
 * parses; and the widgets' renderer, ANSI-styled lines to styled runs. The view is driven with the
 * real example components end to end in test/e2e/terminal-components.e2e.test.ts.
 */
import axe from 'axe-core'
import { afterEach, describe, expect, test } from 'vitest'
import { userEvent } from 'vitest/browser'
import '../../src/ui/terminal-view.js'
import type { TerminalView } from '../../src/ui/terminal-view.js'
import { TAB_ID } from '../../src/ui/terminal-view.js'
import { ansiRuns } from '../../src/ui/ansi.js'

afterEach(() => {
  document.body.innerHTML = ''
})

async function opened(screen: TerminalView['screen']): Promise<{ el: TerminalView; sent: string[] }> {
  const el = document.createElement('terminal-view') as TerminalView
  const sent: string[] = []
  el.send = async (data) => void sent.push(data)
  el.screen = screen
  document.body.append(el)
  el.focus()
  await expect.poll(() => el.shadowRoot!.querySelector('.xterm-helper-textarea')?.matches(':focus')).toBe(true)
  return { el, sent }
}

describe('the terminal view', () => {
  test('draws SGR colours (16, 256, true colour), bold and inverse as styled runs and drops other escapes', () => {
    expect(ansiRuns('\x1b[31mred\x1b[39m plain \x1b[1;38;5;46mgreen\x1b[0m')).toEqual([
      { text: 'red', style: 'color:#cd0000' },
      { text: ' plain ', style: '' },
      { text: 'green', style: 'color:rgb(0,255,0);font-weight:bold' },
    ])
    expect(ansiRuns('\x1b[38;2;1;2;3m\x1b[7mx\x1b]8;;https://e.x\x07link\x1b]8;;\x07')).toEqual([
      { text: 'xlink', style: 'color:var(--term-bg, #1e1e1e);background:rgb(1,2,3)' },
    ])
  })

  test('sends keys as terminal bytes in order: arrows, Enter, Escape, Tab, Shift+Tab, Backspace, letters; and is read-only while another tab types', async () => {
    const { el, sent } = await opened({ cols: 80, rows: 24, lines: ['\x1b[32mhello\x1b[39m'] })
    await userEvent.keyboard('{ArrowUp}{ArrowDown}{ArrowRight}{ArrowLeft}{Enter}{Escape}{Tab}{Shift>}{Tab}{/Shift}{Backspace}a')
    await expect.poll(() => sent.length).toBe(10)
    expect(sent).toEqual(['\x1b[A', '\x1b[B', '\x1b[C', '\x1b[D', '\r', '\x1b', '\t', '\x1b[Z', '\x7f', 'a'])
    await userEvent.keyboard('{Control>}c{/Control}{Control>}{ArrowLeft}{/Control}')
    await expect.poll(() => sent.slice(10)).toEqual(['\x03', '\x1b[1;5D'])

    el.typist = { tab: `${TAB_ID}-other`, until: Date.now() + 60_000 }
    await el.updateComplete
    expect(el.shadowRoot!.textContent).toContain('Another tab is typing: you are watching.')
    await userEvent.keyboard('b')
    await expect.poll(() => el.shadowRoot!.textContent).toContain('Another tab is typing into this: wait until it stops.')
    expect(sent).toHaveLength(12)
  })

  test('text an input method composes reaches the component as composed (日本, then a dead key é)', async () => {
    const { el, sent } = await opened({ cols: 80, rows: 24, lines: ['Your answer:'] })
    const textarea = el.shadowRoot!.querySelector<HTMLTextAreaElement>('.xterm-helper-textarea')!
    // What an input method does in the page: composition events around the text it commits.
    const compose = (text: string) => {
      textarea.dispatchEvent(new CompositionEvent('compositionstart', { data: '' }))
      textarea.value += text
      textarea.dispatchEvent(new CompositionEvent('compositionupdate', { data: text }))
      textarea.dispatchEvent(new CompositionEvent('compositionend', { data: text }))
    }
    compose('日本')
    await expect.poll(() => sent.join('')).toBe('日本')
    compose('é')
    await expect.poll(() => sent.join('')).toBe('日本é')
  })

  test('shows the screen at its size, rewrites only what changed, shows the last rows of a taller one, and has no axe violations', async () => {
    const { el } = await opened({ cols: 40, rows: 24, lines: ['\x1b[1mTitle\x1b[22m', '> 1. Red', '  2. Green'], cursor: { row: 1, col: 2 } })
    await expect.poll(() => el.text).toBe('Title\n> 1. Red\n  2. Green')
    el.screen = { cols: 40, rows: 24, lines: ['\x1b[1mTitle\x1b[22m', '  1. Red', '> 2. Green'] }
    await expect.poll(() => el.text).toBe('Title\n  1. Red\n> 2. Green')
    el.screen = { cols: 40, rows: 3, lines: ['a', 'b', 'c', 'd', 'e'] }
    await expect.poll(() => el.text).toBe('c\nd\ne')

    const found = (await axe.run(el, { resultTypes: ['violations'] })).violations
    expect(found.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)).toEqual([])
  })
})

/**
 * The terminal view's two translations, in the browser: ANSI-styled lines to styled runs, and key
 * presses to the terminal bytes pi-tui parses. The view is driven with the real example components
 * end to end in test/e2e/terminal-components.e2e.test.ts.
 */
import { afterEach, describe, expect, test } from 'vitest'
import { userEvent } from 'vitest/browser'
import '../../src/ui/terminal-view.js'
import type { TerminalView } from '../../src/ui/terminal-view.js'
import { TAB_ID } from '../../src/ui/terminal-view.js'
import { ansiRuns } from '../../src/ui/ansi.js'
import { terminalBytes } from '../../src/ui/terminal-keys.js'

afterEach(() => {
  document.body.innerHTML = ''
})

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
    const el = document.createElement('terminal-view') as TerminalView
    const sent: string[] = []
    el.send = async (data) => void sent.push(data)
    el.screen = { cols: 80, rows: 24, lines: ['\x1b[32mhello\x1b[39m'] }
    document.body.append(el)
    await el.updateComplete
    el.focus()
    await userEvent.keyboard('{ArrowUp}{ArrowDown}{ArrowRight}{ArrowLeft}{Enter}{Escape}{Tab}{Shift>}{Tab}{/Shift}{Backspace}a')
    await expect.poll(() => sent.length).toBe(10)
    expect(sent).toEqual(['\x1b[A', '\x1b[B', '\x1b[C', '\x1b[D', '\r', '\x1b', '\t', '\x1b[Z', '\x7f', 'a'])
    expect(terminalBytes({ key: 'c', ctrlKey: true, altKey: false, shiftKey: false, metaKey: false })).toBe('\x03')
    expect(terminalBytes({ key: 'ArrowLeft', ctrlKey: true, altKey: false, shiftKey: false, metaKey: false })).toBe('\x1b[1;5D')

    el.typist = { tab: `${TAB_ID}-other`, until: Date.now() + 60_000 }
    await el.updateComplete
    expect(el.shadowRoot!.textContent).toContain('Another tab is typing: you are watching.')
    await userEvent.keyboard('b')
    expect(sent).toHaveLength(10)
  })
})

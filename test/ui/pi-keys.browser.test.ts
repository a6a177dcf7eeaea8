/**
 * pi's keys in the web client: Up recalls the previous prompt, Ctrl+L opens the model picker,
 * Shift+Tab cycles the thinking level, Ctrl+O shows or hides tool output; and code blocks that a
 * keyboard can reach and scroll, labelled with their language.
 */
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest'
import { page, userEvent } from 'vitest/browser'
import '../../src/ui/thread-pane.js'
import '../../src/ui/transcript-view.js'
import type { TranscriptView } from '../../src/ui/transcript-view.js'
import type { ComposerBox } from '../../src/ui/composer-box.js'
import { FakeEventSource, fakeApi, feed, model, mountPane, snapshotOf, summary, until } from './helpers.js'

/** A one-pixel PNG, as a paste would attach it. */
const PIXEL = { mimeType: 'image/png' as const, data: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==' }

beforeEach(() => {
  FakeEventSource.instances = []
})
afterEach(() => {
  document.body.innerHTML = ''
})

/** A pane on thread t1, live, with two prompts already sent and a reasoning model offered. */
async function paneWithHistory() {
  const api = fakeApi()
  const models = { models: [model('demo'), model('local/thinker', { reasoning: true })], default: 'demo' }
  const { el, es } = mountPane(api, 't1', { models, summary: summary('t1', { model: 'local/thinker', thinkingLevel: 'low' }) })
  await until(() => FakeEventSource.instances.length === 1)
  es().open()
  const user = (messageId: string, text: string, run: number) => ({ kind: 'user' as const, messageId, text, run })
  es().snapshot(snapshotOf('t1', { transcript: [user('u1', 'first prompt', 1), user('u2', 'second prompt', 2)] }))
  await expect.element(page.getByRole('log').getByText('second prompt')).toBeVisible()
  const box = page.getByRole('textbox', { name: 'Message' })
  await box.click()
  return { el, api, es, box }
}

describe("pi's keys", () => {
  test('Up in an empty composer recalls the previous prompts, newest first; Down walks back to an empty box; Up on typed text moves the caret only', async () => {
    const { box } = await paneWithHistory()
    await userEvent.keyboard('{ArrowUp}')
    await expect.element(box).toHaveValue('second prompt')
    await userEvent.keyboard('{ArrowUp}')
    await expect.element(box).toHaveValue('first prompt')
    await userEvent.keyboard('{ArrowUp}')
    await expect.element(box).toHaveValue('first prompt')
    await userEvent.keyboard('{ArrowDown}')
    await expect.element(box).toHaveValue('second prompt')
    await userEvent.keyboard('{ArrowDown}')
    await expect.element(box).toHaveValue('')
    await userEvent.keyboard('mine{ArrowUp}')
    await expect.element(box).toHaveValue('mine')
  })

  test('Shift+Tab in the composer sets the next thinking level on a reasoning model, and Ctrl+L opens the model picker', async () => {
    const { api } = await paneWithHistory()
    await userEvent.keyboard('{Shift>}{Tab}{/Shift}')
    await until(() => api.updateThread.mock.calls.length === 1)
    expect(api.updateThread).toHaveBeenCalledWith('t1', { thinkingLevel: 'medium' })
    await userEvent.keyboard('{Control>}l{/Control}')
    const select = page.getByRole('combobox', { name: 'Model' }).element()
    // Focus inside shadow roots: the select is its root's active element.
    await until(() => (select.getRootNode() as ShadowRoot).activeElement === select)
  })

  test('Shift+Tab on a model that does not reason moves the focus back as usual, and changes nothing', async () => {
    const api = fakeApi()
    const { es } = mountPane(api, 't1', { models: { models: [model('demo')], default: 'demo' }, summary: summary('t1') })
    await until(() => FakeEventSource.instances.length === 1)
    es().open()
    es().snapshot(snapshotOf('t1'))
    const box = page.getByRole('textbox', { name: 'Message' })
    await box.click()
    await userEvent.keyboard('{Shift>}{Tab}{/Shift}')
    await expect.element(box).not.toHaveFocus()
    expect(api.updateThread).not.toHaveBeenCalled()
  })

  test('Alt+Up during a run takes the queued messages back into the composer after the draft, with the images sent with them, and does not stop the run', async () => {
    let next = 0
    const api = fakeApi({
      prompt: vi.fn(async (id: string) => ({ threadId: id, messageId: `q${++next}`, run: 1, queued: true })),
      takeQueue: vi.fn(async (id: string) => ({ threadId: id, restored: ['first queued', 'second queued'] })),
    })
    const { el, es } = mountPane(api, 't1')
    await until(() => FakeEventSource.instances.length === 1)
    es().open()
    es().snapshot(snapshotOf('t1', { seq: 1, status: { live: true, busy: true, run: 1 } }))
    const box = page.getByRole('textbox', { name: 'Message' })
    await until(() => el.shadowRoot!.querySelector('composer-box') !== null)
    const composer = el.shadowRoot!.querySelector('composer-box') as ComposerBox
    await composer.updateComplete
    composer.attach([PIXEL])
    await expect.element(page.getByRole('list', { name: 'Images to send' })).toBeVisible()
    await box.fill('first queued')
    await userEvent.keyboard('{Enter}')
    await box.fill('second queued')
    await userEvent.keyboard('{Alt>}{Enter}{/Alt}')
    expect(api.prompt.mock.calls.map((c) => c.slice(0, 4))).toEqual([
      ['t1', 'first queued', 'steer', 1],
      ['t1', 'second queued', 'followUp', 1],
    ])
    expect(api.prompt.mock.calls[0][4]).toEqual([PIXEL])
    expect(composer.images).toEqual([])
    es().frame({ seq: 2, type: 'queue', steering: ['first queued'], followUp: ['second queued'] })
    const log = page.getByRole('log')
    await expect.element(log.getByText('Queued · steer')).toBeVisible()

    await box.fill('typed meanwhile')
    await userEvent.keyboard('{Alt>}{ArrowUp}{/Alt}')
    // the run this tab shows is named, so a tab that fell behind never empties a newer run's queue
    expect(api.takeQueue).toHaveBeenCalledWith('t1', 1)
    await expect.element(box).toHaveValue('typed meanwhile\n\nfirst queued\n\nsecond queued')
    await expect.element(page.getByRole('list', { name: 'Images to send' }).getByRole('img')).toHaveLength(1)
    expect(composer.images).toEqual([PIXEL])
    // the never-claimed bubbles leave; the run goes on: nothing stopped it, and Stop is still offered
    es().frame({ seq: 3, type: 'queue', steering: [], followUp: [] })
    await expect.element(log.getByText('Queued · steer')).not.toBeInTheDocument()
    await expect.element(log.getByText('Queued · follow-up')).not.toBeInTheDocument()
    expect(api.abort).not.toHaveBeenCalled()
    await expect.element(page.getByRole('button', { name: 'Stop' })).toBeVisible()
    // the run's own settle later does not hand the same texts back a second time
    es().frame({ seq: 4, type: 'settled', run: 1, aborted: false })
    es().frame({ seq: 5, type: 'status', live: true, busy: false, run: 1 })
    await expect.element(page.getByRole('button', { name: 'Stop' })).not.toBeInTheDocument()
    expect(composer.draft).toBe('typed meanwhile\n\nfirst queued\n\nsecond queued')
  })

  test('Alt+Up with nothing running recalls nothing and asks the server nothing', async () => {
    const { api, box } = await paneWithHistory()
    await userEvent.keyboard('{Alt>}{ArrowUp}{/Alt}')
    expect(api.takeQueue).not.toHaveBeenCalled()
    await expect.element(box).toHaveValue('')
  })

  test('Ctrl+O shows every tool row\'s output and hides it again; rows start collapsed to their summary line', async () => {
    const { es } = await paneWithHistory()
    const n = feed(1)
    es().frame(n({ type: 'tool-start', toolCallId: 'c1', name: 'bash', args: { command: 'ls' } }))
    es().frame(n({ type: 'tool-end', toolCallId: 'c1', result: { text: 'README.md' }, isError: false }))
    const output = page.getByRole('log').getByText('README.md')
    await expect.element(page.getByRole('log').getByText('$ ls')).toBeVisible()
    await expect.element(output).not.toBeVisible()
    await userEvent.keyboard('{Control>}o{/Control}')
    await expect.element(output).toBeVisible()
    await expect.element(page.getByRole('button', { name: 'Show tool output' })).toHaveAttribute('aria-pressed', 'true')
    await userEvent.keyboard('{Control>}o{/Control}')
    await expect.element(output).not.toBeVisible()
  })
})

describe('code blocks', () => {
  test('a code block says its language, and a wide one is a named tab stop the keyboard can scroll', async () => {
    const el = document.createElement('transcript-view') as TranscriptView
    el.style.width = '320px'
    el.style.display = 'block'
    const wide = `const line = '${'x'.repeat(200)}'`
    el.entries = [{ kind: 'assistant', messageId: 'a1', text: `Here:\n\n\`\`\`ts\n${wide}\n\`\`\`\n`, streaming: false }]
    document.body.append(el)
    await el.updateComplete
    // Once the highlighter has loaded the block is drawn again, coloured: the one to focus is that one.
    await until(() => el.shadowRoot!.querySelector('pre code.hljs') !== null, 5000)
    const block = el.shadowRoot!.querySelector('.code-block')!
    expect(block.querySelector('.code-lang')?.textContent).toBe('ts')
    const pre = block.querySelector('pre') as HTMLElement
    expect(pre.scrollWidth).toBeGreaterThan(pre.clientWidth)
    await expect.element(page.getByRole('region', { name: 'Code, ts' })).toBeInTheDocument()
    pre.focus()
    expect(el.shadowRoot!.activeElement).toBe(pre)
    await userEvent.keyboard('{ArrowRight}{ArrowRight}{ArrowRight}')
    await until(() => pre.scrollLeft > 0)
  })
})

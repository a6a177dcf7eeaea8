/**
 * pi's fire-and-forget ctx.ui calls as the browser shows them: editor text into an empty draft only,
 * status chips and widgets above the composer, the working message in the busy indicator, toasts,
 * and a title an extension set. Titles are cited by docs/flows/extension-ui.md.
 */
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { page, userEvent } from 'vitest/browser'
import '../../src/ui/thread-pane.js'
import type { ThreadPane } from '../../src/ui/thread-pane.js'
import type { ComposerBox } from '../../src/ui/composer-box.js'
import { FakeEventSource, fakeApi, fakeEventSource, feed, snapshotOf, summary, until } from './helpers.js'

/** One tab: a thread pane on its own scripted EventSource. */
async function tab(threadId = 't1') {
  const el = document.createElement('thread-pane') as ThreadPane
  el.api = fakeApi()
  el.eventSource = fakeEventSource
  el.threadId = threadId
  el.summary = summary(threadId)
  el.style.height = '400px'
  el.style.display = 'block'
  const count = FakeEventSource.instances.length
  document.body.append(el)
  await until(() => FakeEventSource.instances.length === count + 1)
  const es = FakeEventSource.instances.at(-1)!
  es.open()
  es.snapshot(snapshotOf(threadId))
  await el.updateComplete
  return { el, es }
}

const composer = (el: ThreadPane) => el.shadowRoot!.querySelector('composer-box') as ComposerBox
const textarea = (el: ThreadPane) => composer(el).shadowRoot!.querySelector('textarea') as HTMLTextAreaElement

beforeEach(() => {
  FakeEventSource.instances = []
})
afterEach(() => {
  document.body.innerHTML = ''
})

describe('extension UI in the browser', () => {
  test('editor-text fills the composer of a tab whose draft is empty and never overwrites typed text', async () => {
    const a = await tab()
    const b = await tab()
    await userEvent.type(textarea(b.el), 'my own words')
    expect(composer(b.el).draft).toBe('my own words')

    const n = feed()
    const frame = n({ type: 'editor-text', text: 'now summarize it' })
    a.es.frame(frame)
    b.es.frame(frame)
    await until(() => composer(a.el).draft === 'now summarize it')
    await expect.element(textarea(a.el)).toHaveValue('now summarize it')
    await b.el.updateComplete
    expect(composer(b.el).draft).toBe('my own words')

    // The filled draft is the user's now: the next editor text does not replace it either.
    const again = n({ type: 'editor-text', text: 'something else' })
    a.es.frame(again)
    await a.el.updateComplete
    await composer(a.el).updateComplete
    expect(composer(a.el).draft).toBe('now summarize it')
  })

  test('status items show as chips and widgets as line blocks above the composer; clearing removes them', async () => {
    const { el, es } = await tab()
    const n = feed()
    es.frame(n({ type: 'status-item', key: 'git', text: 'main' }))
    es.frame(n({ type: 'widget', key: 'todo', lines: ['- index', '- summarize'] }))
    const chips = page.getByRole('list', { name: 'Extension status' })
    await expect.element(chips.getByText('main')).toBeVisible()
    const widget = el.shadowRoot!.querySelector('[data-widget="todo"]') as HTMLElement
    expect(widget.textContent).toBe('- index\n- summarize')
    // Both sit above the composer.
    const box = composer(el)
    expect(widget.compareDocumentPosition(box) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy()
    es.frame(n({ type: 'status-item', key: 'git' }))
    es.frame(n({ type: 'widget', key: 'todo' }))
    await expect.element(chips).not.toBeInTheDocument()
    await el.updateComplete
    expect(el.shadowRoot!.querySelector('[data-widget]')).toBeNull()
  })

  test("a widget placed belowEditor is drawn below the composer, the others above it", async () => {
    const { el, es } = await tab()
    const n = feed()
    es.frame(n({ type: 'widget', key: 'widget-above', lines: ['Above editor widget'] }))
    es.frame(n({ type: 'widget', key: 'widget-below', lines: ['Below editor widget'], placement: 'belowEditor' }))
    await expect.element(page.getByText('Below editor widget')).toBeVisible()
    const box = composer(el)
    const above = el.shadowRoot!.querySelector('[data-widget="widget-above"]') as HTMLElement
    const below = el.shadowRoot!.querySelector('[data-widget="widget-below"]') as HTMLElement
    expect(above.compareDocumentPosition(box) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy()
    expect(below.compareDocumentPosition(box) & Node.DOCUMENT_POSITION_PRECEDING).toBeTruthy()
  })

  test('the working message replaces "Working" in the busy indicator, and setWorkingVisible(false) hides it', async () => {
    const { el, es } = await tab()
    const n = feed()
    es.frame(n({ type: 'status', live: true, busy: true, run: 1 }))
    es.frame(n({ type: 'user-message', messageId: 'u1', text: 'go', run: 1 }))
    const log = page.getByRole('log')
    await expect.element(log.getByText('Working')).toBeVisible()
    es.frame(n({ type: 'working', message: 'Indexing…', visible: true }))
    await expect.element(log.getByText('Indexing…')).toBeVisible()
    es.frame(n({ type: 'working', message: 'Indexing…', visible: false }))
    await expect.element(log.getByText('Indexing…')).not.toBeInTheDocument()
    await el.updateComplete
  })

  test('a notify frame is a toast that can be dismissed, and an extension title updates the header', async () => {
    const { el, es } = await tab()
    const changed: string[] = []
    el.addEventListener('thread-changed', () => changed.push('changed'))
    const n = feed()
    es.frame(n({ type: 'notify', message: 'indexing done', level: 'info' }))
    const toasts = page.getByRole('region', { name: 'Notifications' })
    await expect.element(toasts.getByText('indexing done')).toBeVisible()
    await toasts.getByRole('button', { name: 'Dismiss' }).click()
    await expect.element(toasts).not.toBeInTheDocument()
    es.frame(n({ type: 'title', title: 'Indexed repo' }))
    await expect.element(page.getByRole('heading', { name: 'Indexed repo' })).toBeVisible()
    // A live title changes nothing about the thread: the list has nothing to reload.
    expect(changed).toEqual([])
  })

  test("a notice naming a thread (an extension's ctx.newSession() made it) links to that thread", async () => {
    const { es } = await tab()
    es.frame(feed()({ type: 'notify', message: 'An extension started a new thread: #/threads/k9x', level: 'info' }))
    const toasts = page.getByRole('region', { name: 'Notifications' })
    await expect.element(toasts.getByRole('link', { name: 'open it' })).toHaveAttribute('href', '#/threads/k9x')
  })
})

/** The thread pane in Chromium, against a scripted EventSource and an API of spies. */
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest'
import { page, userEvent } from 'vitest/browser'
import '../../src/ui/thread-pane.js'
import type { ThreadPane } from '../../src/ui/thread-pane.js'
import type { ComposerBox } from '../../src/ui/composer-box.js'
import { FakeEventSource, confirmDialog, fakeApi, fakeEventSource, feed, snapshotOf, summary, until } from './helpers.js'

function mount(api = fakeApi(), threadId = 't1') {
  const el = document.createElement('thread-pane') as ThreadPane
  el.api = api
  el.eventSource = fakeEventSource
  el.threadId = threadId
  el.style.height = '600px'
  document.body.append(el)
  return { el, api, es: () => FakeEventSource.last() }
}

const composer = (el: ThreadPane) => el.shadowRoot!.querySelector('composer-box') as ComposerBox

beforeEach(() => {
  FakeEventSource.instances = []
})
afterEach(() => {
  document.body.innerHTML = ''
})

describe('thread pane', () => {
  test('follows: snapshot, then streamed frames into a role=log transcript; the badge says Connected', async () => {
    const { es } = mount()
    await until(() => FakeEventSource.instances.length === 1)
    expect(es().url).toBe('/api/threads/t1/follow')
    await expect.element(page.getByRole('status', { name: 'Connection: Connecting' })).toBeVisible()
    es().open()
    es().snapshot(snapshotOf('t1'))
    await expect.element(page.getByRole('status', { name: 'Connection: Connected' })).toBeVisible()
    const n = feed()
    es().frame(n({ type: 'status', live: true, busy: true, run: 1 }))
    es().frame(n({ type: 'user-message', messageId: 'u1', text: 'hello there', run: 1 }))
    es().frame(n({ type: 'assistant-start', messageId: 'a1' }))
    es().frame(n({ type: 'assistant-delta', messageId: 'a1', text: 'You said' }))
    const log = page.getByRole('log')
    await expect.element(log.getByText('hello there')).toBeVisible()
    await expect.element(log.getByText('You said')).toBeVisible()
    es().frame(n({ type: 'assistant-delta', messageId: 'a1', text: ': **hello** there' }))
    await expect.element(log.getByText('hello', { exact: true })).toBeVisible()
    es().frame(n({ type: 'tool-start', toolCallId: 'c1', name: 'bash', args: { command: 'ls' } }))
    await expect.element(log.getByText('running')).toBeVisible()
    es().frame(n({ type: 'tool-end', toolCallId: 'c1', result: { text: 'README.md' }, isError: false }))
    await expect.element(log.getByText('done')).toBeVisible()
    // Its output shows once tool output is opened (rows are collapsed by default, as in pi).
    await page.getByRole('button', { name: 'Show tool output' }).click()
    await expect.element(log.getByText('README.md')).toBeVisible()
    es().frame(n({ type: 'notify', message: 'Heads up', level: 'warning' }))
    es().frame(n({ type: 'settled', run: 1, aborted: true }))
    // An extension's notify is a toast, not a transcript entry.
    await expect.element(page.getByRole('region', { name: 'Notifications' }).getByText('Heads up')).toBeVisible()
    expect(log.getByText('Heads up').elements()).toHaveLength(0)
    await expect.element(log.getByRole('note')).toHaveTextContent('Stopped')
  })

  test('Markdown is rendered and sanitised: code blocks stay, scripts and handlers do not', async () => {
    const { es, el } = mount()
    await until(() => FakeEventSource.instances.length === 1)
    es().open()
    const n = feed()
    es().snapshot(snapshotOf('t1'))
    const text = 'Here:\n\n```ts\nconst x = 1\n```\n\n<img src="x" onerror="window.__pwned=1"><script>window.__pwned=2</script>[a](javascript:alert(1))'
    es().frame(n({ type: 'assistant-end', messageId: 'a1', text, stopReason: 'stop' }))
    await expect.element(page.getByRole('log').getByText('const x = 1')).toBeVisible()
    const root = el.shadowRoot!.querySelector('transcript-view')!.shadowRoot!
    expect(root.querySelector('pre code')).not.toBeNull()
    expect(root.querySelector('script')).toBeNull()
    expect(root.querySelector('[onerror]')).toBeNull()
    expect(root.querySelector('a[href^="javascript"]')).toBeNull()
    await new Promise((r) => setTimeout(r, 50))
    expect((window as { __pwned?: number }).__pwned).toBeUndefined()
  })

  test('a follow opened under an open question shows its card; a settle from another tab removes it with a note', async () => {
    const { es } = mount()
    await until(() => FakeEventSource.instances.length === 1)
    es().open()
    es().snapshot(snapshotOf('t1', { seq: 10, openDialogs: [confirmDialog('d1', 'Deploy?')] }))
    const card = page.getByRole('dialog', { name: 'Deploy?' })
    await expect.element(card).toBeVisible()
    es().frame({ seq: 11, type: 'dialog-settled', id: 'd1', outcome: 'answered' })
    await expect.element(card).not.toBeInTheDocument()
    await expect.element(page.getByRole('status').filter({ hasText: 'Deploy?' })).toHaveTextContent('answered in another tab')
  })

  test('a reconnect snapshot keeps the same card element, so a half-typed answer survives', async () => {
    const { es, el } = mount()
    await until(() => FakeEventSource.instances.length === 1)
    es().open()
    const input = { id: 'i1', dialog: { method: 'input' as const, title: 'Name?' }, origin: { kind: 'tool' as const } }
    es().snapshot(snapshotOf('t1', { seq: 3, openDialogs: [input] }))
    const box = page.getByRole('dialog', { name: 'Name?' }).getByRole('textbox')
    await box.fill('half typed')
    const before = el.shadowRoot!.querySelector('dialog-card')
    es().fail()
    await until(() => FakeEventSource.instances.length === 2, 3000)
    es().open()
    es().snapshot(snapshotOf('t1', { seq: 9, openDialogs: [structuredClone(input)] }))
    await expect.element(page.getByRole('status', { name: 'Connection: Connected' })).toBeVisible()
    expect(el.shadowRoot!.querySelector('dialog-card')).toBe(before)
    await expect.element(box).toHaveValue('half typed')
  })

  test('answering here: one POST, and the note does not say another tab', async () => {
    const { es, api } = mount()
    await until(() => FakeEventSource.instances.length === 1)
    es().open()
    es().snapshot(snapshotOf('t1', { seq: 3, openDialogs: [confirmDialog('d1', 'Deploy?')] }))
    await page.getByRole('dialog', { name: 'Deploy?' }).getByRole('button', { name: 'Yes' }).click()
    expect(api.answerDialog).toHaveBeenCalledExactlyOnceWith('t1', { id: 'd1', confirmed: true })
    es().frame({ seq: 4, type: 'dialog-settled', id: 'd1', outcome: 'answered' })
    const note = page.getByRole('status').filter({ hasText: 'Deploy?' })
    await expect.element(note).toHaveTextContent('answered')
    await expect.element(note).not.toHaveTextContent('another tab')
  })

  test('reconnect: the badge says Reconnecting, the next stream resumes after the last seq, replays are not doubled', async () => {
    const { es } = mount()
    await until(() => FakeEventSource.instances.length === 1)
    es().open()
    es().snapshot(snapshotOf('t1', { seq: 4 }))
    es().frame({ seq: 5, type: 'user-message', messageId: 'u1', text: 'only once', run: 1 })
    const first = es()
    first.fail()
    expect(first.closed).toBe(true)
    await expect.element(page.getByRole('status', { name: 'Connection: Reconnecting' })).toBeVisible()
    await until(() => FakeEventSource.instances.length === 2, 3000)
    expect(es().url).toBe('/api/threads/t1/follow?after=5')
    es().open()
    es().frame({ seq: 5, type: 'user-message', messageId: 'u1', text: 'only once', run: 1 })
    es().frame({ seq: 6, type: 'assistant-end', messageId: 'a1', text: 'after', stopReason: 'stop' })
    await expect.element(page.getByRole('status', { name: 'Connection: Connected' })).toBeVisible()
    await expect.element(page.getByRole('log').getByText('after')).toBeVisible()
    expect(page.getByRole('log').getByText('only once').elements()).toHaveLength(1)
  })

  test('a stream that stops bringing the heartbeats it named is closed and resumed after the last seq, with no error from the connection', async () => {
    const { es } = mount()
    await until(() => FakeEventSource.instances.length === 1)
    const first = es()
    first.open()
    first.dispatchEvent(new MessageEvent('heartbeat', { data: '40' }))
    first.snapshot(snapshotOf('t1', { seq: 7 }))
    await until(() => FakeEventSource.instances.length === 2, 3000)
    expect(first.closed).toBe(true)
    expect(es().url).toBe('/api/threads/t1/follow?after=7')
  })

  test('composer: Enter sends one POST and clears; Shift+Enter adds a line', async () => {
    const { es, api } = mount()
    await until(() => FakeEventSource.instances.length === 1)
    es().open()
    es().snapshot(snapshotOf('t1'))
    const box = page.getByRole('textbox', { name: 'Message' })
    await box.click()
    await userEvent.keyboard('line one{Shift>}{Enter}{/Shift}line two')
    await expect.element(box).toHaveValue('line one\nline two')
    await userEvent.keyboard('{Enter}')
    expect(api.prompt).toHaveBeenCalledExactlyOnceWith('t1', 'line one\nline two', undefined)
    await expect.element(box).toHaveValue('')
    // The optimistic bubble shows until its user-message arrives.
    await expect.element(page.getByRole('log').getByText('Sending…')).toBeVisible()
    es().frame({ seq: 1, type: 'user-message', messageId: 'm1', text: 'line one\nline two', run: 1 })
    await expect.element(page.getByRole('log').getByText('Sending…')).not.toBeInTheDocument()
    expect(page.getByRole('log').getByText('line one').elements()).toHaveLength(1)
  })

  test('the draft is reported once typing pauses, not per keystroke, so extensions can read the editor', async () => {
    const { es, api } = mount()
    await until(() => FakeEventSource.instances.length === 1)
    es().open()
    es().snapshot(snapshotOf('t1'))
    await page.getByRole('textbox', { name: 'Message' }).click()
    await userEvent.keyboard('half a thought')
    await until(() => api.reportDraft.mock.calls.some(([, text]) => text === 'half a thought'))
    expect(api.reportDraft.mock.calls.filter(([, text]) => text !== '')).toEqual([['t1', 'half a thought']])
  })

  test('a threadhost command (/name, /new) leaves no "Sending…" bubble; /new opens the thread it made', async () => {
    const api = fakeApi({
      prompt: vi.fn(async (id: string, message: string) =>
        message.startsWith('/new')
          ? { threadId: id, command: 'new', thread: summary('t2', { title: 'Fresh' }) }
          : { threadId: id, command: 'name', thread: summary(id, { title: 'Renamed' }) },
      ),
    })
    const { es } = mount(api)
    await until(() => FakeEventSource.instances.length === 1)
    es().open()
    es().snapshot(snapshotOf('t1'))
    const box = page.getByRole('textbox', { name: 'Message' })
    await box.click()
    await userEvent.keyboard('/name Renamed{Enter}')
    await expect.element(box).toHaveValue('')
    expect(page.getByRole('log').getByText('Sending…').elements()).toHaveLength(0)
    await userEvent.keyboard('/new Fresh{Enter}')
    await until(() => location.hash === '#/threads/t2')
    expect(page.getByRole('log').getByText('/new Fresh').elements()).toHaveLength(0)
    location.hash = ''
  })

  test('during a run prompts queue (steer, or follow-up), are listed, and Stop hands them back after the draft', async () => {
    let next = 0
    const api = fakeApi({
      prompt: vi.fn(async (id: string) => ({ threadId: id, messageId: `q${++next}`, run: 1, queued: true })),
      abort: vi.fn(async (id: string) => ({ threadId: id, restored: ['first queued', 'second queued'] })),
    })
    const { es } = mount(api)
    await until(() => FakeEventSource.instances.length === 1)
    es().open()
    es().snapshot(snapshotOf('t1', { seq: 1, status: { live: true, busy: true, run: 1 } }))
    const box = page.getByRole('textbox', { name: 'Message' })
    await box.fill('first queued')
    await page.getByRole('button', { name: 'Send' }).click()
    await page.getByRole('radio', { name: 'Follow-up' }).click()
    await box.fill('second queued')
    await userEvent.keyboard('{Enter}')
    await box.fill('claimed')
    await userEvent.keyboard('{Enter}')
    // Each names the run this tab shows, so it is never queued into another.
    expect(api.prompt.mock.calls).toEqual([
      ['t1', 'first queued', 'steer', 1],
      ['t1', 'second queued', 'followUp', 1],
      ['t1', 'claimed', 'followUp', 1],
    ])
    es().frame({ seq: 2, type: 'queue', steering: ['first queued'], followUp: ['second queued', 'claimed'] })
    es().frame({ seq: 3, type: 'queue', steering: ['first queued'], followUp: ['second queued'] })
    es().frame({ seq: 4, type: 'user-message', messageId: 'q3', text: 'claimed', run: 1 })
    const queue = page.getByRole('list', { name: 'Queued prompts' })
    await expect.element(queue).toHaveTextContent(/Steer\s*first queued\s*Follow-up\s*second queued/)
    const log = page.getByRole('log')
    await expect.element(log.getByText('Queued · steer')).toBeVisible()
    await expect.element(log.getByText('Queued · follow-up')).toBeVisible()

    await box.fill('typed meanwhile')
    await page.getByRole('button', { name: 'Stop' }).click()
    await expect.element(box).toHaveValue('typed meanwhile\n\nfirst queued\n\nsecond queued')
    // The never-claimed bubbles leave; the claimed one stays.
    await expect.element(log.getByText('Queued · steer')).not.toBeInTheDocument()
    await expect.element(log.getByText('Queued · follow-up')).not.toBeInTheDocument()
    await expect.element(log.getByText('claimed')).toBeVisible()
    expect(composer(document.querySelector('thread-pane')!).draft).toBe('typed meanwhile\n\nfirst queued\n\nsecond queued')
  })

  test('rename and delete (with confirmation)', async () => {
    const api = fakeApi()
    const { el, es } = mount(api)
    await until(() => FakeEventSource.instances.length === 1)
    es().open()
    es().snapshot(snapshotOf('t1'))
    const events: string[] = []
    el.addEventListener('thread-changed', () => events.push('changed'))
    el.addEventListener('thread-deleted', () => events.push('deleted'))
    await page.getByRole('button', { name: 'Rename' }).click()
    await page.getByRole('textbox', { name: 'Thread title' }).fill('Release plan')
    await userEvent.keyboard('{Enter}')
    expect(api.renameThread).toHaveBeenCalledWith('t1', 'Release plan')
    await expect.element(page.getByRole('heading', { name: 'Release plan' })).toBeVisible()
    await page.getByRole('button', { name: 'Delete', exact: true }).click()
    expect(api.deleteThread).not.toHaveBeenCalled()
    await page.getByRole('alertdialog').getByRole('button', { name: 'Delete thread' }).click()
    expect(api.deleteThread).toHaveBeenCalledWith('t1')
    expect(events).toEqual(['changed', 'deleted'])
  })
})

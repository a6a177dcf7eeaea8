/**
 * The thread pane as a person uses it: where the focus goes, the keyboard, stops and steers across
 * tabs, what the notes on a settled question say, the labels, and the narrow layout.
 */
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest'
import { page, userEvent } from 'vitest/browser'
import '../../src/ui/app-shell.js'
import '../../src/ui/thread-pane.js'
import '../../src/ui/dialog-card.js'
import '../../src/ui/transcript-view.js'
import type { AppShell } from '../../src/ui/app-shell.js'
import type { ThreadPane } from '../../src/ui/thread-pane.js'
import type { DialogCard } from '../../src/ui/dialog-card.js'
import type { TranscriptView } from '../../src/ui/transcript-view.js'
import { PromptBody, type DialogAnswerBody, type OpenDialog, type ThreadSummary } from '../../src/schemas/index.js'
import type { ComposerBox } from '../../src/ui/composer-box.js'
import { Value } from 'typebox/value'
import { ApiError } from '../../src/ui/api.js'
import { followConfig } from '../../src/ui/follow-client.js'
import { FakeEventSource, confirmDialog, fakeApi, fakeEventSource, mountPane, snapshotOf, summary, until } from './helpers.js'

followConfig.eventSource = fakeEventSource

/** The element that has focus, looked for through every open shadow root. */
function deepActive(): Element | null {
  let el: Element | null = document.activeElement
  while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement
  return el
}
const focusIsMessageBox = () => deepActive()?.getAttribute('aria-label') === 'Message'
/** The custom element (dialog-card, composer-box …) that holds the focus, innermost first. */
function focusedHosts(): string[] {
  const hosts: string[] = []
  let el: Element | null = document.activeElement
  while (el) {
    hosts.push(el.localName)
    el = el.shadowRoot?.activeElement ?? null
  }
  return hosts
}

async function livePane(api = fakeApi(), busy = false, openDialogs: OpenDialog[] = []) {
  const m = mountPane(api)
  await until(() => FakeEventSource.instances.length === 1)
  m.es().open()
  m.es().snapshot(snapshotOf('t1', { seq: 1, status: { live: true, busy, run: busy ? 1 : 0 }, openDialogs }))
  await expect.element(page.getByRole('textbox', { name: 'Message' })).toBeVisible()
  return m
}

function deferred<T>() {
  let resolve!: (v: T) => void
  let reject!: (e: unknown) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

const box = () => page.getByRole('textbox', { name: 'Message' })
const attachments = () => page.getByRole('list', { name: 'Images to send' }).getByRole('img')
/** A 1×1 PNG. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='
const note = (title: string) => page.getByRole('status').filter({ hasText: title })

beforeEach(async () => {
  await page.viewport(1280, 800)
  FakeEventSource.instances = []
})
afterEach(() => {
  document.body.innerHTML = ''
  location.hash = ''
})

describe('focus follows the work: composer, card, composer', () => {
  test('after New thread the empty state’s composer has focus: typed text lands there, and spaces make no thread', async () => {
    let threads: ThreadSummary[] = []
    const api = fakeApi({
      listThreads: vi.fn(async () => threads),
      createThread: vi.fn(async () => {
        threads = [summary('fresh', { title: 'Fresh' })]
        return { threadId: 'fresh' }
      }),
    })
    const shell = document.createElement('app-shell') as AppShell
    shell.api = api
    document.body.append(shell)
    await page.getByRole('button', { name: 'New thread' }).click()
    await until(() => location.hash === '#/new')
    await until(focusIsMessageBox)
    await userEvent.keyboard('hello there world')
    await expect.element(box()).toHaveValue('hello there world')
    expect(api.createThread).not.toHaveBeenCalled()
  })

  test('opening another thread from the list moves the focus to its composer', async () => {
    const api = fakeApi({ listThreads: vi.fn(async () => [summary('alpha', { title: 'Alpha' }), summary('beta', { title: 'Beta' })]) })
    location.hash = '#/threads/alpha'
    const shell = document.createElement('app-shell') as AppShell
    shell.api = api
    document.body.append(shell)
    const link = page.getByRole('navigation', { name: 'Threads' }).getByRole('link', { name: /Beta/ })
    await link.click()
    await until(() => location.hash === '#/threads/beta')
    await expect.element(page.getByRole('heading', { name: 'Beta' })).toBeVisible()
    await until(focusIsMessageBox)
  })

  test('a question arriving takes the focus to its card; once it settles the focus is back in the composer', async () => {
    const { es } = await livePane(fakeApi(), true)
    await until(focusIsMessageBox)
    es().frame({ seq: 2, type: 'extension-ui-request', blocking: true, ...confirmDialog('d1', 'Deploy?') })
    await expect.element(page.getByRole('dialog', { name: 'Deploy?' })).toBeVisible()
    await until(() => focusedHosts().includes('dialog-card'))
    await userEvent.keyboard('{Enter}') // the focused Yes
    es().frame({ seq: 3, type: 'dialog-settled', id: 'd1', outcome: 'answered' })
    await expect.element(page.getByRole('dialog', { name: 'Deploy?' })).not.toBeInTheDocument()
    await until(focusIsMessageBox)
  })

  test('a question arriving while someone types a message leaves the focus and every keystroke in the composer', async () => {
    const { es } = await livePane(fakeApi(), true)
    await until(focusIsMessageBox)
    await userEvent.keyboard('half a sent')
    es().frame({ seq: 2, type: 'extension-ui-request', blocking: true, ...confirmDialog('d1', 'Deploy?') })
    await expect.element(page.getByRole('dialog', { name: 'Deploy?' })).toBeVisible()
    await userEvent.keyboard('ence')
    await expect.element(box()).toHaveValue('half a sentence')
    expect(focusIsMessageBox()).toBe(true)
  })
})

describe('a stop never loses another tab’s queued text', () => {
  test('tab B: its queued prompts, withdrawn by a stop in another tab, come back into its draft and it is told', async () => {
    const api = fakeApi({ prompt: vi.fn(async (id: string) => ({ threadId: id, messageId: 'q1', run: 1, queued: true })) })
    const { es } = await livePane(api, true)
    await box().fill('mine, queued')
    await userEvent.keyboard('{Enter}')
    es().frame({ seq: 2, type: 'queue', steering: ['mine, queued'], followUp: [] })
    await expect.element(page.getByRole('list', { name: 'Queued prompts' })).toBeVisible()
    await expect.element(box()).toHaveValue('')
    // Tab A pressed Stop: the queue empties and the run settles aborted.
    es().frame({ seq: 3, type: 'queue', steering: [], followUp: [] })
    es().frame({ seq: 4, type: 'settled', run: 1, aborted: true })
    es().frame({ seq: 5, type: 'status', live: true, busy: false, run: 1 })
    await expect.element(box()).toHaveValue('mine, queued')
    await expect.element(page.getByRole('status').filter({ hasText: 'withdrawn' })).toBeVisible()
    expect(page.getByRole('log').getByText('Queued · steer').elements()).toHaveLength(0)
  })

  test('tab B: a queued prompt\'s images, withdrawn by a stop in another tab, come back beside its text', async () => {
    const api = fakeApi({ prompt: vi.fn(async (id: string) => ({ threadId: id, messageId: 'q1', run: 1, queued: true })) })
    const { el, es } = await livePane(api, true)
    const image: PromptBody['images'] = [{ mimeType: 'image/png', data: PNG }]
    expect(Value.Check(PromptBody, { message: 'look at this', images: image })).toBe(true)
    el.shadowRoot!.querySelector<ComposerBox>('composer-box')!.attach(image!)
    await box().fill('look at this')
    await userEvent.keyboard('{Enter}')
    expect(api.prompt).toHaveBeenCalledWith('t1', 'look at this', 'steer', 1, image)
    await expect.poll(() => attachments().elements().length).toBe(0)
    // Tab A pressed Stop: the queue empties and the run settles aborted.
    es().frame({ seq: 2, type: 'settled', run: 1, aborted: true })
    es().frame({ seq: 3, type: 'status', live: true, busy: false, run: 1 })
    await expect.element(box()).toHaveValue('look at this')
    await expect.poll(() => attachments().elements().length).toBe(1)
  })

  test('tab A: Stop restores every text, and says which ones were queued in another tab', async () => {
    const api = fakeApi({
      prompt: vi.fn(async (id: string) => ({ threadId: id, messageId: 'q1', run: 1, queued: true })),
      abort: vi.fn(async (id: string) => ({ threadId: id, restored: ['mine', 'from the other tab'] })),
    })
    const { es } = await livePane(api, true)
    await box().fill('mine')
    await userEvent.keyboard('{Enter}')
    es().frame({ seq: 2, type: 'queue', steering: ['mine', 'from the other tab'], followUp: [] })
    await page.getByRole('button', { name: 'Stop' }).click()
    await expect.element(box()).toHaveValue('mine\n\nfrom the other tab')
    const said = page.getByRole('status').filter({ hasText: 'another tab' })
    await expect.element(said).toBeVisible()
    await expect.element(said).toHaveTextContent('from the other tab')
    await expect.element(said).not.toHaveTextContent(/“mine”/)
  })

  test('a queued prompt refused at shutdown shows its text and goes back into the draft', async () => {
    const api = fakeApi({ prompt: vi.fn(async (id: string) => ({ threadId: id, messageId: 'q1', run: 1, queued: true })) })
    const { es } = await livePane(api, true)
    await box().fill('do not lose me')
    await userEvent.keyboard('{Enter}')
    es().frame({ seq: 2, type: 'queue', steering: ['do not lose me'], followUp: [] })
    es().frame({ seq: 3, type: 'prompt-rejected', messageId: 'q1', reason: 'shutdown' })
    const refused = page.getByRole('log').getByText(/Not delivered/)
    await expect.element(refused).toHaveTextContent('shutdown')
    await expect.element(refused).toHaveTextContent('do not lose me')
    await expect.element(box()).toHaveValue('do not lose me')
  })
})

describe('the notes tell the truth about how a question ended', () => {
  test('a race: this tab’s answer is refused (404) because another tab’s won; the note says so', async () => {
    const reply = deferred<undefined>()
    const api = fakeApi({ answerDialog: vi.fn(() => reply.promise) })
    const { es } = await livePane(api, true, [confirmDialog('d1', 'Deploy?')])
    await page.getByRole('dialog', { name: 'Deploy?' }).getByRole('button', { name: 'Yes' }).click()
    es().frame({ seq: 2, type: 'dialog-settled', id: 'd1', outcome: 'answered' })
    reply.reject(new ApiError(404, { error: 'unknown dialog', code: 'QUESTION_NOT_OPEN' }))
    await expect.element(note('Deploy?')).toHaveTextContent('answered in another tab')
    await expect.element(note('Deploy?')).toHaveTextContent('not taken')
  })

  test('a race the other way: the 404 comes before the settle; the note still says another tab answered', async () => {
    const api = fakeApi({ answerDialog: vi.fn(async () => Promise.reject(new ApiError(404, { error: 'unknown dialog', code: 'QUESTION_NOT_OPEN' }))) })
    const { es } = await livePane(api, true, [confirmDialog('d1', 'Deploy?')])
    await page.getByRole('dialog', { name: 'Deploy?' }).getByRole('button', { name: 'Yes' }).click()
    await until(() => api.answerDialog.mock.calls.length === 1)
    await new Promise((r) => setTimeout(r, 20))
    es().frame({ seq: 2, type: 'dialog-settled', id: 'd1', outcome: 'answered' })
    await expect.element(note('Deploy?')).toHaveTextContent('answered in another tab')
    await expect.element(note('Deploy?')).toHaveTextContent('not taken')
  })

  test('Skip is announced as skipped', async () => {
    const ask: OpenDialog = {
      id: 'k1',
      dialog: {
        method: 'questionnaire',
        title: 'Which colour?',
        questions: [{ id: 'q1', prompt: 'Which colour?', mode: 'single', options: [{ value: 'red', label: 'Red' }], allowOther: false, skippable: true }],
      },
      origin: { kind: 'tool', name: 'ask_user_question' },
    }
    const { es } = await livePane(fakeApi(), true, [ask])
    await page.getByRole('dialog', { name: 'Which colour?' }).getByRole('button', { name: 'Skip' }).click()
    es().frame({ seq: 2, type: 'dialog-settled', id: 'k1', outcome: 'answered' })
    await expect.element(note('Which colour?')).toHaveTextContent('skipped')
    await expect.element(note('Which colour?')).not.toHaveTextContent('answered')
  })

  test('a tool-permission card’s note names the choice made here: Allow once, Allow for this thread, Deny', async () => {
    const permission = (id: string): OpenDialog => ({
      id,
      dialog: { method: 'select', title: `Allow bash to run? (${id})`, options: ['Allow once', 'Allow for this thread', 'Deny'] },
      origin: { kind: 'extension' },
    })
    const { es } = await livePane(fakeApi(), true, [permission('p1'), permission('p2'), permission('p3')])
    let seq = 1
    for (const [id, choice] of [['p1', 'Allow once'], ['p2', 'Allow for this thread'], ['p3', 'Deny']] as const) {
      await page.getByRole('dialog', { name: `(${id})` }).getByRole('button', { name: choice, exact: true }).click()
      es().frame({ seq: ++seq, type: 'dialog-settled', id, outcome: 'answered' })
      await expect.element(note(`(${id})`)).toHaveTextContent(choice)
    }
    await expect.element(note('(p3)')).not.toHaveTextContent(/Allow (once|for this thread)/)
  })

  test('a confirm’s note says Yes or No when this tab answered', async () => {
    const { es } = await livePane(fakeApi(), true, [confirmDialog('d1', 'Deploy?'), confirmDialog('d2', 'Restart?')])
    await page.getByRole('dialog', { name: 'Deploy?' }).getByRole('button', { name: 'Yes', exact: true }).click()
    await page.getByRole('dialog', { name: 'Restart?' }).getByRole('button', { name: 'No', exact: true }).click()
    es().frame({ seq: 2, type: 'dialog-settled', id: 'd1', outcome: 'answered' })
    es().frame({ seq: 3, type: 'dialog-settled', id: 'd2', outcome: 'answered' })
    await expect.element(note('Deploy?')).toHaveTextContent('Yes')
    await expect.element(note('Restart?')).toHaveTextContent('No')
  })
})

describe('no stale labels', () => {
  test('during an outage a running tool is not shown as running; after the reconnect it is again', async () => {
    const { es } = await livePane(fakeApi(), true)
    es().frame({ seq: 2, type: 'tool-start', toolCallId: 'c1', name: 'bash', args: { command: 'sleep 9' } })
    const state = page.getByRole('log').getByText('running', { exact: true })
    await expect.element(state).toBeVisible()
    es().fail()
    await expect.element(page.getByRole('status', { name: 'Connection: Reconnecting' })).toBeVisible()
    await expect.element(state).not.toBeInTheDocument()
    await until(() => FakeEventSource.instances.length === 2, 3000)
    es().open()
    es().frame({ seq: 3, type: 'tool-update', toolCallId: 'c1', partial: { text: 'still going' } })
    await expect.element(page.getByRole('log').getByText('running', { exact: true })).toBeVisible()
  })

  test('a thread that does not exist yet is not "Reconnecting": it says it starts with the first message', async () => {
    const api = fakeApi({ getThread: vi.fn(async () => Promise.reject(new ApiError(404, { error: 'no such thread', code: 'THREAD_NOT_FOUND' }))) })
    const { es } = mountPane(api, 'not-yet')
    await until(() => FakeEventSource.instances.length === 1)
    es().fail()
    await expect.element(page.getByRole('status', { name: /^Connection: / })).toHaveAccessibleName('Connection: Not started')
    await new Promise((r) => setTimeout(r, 700)) // past the first backoff
    expect(page.getByRole('status', { name: 'Connection: Reconnecting' }).elements()).toHaveLength(0)
  })

  test('distinct words: the header says Connected, the list says active or idle (never "Live" for both)', async () => {
    location.hash = '#/threads/alpha'
    const shell = document.createElement('app-shell') as AppShell
    shell.api = fakeApi({ listThreads: vi.fn(async () => [summary('alpha', { title: 'Alpha' }), summary('beta', { title: 'Beta', live: false })]) })
    document.body.append(shell)
    await until(() => FakeEventSource.instances.length > 0)
    FakeEventSource.last().open()
    FakeEventSource.last().snapshot(snapshotOf('alpha', { seq: 1 }))
    await expect.element(page.getByRole('status', { name: 'Connection: Connected' })).toHaveTextContent('Connected')
    const nav = page.getByRole('navigation', { name: 'Threads' })
    await expect.element(nav.getByRole('link', { name: /Alpha/ })).toHaveTextContent('active')
    await expect.element(nav.getByRole('link', { name: /Beta/ })).toHaveTextContent('idle')
    expect(nav.element().textContent).not.toMatch(/\blive\b/i)
  })

  test('the streaming caret sits at the end of the last line, not on a line of its own', async () => {
    const el = document.createElement('transcript-view') as TranscriptView
    el.entries = [{ kind: 'assistant', messageId: 'a1', text: 'Hello there', streaming: true }]
    document.body.append(el)
    await el.updateComplete
    const root = el.shadowRoot!
    const caret = root.querySelector('.cursor') as HTMLElement
    const p = root.querySelector('[data-message="a1"] p') as HTMLElement
    expect(caret).not.toBeNull()
    const range = document.createRange()
    range.selectNodeContents(p.firstChild!)
    const text = range.getBoundingClientRect()
    const c = caret.getBoundingClientRect()
    expect(Math.abs(c.bottom - text.bottom)).toBeLessThan(6)
    expect(c.left).toBeGreaterThanOrEqual(text.right - 1)
  })

  test('a send that could not reach the server says so in words, and the error goes once the follow is back', async () => {
    const api = fakeApi({ prompt: vi.fn(async () => Promise.reject(new TypeError('Failed to fetch'))) })
    const { es } = await livePane(api)
    await box().fill('hello')
    await userEvent.keyboard('{Enter}')
    const alert = page.getByRole('alert')
    await expect.element(alert).toHaveTextContent('Cannot reach the server')
    await expect.element(alert).not.toHaveTextContent('Failed to fetch')
    await expect.element(box()).toHaveValue('hello')
    es().fail()
    await until(() => FakeEventSource.instances.length === 2, 3000)
    es().open()
    es().snapshot(snapshotOf('t1', { seq: 2 }))
    await expect.element(page.getByRole('status', { name: 'Connection: Connected' })).toBeVisible()
    await expect.element(page.getByRole('alert')).not.toBeInTheDocument()
  })
})

describe('layout', () => {
  test('a one-line queued message is a one-line bubble', async () => {
    const api = fakeApi({ prompt: vi.fn(async (id: string) => ({ threadId: id, messageId: 'q1', run: 1, queued: true })) })
    const { el } = await livePane(api, true)
    await box().fill('short')
    await userEvent.keyboard('{Enter}')
    await expect.element(page.getByRole('log').getByText('Queued · steer')).toBeVisible()
    const bubble = el.shadowRoot!.querySelector('transcript-view')!.shadowRoot!.querySelector('[data-pending]') as HTMLElement
    expect(bubble.getBoundingClientRect().height).toBeLessThan(70)
  })

  test('at 390 px the busy placeholder fits its box', async () => {
    await page.viewport(390, 780)
    const { el } = await livePane(fakeApi(), true)
    const ta = el.shadowRoot!.querySelector('composer-box')!.shadowRoot!.querySelector('textarea')!
    await until(() => ta.placeholder !== '')
    const cs = getComputedStyle(ta)
    const ctx = document.createElement('canvas').getContext('2d')!
    ctx.font = `${cs.fontStyle} ${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`
    const room = ta.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight)
    expect(ctx.measureText(ta.placeholder).width).toBeLessThanOrEqual(room)
  })

  test('at 390 px a card with a countdown does not overflow', async () => {
    await page.viewport(390, 780)
    const dialog: OpenDialog = {
      ...confirmDialog('d1', 'Deploy the release to every region now?'),
      // The origin's name and the countdown share the header with the title.
      origin: { kind: 'extension', name: 'release-guard-for-production' },
      expiresAt: Date.now() + 65_000,
    }
    const { el } = await livePane(fakeApi(), true, [dialog])
    el.style.width = '390px'
    const card = el.shadowRoot!.querySelector('dialog-card') as DialogCard
    await expect.element(page.getByRole('timer')).toBeVisible()
    const section = card.shadowRoot!.querySelector('section')!
    expect(section.scrollWidth).toBeLessThanOrEqual(section.clientWidth)
    expect(section.getBoundingClientRect().right).toBeLessThanOrEqual(390)
    // Inside its column, not over the column's padding.
    const column = el.shadowRoot!.querySelector('.column') as HTMLElement
    const inner = column.getBoundingClientRect().right - parseFloat(getComputedStyle(column).paddingRight)
    expect(card.getBoundingClientRect().right).toBeLessThanOrEqual(inner + 0.5)
  })

  test('a questionnaire refusal names the question by its prompt, not its id, and shows above Submit', async () => {
    const el = document.createElement('dialog-card') as DialogCard
    el.dialog = {
      id: 'q',
      dialog: {
        method: 'questionnaire',
        title: 'Setup',
        questions: [
          { id: 'lang', prompt: 'Language?', mode: 'single', options: [{ value: 'ts', label: 'TypeScript' }], allowOther: false },
          { id: 'name', prompt: 'Project name?', mode: 'text', options: [], allowOther: false },
        ],
      },
      origin: { kind: 'tool' },
    }
    el.submit = vi.fn(async (_: DialogAnswerBody) => {
      throw new ApiError(422, { error: 'refused', code: 'ANSWER_REFUSED', refusal: "question 'lang': choose one of the offered options" })
    })
    document.body.append(el)
    const card = page.getByRole('dialog', { name: 'Setup' })
    await card.getByRole('button', { name: 'Submit' }).click()
    const alert = card.getByRole('alert')
    await expect.element(alert).toHaveTextContent('Language?')
    await expect.element(alert).not.toHaveTextContent("'lang'")
    const submit = card.getByRole('button', { name: 'Submit' }).element()
    expect(alert.element().compareDocumentPosition(submit) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy()
  })
})

describe('keyboard, as in pi’s terminal UI', () => {
  test('Escape in the composer stops the run and puts the queue back into the draft', async () => {
    const api = fakeApi({ abort: vi.fn(async (id: string) => ({ threadId: id, restored: ['queued one'] })) })
    await livePane(api, true)
    await box().click()
    await userEvent.keyboard('{Escape}')
    expect(api.abort).toHaveBeenCalledOnce()
    await expect.element(box()).toHaveValue('queued one')
  })

  test('Escape with the focus in the transcript stops the run too', async () => {
    const api = fakeApi()
    const { el } = await livePane(api, true)
    const scroller = el.shadowRoot!.querySelector('.scroll') as HTMLElement
    scroller.focus()
    expect(el.shadowRoot!.activeElement).toBe(scroller)
    await userEvent.keyboard('{Escape}')
    expect(api.abort).toHaveBeenCalledOnce()
  })

  test('Escape does not stop an idle thread', async () => {
    const api = fakeApi()
    await livePane(api, false)
    await box().click()
    await userEvent.keyboard('{Escape}')
    expect(api.abort).not.toHaveBeenCalled()
  })

  test('Alt+Enter queues a follow-up whatever the Queue-as choice', async () => {
    const api = fakeApi({ prompt: vi.fn(async (id: string) => ({ threadId: id, messageId: 'q1', run: 1, queued: true })) })
    await livePane(api, true)
    await box().fill('after this')
    await userEvent.keyboard('{Alt>}{Enter}{/Alt}')
    expect(api.prompt).toHaveBeenCalledExactlyOnceWith('t1', 'after this', 'followUp', 1)
    await expect.element(box()).toHaveValue('')
  })

  test('Escape on an ask_user_question card asks before it cancels the whole batch', async () => {
    const submit = vi.fn(async (_: DialogAnswerBody) => {})
    const el = document.createElement('dialog-card') as DialogCard
    el.dialog = {
      id: 'k1',
      dialog: {
        method: 'questionnaire',
        title: 'Name?',
        questions: [{ id: 'q1', prompt: 'Name?', mode: 'text', options: [], allowOther: false, skippable: true }],
      },
      origin: { kind: 'tool', name: 'ask_user_question' },
    }
    el.submit = submit
    document.body.append(el)
    const card = page.getByRole('dialog', { name: 'Name?' })
    await card.getByRole('textbox').click()
    await userEvent.keyboard('{Escape}')
    expect(submit).not.toHaveBeenCalled()
    const ask = card.getByRole('alertdialog')
    await expect.element(ask).toHaveTextContent(/every question/i)
    await userEvent.keyboard('{Escape}') // a second Escape backs out
    await expect.element(ask).not.toBeInTheDocument()
    expect(submit).not.toHaveBeenCalled()
    await card.getByRole('textbox').click()
    await userEvent.keyboard('{Escape}')
    await card.getByRole('alertdialog').getByRole('button', { name: 'Cancel all questions' }).click()
    expect(submit).toHaveBeenCalledExactlyOnceWith({ id: 'k1', cancelled: true })
  })
})

describe('a stale tab cannot stop a newer run', () => {
  test('Stop names the run this tab shows; when a newer run has started the server refuses, and the tab says so instead of pretending', async () => {
    const api = fakeApi({
      abort: vi.fn(async () => {
        throw new ApiError(409, { error: 'run 1 is not the current run', code: 'RUN_STALE', reason: 'stale-run' })
      }),
    })
    await livePane(api, true)
    await page.getByRole('button', { name: 'Stop' }).click()
    expect(api.abort).toHaveBeenCalledWith('t1', 1)
    await expect.element(note('Not stopped')).toBeVisible()
    await expect.element(note('Not stopped')).toHaveTextContent(/newer run/)
  })
})

describe('a prompt lost to a restart', () => {
  test('a rejection this tab did not send shows the text, and one click puts it into the draft', async () => {
    const { es } = await livePane(fakeApi())
    es().frame({ seq: 2, type: 'prompt-rejected', messageId: 'elsewhere', reason: 'restart', text: 'the question I typed before the crash' })
    const rejected = page.getByText('Not delivered (restart)')
    await expect.element(rejected).toBeVisible()
    await page.getByRole('button', { name: 'Put in my draft' }).click()
    await expect.element(box()).toHaveValue('the question I typed before the crash')
  })
})

describe('a stale tab cannot steer into a newer run', () => {
  test('a steer names the run this tab shows; when a newer run is current the server refuses it and the text comes back into the draft, said', async () => {
    const api = fakeApi({
      prompt: vi.fn(async () => {
        throw new ApiError(409, { error: 'run 1 is not the current run of thread t1; the prompt was not queued', code: 'RUN_STALE', reason: 'stale-run' })
      }),
    })
    await livePane(api, true)
    await box().fill('meant for run 1')
    await userEvent.keyboard('{Enter}')
    expect(api.prompt).toHaveBeenCalledExactlyOnceWith('t1', 'meant for run 1', 'steer', 1)
    await expect.element(box()).toHaveValue('meant for run 1')
    await expect.element(page.getByText(/A newer run has started since this tab last looked/)).toBeVisible()
  })

  test("an extension's shortcut pressed in the composer runs on the thread; it is never offered as a / command, and other keys type as before", async () => {
    const api = fakeApi({
      listCommands: vi.fn(async () => [
        { name: 'plan', description: 'Toggle plan mode', kind: 'extension' as const },
        { name: 'ctrl+alt+p', description: 'Toggle plan mode', kind: 'shortcut' as const },
      ]),
    })
    await livePane(api)
    await box().click()
    // The first press with a modifier asks for the thread's shortcuts, and runs its own once they are known.
    await userEvent.keyboard('{Control>}{Alt>}p{/Alt}{/Control}')
    await until(() => api.runShortcut.mock.calls.length === 1)
    expect(api.runShortcut).toHaveBeenCalledWith('t1', 'ctrl+alt+p')
    await userEvent.keyboard('{Control>}{Alt>}p{/Alt}{/Control}')
    await until(() => api.runShortcut.mock.calls.length === 2)
    await userEvent.keyboard('{Control>}{Alt>}k{/Alt}{/Control}')
    await userEvent.keyboard('/p')
    await expect.element(page.getByRole('option', { name: /plan/ })).toBeVisible()
    await expect.element(page.getByRole('option', { name: /ctrl\+alt\+p/ })).not.toBeInTheDocument()
    expect(api.runShortcut).toHaveBeenCalledTimes(2)
  })
})

/**
 * Extensions' shortcuts (pi's registerShortcut) in Chromium: listed where a person looks for them
 * (the Keys button by the thread's settings, or `?`), each runnable from the list, and run by its
 * key pressed anywhere in the pane — once.
 */
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest'
import { page, userEvent } from 'vitest/browser'
import '../../src/ui/thread-pane.js'
import { FakeEventSource, fakeApi, mountPane, snapshotOf, summary, until } from './helpers.js'

beforeEach(() => {
  FakeEventSource.instances = []
})
afterEach(() => {
  document.body.innerHTML = ''
})

const commands = [
  { name: 'name', description: 'Rename this thread', kind: 'threadhost' as const },
  { name: 'ctrl+shift+u', description: 'Summarise the last reply', kind: 'shortcut' as const },
  { name: 'ctrl+w', description: 'Close the widget', kind: 'shortcut' as const },
]

/** The list's own element: closed, it is out of the accessibility tree, so a role query cannot find it. */
const listOpen = (el: HTMLElement) => !!el.shadowRoot!.querySelector('keyboard-help')!.shadowRoot!.querySelector('dialog')!.open

async function pane() {
  const api = fakeApi({ listCommands: vi.fn(async () => commands), runShortcut: vi.fn(async () => undefined) })
  const { es, el } = mountPane(api, 't1', { summary: summary('t1') })
  await until(() => FakeEventSource.instances.length === 1)
  es().open()
  es().snapshot(snapshotOf('t1', { seq: 3, status: { live: true, busy: false, run: 1 }, transcript: [{ kind: 'user', messageId: 'u1', text: 'hello', run: 1 }] }))
  await expect.element(page.getByRole('log').getByText('hello')).toBeVisible()
  return { api, el }
}

describe('keyboard help', () => {
  test("the Keys button opens the thread's keys: threadhost's own and each extension shortcut with its description; Run runs it on the thread", async () => {
    const { api, el } = await pane()
    await page.getByRole('button', { name: 'Keys' }).click()
    const list = page.getByRole('dialog', { name: 'Keyboard shortcuts' })
    await expect.element(list).toBeVisible()
    await expect.element(list.getByText('Stop the run')).toBeVisible()
    await expect.element(list.getByText('Summarise the last reply')).toBeVisible()
    await expect.element(list.getByText('Ctrl+Shift+U')).toBeVisible()
    // A key the browser keeps for itself is listed, with the way to run it.
    await expect.element(list.getByText('(the browser keeps this key: use Run)')).toBeVisible()
    await list.getByRole('button', { name: 'Run Ctrl+W' }).click()
    await until(() => api.runShortcut.mock.calls.length === 1)
    expect(api.runShortcut).toHaveBeenCalledWith('t1', 'ctrl+w')
    await until(() => !listOpen(el))
  })

  test('? outside a text field opens the list; a shortcut pressed in the transcript runs on the thread, once', async () => {
    const { api, el } = await pane()
    const scroll = el.shadowRoot!.querySelector<HTMLElement>('.scroll')!
    scroll.focus()
    await userEvent.keyboard('?')
    const list = page.getByRole('dialog', { name: 'Keyboard shortcuts' })
    await expect.element(list).toBeVisible()
    await expect.element(list.getByText('Summarise the last reply')).toBeVisible()
    await userEvent.keyboard('{Escape}')
    await until(() => !listOpen(el))

    scroll.focus()
    await userEvent.keyboard('{Control>}{Shift>}u{/Shift}{/Control}')
    await until(() => api.runShortcut.mock.calls.length === 1)
    expect(api.runShortcut).toHaveBeenCalledWith('t1', 'ctrl+shift+u')
    // Typing ? in the composer is just a character.
    const box = page.getByRole('textbox', { name: 'Message' })
    await box.click()
    await userEvent.keyboard('why?')
    await expect.element(box).toHaveValue('why?')
    expect(listOpen(el)).toBe(false)
    // The composer runs a shortcut pressed in it itself: still once.
    await userEvent.keyboard('{Control>}{Shift>}u{/Shift}{/Control}')
    await until(() => api.runShortcut.mock.calls.length >= 2)
    // Both listeners hear the key press in the one dispatch: a second run would be here already.
    expect(api.runShortcut).toHaveBeenCalledTimes(2)
  })
})

/** Dialog cards in Chromium: one POST per answer, 422 keeps the card open with its refusal. */
import { afterEach, describe, expect, test, vi } from 'vitest'
import { page, userEvent } from 'vitest/browser'
import type { DialogAnswerBody, OpenDialog } from '../../src/schemas/index.js'
import { ApiError } from '../../src/ui/api.js'
import '../../src/ui/dialog-card.js'
import type { DialogCard } from '../../src/ui/dialog-card.js'

function mount(dialog: OpenDialog, submit = vi.fn(async (_: DialogAnswerBody) => {}), now?: () => number) {
  const el = document.createElement('dialog-card') as DialogCard
  el.dialog = dialog
  el.submit = submit
  if (now) el.now = now
  document.body.append(el)
  return { el, submit }
}

const origin = { kind: 'tool' as const, name: 'ui_dialog' }

afterEach(() => {
  document.body.innerHTML = ''
})

describe('dialog cards', () => {
  test("says who asks: an extension's own question, or threadhost's tool policy, so two questions about one tool call are told apart", async () => {
    mount({ id: 'e1', dialog: { method: 'select', title: 'Dangerous command: rm -rf x. Allow?', options: ['Yes', 'No'] }, origin: { kind: 'extension' } })
    mount({
      id: 'p1',
      dialog: { method: 'select', title: 'Allow bash to run this command?', options: ['Allow once', 'Deny'] },
      origin: { kind: 'extension', name: "threadhost's tool policy" },
    })
    await expect.element(page.getByRole('dialog', { name: /Dangerous command/ }).getByText('asked by an extension')).toBeVisible()
    await expect.element(page.getByRole('dialog', { name: /Allow bash/ }).getByText("asked by threadhost's tool policy")).toBeVisible()
  })

  test('confirm: a dialog named by its title, Yes answers { confirmed: true } once', async () => {
    const { submit } = mount({ id: 'c1', dialog: { method: 'confirm', title: 'Deploy?', message: 'to prod' }, origin })
    const card = page.getByRole('dialog', { name: 'Deploy?' })
    await expect.element(card).toBeVisible()
    await expect.element(card.getByText('to prod')).toBeVisible()
    await card.getByRole('button', { name: 'Yes', exact: true }).click()
    expect(submit).toHaveBeenCalledExactlyOnceWith({ id: 'c1', confirmed: true })
    // The card stays (disabled) until dialog-settled removes it.
    await expect.element(card.getByRole('button', { name: 'No', exact: true })).toBeDisabled()
  })

  test('confirm: No answers { confirmed: false }; Cancel withdraws with { cancelled: true }', async () => {
    const first = mount({ id: 'c1', dialog: { method: 'confirm', title: 'A?', message: '' }, origin })
    await page.getByRole('dialog', { name: 'A?' }).getByRole('button', { name: 'No', exact: true }).click()
    expect(first.submit).toHaveBeenCalledWith({ id: 'c1', confirmed: false })
    const second = mount({ id: 'c2', dialog: { method: 'confirm', title: 'B?', message: '' }, origin })
    await page.getByRole('dialog', { name: 'B?' }).getByRole('button', { name: 'Cancel' }).click()
    expect(second.submit).toHaveBeenCalledWith({ id: 'c2', cancelled: true })
  })

  test('select: one button per option; a 422 shows the refusal and leaves the card usable', async () => {
    const submit = vi.fn(async () => {
      throw new ApiError(422, { error: 'refused', code: 'ANSWER_REFUSED', refusal: "'zzz' is not one of the offered options" })
    })
    mount({ id: 's1', dialog: { method: 'select', title: 'Pick a region', options: ['eu-west', 'us-east'] }, origin }, submit)
    const card = page.getByRole('dialog', { name: 'Pick a region' })
    await expect.element(card.getByRole('button', { name: 'eu-west' })).toBeVisible()
    await card.getByRole('button', { name: 'us-east' }).click()
    expect(submit).toHaveBeenCalledWith({ id: 's1', value: 'us-east' })
    await expect.element(card.getByRole('alert')).toHaveTextContent("'zzz' is not one of the offered options")
    await expect.element(card.getByRole('button', { name: 'eu-west' })).toBeEnabled()
  })

  test('input: textbox and Submit (Enter works too)', async () => {
    const { submit } = mount({ id: 'i1', dialog: { method: 'input', title: 'Your name', placeholder: 'name' }, origin })
    const card = page.getByRole('dialog', { name: 'Your name' })
    await card.getByRole('textbox').fill('Ada')
    await card.getByRole('button', { name: 'Submit' }).click()
    expect(submit).toHaveBeenCalledWith({ id: 'i1', value: 'Ada' })
  })

  test('editor: a prefilled textbox and Submit', async () => {
    const { submit } = mount({ id: 'e1', dialog: { method: 'editor', title: 'Edit the plan', prefill: 'step 1' }, origin })
    const card = page.getByRole('dialog', { name: 'Edit the plan' })
    const box = card.getByRole('textbox')
    await expect.element(box).toHaveValue('step 1')
    await box.fill('step 1\nstep 2')
    await card.getByRole('button', { name: 'Submit' }).click()
    expect(submit).toHaveBeenCalledWith({ id: 'e1', value: 'step 1\nstep 2' })
  })

  test('questionnaire: radio, checkbox and textbox controls labelled by their prompts; one answer each', async () => {
    const { submit } = mount({
      id: 'q1',
      dialog: {
        method: 'questionnaire',
        title: 'Setup',
        questions: [
          { id: 'lang', prompt: 'Language?', mode: 'single', options: [{ value: 'ts', label: 'TypeScript' }, { value: 'go', label: 'Go' }], allowOther: false },
          { id: 'feat', prompt: 'Features?', mode: 'multi', options: [{ value: 'a', label: 'Auth' }, { value: 'b', label: 'Billing' }], allowOther: true },
          { id: 'name', prompt: 'Project name?', mode: 'text', options: [], allowOther: false },
        ],
      },
      origin,
    })
    const card = page.getByRole('dialog', { name: 'Setup' })
    await card.getByRole('radiogroup', { name: 'Language?' }).getByRole('radio', { name: 'Go' }).click()
    await card.getByRole('group', { name: 'Features?' }).getByRole('checkbox', { name: 'Billing' }).click()
    await card.getByRole('group', { name: 'Features?' }).getByRole('checkbox', { name: 'Other' }).click()
    await card.getByRole('textbox', { name: 'Your answer: Features?' }).fill('Search')
    await card.getByRole('textbox', { name: 'Project name?' }).fill('atlas')
    await card.getByRole('button', { name: 'Submit' }).click()
    expect(submit).toHaveBeenCalledExactlyOnceWith({
      id: 'q1',
      answers: [
        { id: 'lang', value: 'go' },
        { id: 'feat', values: ['b'], other: 'Search' },
        { id: 'name', value: 'atlas' },
      ],
    })
  })

  test('questionnaire: Enter in a text answer submits the card, as in an input card', async () => {
    const { submit } = mount({
      id: 'q2',
      dialog: { method: 'questionnaire', title: 'Name it', questions: [{ id: 'name', prompt: 'Project name?', mode: 'text', options: [], allowOther: false }] },
      origin,
    })
    await page.getByRole('dialog', { name: 'Name it' }).getByRole('textbox', { name: 'Project name?' }).fill('atlas')
    await userEvent.keyboard('{Enter}')
    expect(submit).toHaveBeenCalledExactlyOnceWith({ id: 'q2', answers: [{ id: 'name', value: 'atlas' }] })
  })

  test('ask card (one skippable question): Skip answers [{ id, skipped: true }]; no Skip elsewhere', async () => {
    const { submit } = mount({
      id: 'k1',
      dialog: {
        method: 'questionnaire',
        questions: [{ id: 'q', prompt: 'Pick', mode: 'single', options: [{ value: 'a', label: 'a' }, { value: 'b', label: 'b' }], allowOther: false, skippable: true }],
      },
      origin: { kind: 'tool', name: 'ask_user_question' },
    })
    const card = page.getByRole('dialog', { name: 'Pick' })
    await expect.element(card.getByRole('radio', { name: 'a', exact: true })).toBeVisible()
    await expect.element(card.getByRole('button', { name: 'Cancel' })).toBeVisible()
    await card.getByRole('button', { name: 'Skip' }).click()
    expect(submit).toHaveBeenCalledWith({ id: 'k1', answers: [{ id: 'q', skipped: true }] })
    document.body.innerHTML = ''
    mount({ id: 'c', dialog: { method: 'confirm', title: 'Sure?', message: '' }, origin })
    await expect.element(page.getByRole('dialog', { name: 'Sure?' })).toBeVisible()
    expect(page.getByRole('button', { name: 'Skip' }).query()).toBeNull()
  })

  test('a countdown shows when the question has expiresAt', async () => {
    let now = 1_000_000
    mount({ id: 't', dialog: { method: 'confirm', title: 'Quick?', message: '' }, origin, expiresAt: now + 65_000 }, undefined, () => now)
    const timer = page.getByRole('dialog', { name: 'Quick?' }).getByRole('timer')
    await expect.element(timer).toHaveTextContent('closes in 1:05')
    now += 10_000
    await expect.element(timer).toHaveTextContent('closes in 0:55', { timeout: 3000 } as never)
  })

  test('a 404 says the question is no longer open', async () => {
    mount({ id: 'g', dialog: { method: 'confirm', title: 'Gone?', message: '' }, origin }, vi.fn(async () => {
      throw new ApiError(404, { error: 'unknown dialog', code: 'QUESTION_NOT_OPEN' })
    }))
    const card = page.getByRole('dialog', { name: 'Gone?' })
    await card.getByRole('button', { name: 'Yes' }).click()
    await expect.element(card.getByRole('alert')).toHaveTextContent('no longer open')
  })

  test('Escape cancels', async () => {
    const { submit } = mount({ id: 'x', dialog: { method: 'input', title: 'Name?' }, origin })
    await page.getByRole('dialog', { name: 'Name?' }).getByRole('textbox').click()
    await userEvent.keyboard('{Escape}')
    expect(submit).toHaveBeenCalledWith({ id: 'x', cancelled: true })
  })
})

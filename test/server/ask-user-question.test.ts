import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { api, is, SseClient, startHarness, type Harness } from './harness.js'

let h: Harness
let tab: SseClient
const ask = (question: string) =>
  `call ask_user_question ${JSON.stringify({ question, mode: 'single', options: [{ label: 'yes' }, { label: 'no' }] })}`
const BATCH = [ask('First?'), ask('Second?'), ask('Third?')].join('\n')
const requests = () => tab.frames.filter((f) => f.event === 'extension-ui-request')

beforeEach(async () => {
  h = await startHarness()
  await api(h.url, 'POST', '/api/threads', { id: 'q' })
  tab = await SseClient.open(`${h.url}/api/threads/q/follow`)
})
afterEach(async () => {
  tab.close()
  await h.close()
})

describe('ask_user_question over HTTP', () => {
  it('a batch of three questions is shown one at a time in call order; Skip resolves only the first, Cancel on the second drains the third unseen', async () => {
    await api(h.url, 'POST', '/api/threads/q/prompt', { message: BATCH })
    const first = await tab.waitFor(is('extension-ui-request'))
    expect(first.data.dialog).toMatchObject({ method: 'questionnaire', questions: [{ prompt: 'First?', skippable: true }] })
    const qid = first.data.dialog.questions[0].id
    expect((await api(h.url, 'POST', '/api/threads/q/dialog', { id: first.data.id, answers: [{ id: qid, skipped: true }] })).status).toBe(204)

    const second = await tab.waitFor((f) => f.event === 'extension-ui-request' && f.data.id !== first.data.id)
    expect(second.data.dialog.questions[0].prompt).toBe('Second?')
    // One at a time: the second question was shown only after the first had settled.
    const events = tab.frames.map((f) => `${f.event}:${f.data.id ?? ''}`)
    expect(events.indexOf(`extension-ui-request:${second.data.id}`)).toBeGreaterThan(events.indexOf(`dialog-settled:${first.data.id}`))
    expect((await api(h.url, 'POST', '/api/threads/q/dialog', { id: second.data.id, cancelled: true })).status).toBe(204)

    const end = await tab.waitFor(is('status', { busy: false, run: 1 }))
    expect(requests()).toHaveLength(2)
    const results = tab.frames.filter((f) => f.event === 'tool-end').map((f) => f.data.result.text)
    expect(results).toEqual(['skipped', 'cancelled', 'cancelled'])
    expect(tab.frames.indexOf(end)).toBeGreaterThan(tab.frames.findIndex(is('dialog-settled', { id: second.data.id, outcome: 'cancelled' })))
  })

  it('an answered question hands the chosen value to the model and the next question follows', async () => {
    await api(h.url, 'POST', '/api/threads/q/prompt', { message: [ask('One?'), ask('Two?')].join('\n') })
    const one = await tab.waitFor(is('extension-ui-request'))
    const answer = (f: typeof one, value: string) =>
      api(h.url, 'POST', '/api/threads/q/dialog', { id: f.data.id, answers: [{ id: f.data.dialog.questions[0].id, value }] })
    expect((await answer(one, 'maybe')).status).toBe(422)
    expect((await answer(one, 'yes')).status).toBe(204)
    const two = await tab.waitFor((f) => f.event === 'extension-ui-request' && f.data.id !== one.data.id)
    expect((await answer(two, 'no')).status).toBe(204)
    await tab.waitFor(is('status', { busy: false, run: 1 }))
    expect(tab.frames.filter((f) => f.event === 'tool-end').map((f) => f.data.result.text)).toEqual(['answered: yes', 'answered: no'])
  })

  it('Stop while a batch waits settles the shown question aborted, reports every call cancelled, and ends the run', async () => {
    await api(h.url, 'POST', '/api/threads/q/prompt', { message: BATCH })
    const first = await tab.waitFor(is('extension-ui-request'))
    expect((await api(h.url, 'POST', '/api/threads/q/abort')).status).toBe(200)
    await tab.waitFor(is('status', { busy: false, run: 1 }))
    expect(tab.frames.find(is('dialog-settled', { id: first.data.id }))?.data.outcome).toBe('aborted')
    expect(requests()).toHaveLength(1)
    expect(tab.frames.filter((f) => f.event === 'tool-end').map((f) => f.data.result.text)).toEqual(['cancelled', 'cancelled', 'cancelled'])
    expect(tab.frames.find((f) => f.event === 'settled')?.data.aborted).toBe(true)
  })
})

import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { api, is, SseClient, startHarness, type Harness } from './harness.js'

let h: Harness
let tab: SseClient

beforeEach(async () => {
  h = await startHarness({ demoDelayMs: 0 })
  await api(h.url, 'POST', '/api/threads', { id: 'd' })
  tab = await SseClient.open(`${h.url}/api/threads/d/follow`)
})
afterEach(async () => {
  tab.close()
  await h.close()
})

describe('answers are decided by the question they name', () => {
  it('a wrongly typed field is a 422 with the reason (not a 400), changes nothing, and the right answer still settles it', async () => {
    await api(h.url, 'POST', '/api/threads/d/prompt', { message: 'call ui_dialog {"method":"select","title":"Pick","options":["a","b"]}' })
    const id = (await tab.waitFor(is('extension-ui-request'))).data.id as string
    for (const wrong of [{ value: 5 }, { confirmed: 'yes' }, { answers: 'x' }, {}, { cancelled: 'yes' }]) {
      const res = await api(h.url, 'POST', '/api/threads/d/dialog', { id, ...wrong })
      expect(res.status, JSON.stringify(wrong)).toBe(422)
      expect(res.body.refusal).toEqual(expect.any(String))
    }
    expect(tab.frames.filter(is('dialog-settled'))).toEqual([])
    expect((await api(h.url, 'POST', '/api/threads/d/dialog', { id, value: 'b' })).status).toBe(204)
    expect((await tab.waitFor(is('dialog-settled'))).data).toMatchObject({ id, outcome: 'answered' })
    expect((await api(h.url, 'POST', '/api/threads/d/dialog', { id, value: 'b' })).status).toBe(404)
  })

  it('an answer without a question id is a 400 from the schema', async () => {
    expect((await api(h.url, 'POST', '/api/threads/d/dialog', { value: 'a' })).status).toBe(400)
  })
})

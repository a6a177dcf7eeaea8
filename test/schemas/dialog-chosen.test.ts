import { describe, expect, it } from 'vitest'
import { chosenOf, type DialogSpec } from '../../src/schemas/index.js'

describe('chosenOf: what a settled answer chose, for the other tabs', () => {
  it("says a confirm's Yes or No, a select's option, and a questionnaire's chosen option labels; never a typed answer", () => {
    expect(chosenOf({ method: 'confirm', title: 'Go?', message: 'to prod' }, { confirmed: true })).toBe('Yes')
    const select: DialogSpec = { method: 'select', title: 'Region?', options: ['us-east', 'eu-west'] }
    expect(chosenOf(select, { value: 'us-east' })).toBe('us-east')
    expect(chosenOf({ method: 'input', title: 'Token?' }, { value: 'secret' })).toBeUndefined()
    const questionnaire: DialogSpec = {
      method: 'questionnaire',
      questions: [
        { id: 'db', prompt: 'Which database?', mode: 'single', options: [{ value: 'pg', label: 'Postgres' }], allowOther: true },
        { id: 'why', prompt: 'Why?', mode: 'text', options: [], allowOther: false },
      ],
    }
    expect(chosenOf(questionnaire, { answers: [{ id: 'db', value: 'pg' }, { id: 'why', value: 'private reasons' }] })).toBe('Postgres')
    expect(chosenOf(questionnaire, { answers: [{ id: 'db', other: 'my own db' }] })).toBeUndefined()
    expect(chosenOf(questionnaire, { answers: [{ id: 'db', skipped: true }] })).toBe('skipped')
  })
})

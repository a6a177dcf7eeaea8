/**
 * The dialog answer fence, every branch: `validateDialogAnswer` (what the server answers 422 with
 * before the runtime sees an answer) and `questionnaireRefusal` (each questionnaire rule).
 */
import { describe, expect, it } from 'vitest'
import {
  questionnaireRefusal,
  validateDialogAnswer,
  type DialogSpec,
  type QuestionAnswer,
  type QuestionnaireQuestion,
} from '../../src/schemas/index.js'

const confirm: DialogSpec = { method: 'confirm', title: 'Sure?', message: 'Really deploy?' }
const select: DialogSpec = { method: 'select', title: 'Where?', options: ['staging', 'prod'] }
const input: DialogSpec = { method: 'input', title: 'Name?' }
const editor: DialogSpec = { method: 'editor', title: 'Edit', prefill: 'x' }

const opts = [
  { value: 'a', label: 'A' },
  { value: 'b', label: 'B' },
]
const text: QuestionnaireQuestion = { id: 't', prompt: 'Why?', mode: 'text', options: [], allowOther: false }
const single: QuestionnaireQuestion = { id: 's', prompt: 'Which?', mode: 'single', options: opts, allowOther: true }
const singleNoOther: QuestionnaireQuestion = { ...single, id: 's0', allowOther: false }
const multi: QuestionnaireQuestion = { id: 'm', prompt: 'Which ones?', mode: 'multi', options: opts, allowOther: true }
const multiNoOther: QuestionnaireQuestion = { ...multi, id: 'm0', allowOther: false }
const questionnaire: DialogSpec = { method: 'questionnaire', questions: [text, single] }

const one = (q: QuestionnaireQuestion, a: Omit<QuestionAnswer, 'id'>) => questionnaireRefusal([q], [{ id: q.id, ...a }])

describe('validateDialogAnswer: the payload shape', () => {
  it.each([
    ['a string', 'yes'],
    ['null', null],
    ['an object with an unknown key', { value: 'staging', extra: 1 }],
    ['a value that is not a string', { value: 3 }],
    ['confirmed that is not a boolean', { confirmed: 'yes' }],
    ['two ways of answering at once', { value: 'staging', confirmed: true }],
    ['a questionnaire answer with an unknown key', { answers: [{ id: 't', value: 'x', bogus: 1 }] }],
  ])('refuses %s as not a dialog answer at all', (_, payload) => {
    expect(validateDialogAnswer(select, payload)).toMatch(/is not a dialog answer/)
  })
})

describe('validateDialogAnswer: each method takes its own answer', () => {
  it('confirm takes { confirmed } (true or false) and refuses { value }', () => {
    expect(validateDialogAnswer(confirm, { confirmed: true })).toBeUndefined()
    expect(validateDialogAnswer(confirm, { confirmed: false })).toBeUndefined()
    expect(validateDialogAnswer(confirm, { value: 'yes' })).toBe(`a 'confirm' dialog takes { confirmed: boolean }`)
  })
  it('select takes one of the offered options', () => {
    expect(validateDialogAnswer(select, { value: 'prod' })).toBeUndefined()
  })
  it('select refuses a value outside the offered options, so no unoffered string reaches the extension', () => {
    expect(validateDialogAnswer(select, { value: 'prod; rm -rf /' })).toBe(`'prod; rm -rf /' is not one of the offered options`)
    expect(validateDialogAnswer(select, { value: '' })).toBe(`'' is not one of the offered options`)
  })
  it('select refuses { confirmed }', () => {
    expect(validateDialogAnswer(select, { confirmed: true })).toBe(`a 'select' dialog takes { value: string }`)
  })
  it('input and editor take any { value }, including an empty one, and refuse anything else', () => {
    expect(validateDialogAnswer(input, { value: '' })).toBeUndefined()
    expect(validateDialogAnswer(editor, { value: 'text' })).toBeUndefined()
    expect(validateDialogAnswer(input, { confirmed: true })).toBe(`an 'input' dialog takes { value: string }`)
    expect(validateDialogAnswer(editor, { answers: [] })).toBe(`an 'editor' dialog takes { value: string }`)
  })
  it('questionnaire takes { answers } and refuses { value }', () => {
    expect(validateDialogAnswer(questionnaire, { answers: [{ id: 't', value: 'because' }, { id: 's', value: 'a' }] })).toBeUndefined()
    expect(validateDialogAnswer(questionnaire, { value: 'a' })).toBe(`a 'questionnaire' dialog takes { answers: [...] }`)
  })
  it('questionnaire answers are held to the questionnaire rules', () => {
    expect(validateDialogAnswer(questionnaire, { answers: [{ id: 't', value: 'because' }] })).toBe(`question 's' has no answer`)
  })
})

describe('questionnaireRefusal: the questionnaire as a whole', () => {
  it('refuses an answer to a question the questionnaire does not ask', () => {
    expect(questionnaireRefusal([text], [{ id: 'nope', value: 'x' }])).toBe(`'nope' is not a question of this questionnaire`)
  })
  it('refuses a question answered twice', () => {
    expect(questionnaireRefusal([text], [{ id: 't', value: 'x' }, { id: 't', value: 'y' }])).toBe(`question 't' is answered more than once`)
  })
  it('refuses a questionnaire with a question left unanswered', () => {
    expect(questionnaireRefusal([text, single], [{ id: 's', value: 'a' }])).toBe(`question 't' has no answer`)
    expect(questionnaireRefusal([text], [])).toBe(`question 't' has no answer`)
  })
  it('takes every question answered once, in any order', () => {
    expect(questionnaireRefusal([text, single], [{ id: 's', value: 'a' }, { id: 't', value: 'x' }])).toBeUndefined()
  })
})

describe('questionnaireRefusal: a text question', () => {
  it('takes a non-empty value', () => expect(one(text, { value: 'because' })).toBeUndefined())
  it('refuses an empty or blank value', () => {
    expect(one(text, { value: '' })).toBe(`question 't': a text question takes a non-empty value`)
    expect(one(text, { value: '   ' })).toBe(`question 't': a text question takes a non-empty value`)
  })
  it('refuses no value at all', () => expect(one(text, {})).toBe(`question 't': a text question takes a non-empty value`))
  it('refuses values', () => expect(one(text, { values: ['x'] })).toBe(`question 't': a text question takes { value }, not values`))
  it('refuses other', () => expect(one(text, { other: 'x' })).toBe(`question 't': a text question takes { value }, not other`))
})

describe('questionnaireRefusal: a single-choice question', () => {
  it('takes one offered value', () => expect(one(single, { value: 'b' })).toBeUndefined())
  it('takes an answer of its own when it allows one', () => expect(one(single, { other: 'c' })).toBeUndefined())
  it('refuses a value and an answer of its own together', () =>
    expect(one(single, { value: 'a', other: 'c' })).toBe(`question 's': choose an option or give your own answer, not both`))
  it('refuses a value it did not offer', () => expect(one(single, { value: 'z' })).toBe(`question 's': 'z' is not one of the offered options`))
  it('refuses no answer', () => expect(one(single, {})).toBe(`question 's': choose one of the offered options`))
  it('refuses values', () => expect(one(single, { values: ['a'] })).toBe(`question 's': a single-choice question takes one value, not values`))
  it('refuses an answer of its own when allowOther is false', () =>
    expect(one(singleNoOther, { other: 'c' })).toBe(`question 's0': this question does not allow an answer of your own`))
  it('refuses an empty answer of its own', () => {
    expect(one(single, { other: '' })).toBe(`question 's': the answer of your own is empty`)
    expect(one(single, { other: '  ' })).toBe(`question 's': the answer of your own is empty`)
  })
})

describe('questionnaireRefusal: a multi-choice question', () => {
  it('takes offered values', () => expect(one(multi, { values: ['a', 'b'] })).toBeUndefined())
  it('takes an answer of its own alone, or with values', () => {
    expect(one(multi, { other: 'c' })).toBeUndefined()
    expect(one(multi, { values: ['a'], other: 'c' })).toBeUndefined()
  })
  it('refuses a stray value it did not offer', () => expect(one(multi, { values: ['a', 'z'] })).toBe(`question 'm': 'z' is not one of the offered options`))
  it('refuses an option chosen twice', () => expect(one(multi, { values: ['a', 'a'] })).toBe(`question 'm': an option is chosen more than once`))
  it('refuses an empty choice', () => {
    expect(one(multi, { values: [] })).toBe(`question 'm': choose at least one option`)
    expect(one(multi, {})).toBe(`question 'm': choose at least one option`)
  })
  it('refuses value', () => expect(one(multi, { value: 'a' })).toBe(`question 'm': a multi-choice question takes values, not value`))
  it('refuses an answer of its own when allowOther is false', () =>
    expect(one(multiNoOther, { values: ['a'], other: 'c' })).toBe(`question 'm0': this question does not allow an answer of your own`))
  it('refuses an empty answer of its own', () => expect(one(multi, { values: ['a'], other: ' ' })).toBe(`question 'm': the answer of your own is empty`))
})

describe('questionnaireRefusal: a skipped question', () => {
  it('takes skipped with nothing else, whatever the mode', () => {
    for (const q of [text, single, multi]) expect(one(q, { skipped: true })).toBeUndefined()
  })
  it('refuses skipped with a value, values or an answer of its own', () => {
    expect(one(single, { skipped: true, value: 'a' })).toBe(`question 's': a skipped question carries no value`)
    expect(one(multi, { skipped: true, values: ['a'] })).toBe(`question 'm': a skipped question carries no value`)
    expect(one(single, { skipped: true, other: 'c' })).toBe(`question 's': a skipped question carries no value`)
  })
})

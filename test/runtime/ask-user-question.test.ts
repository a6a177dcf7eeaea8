import { afterEach, describe, expect, it } from 'vitest'
import { buildQuestion, describeAnswer } from '../../src/runtime/index.js'
import { FakeBridge, piRuntimes, Recorder, tempDir } from './helpers.js'

const cleanups: Array<() => unknown> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

async function setup() {
  const tmp = tempDir()
  cleanups.push(tmp.cleanup)
  const factory = await piRuntimes({ dataDir: tmp.dir })
  const ui = new FakeBridge()
  const runtime = await factory.create({ threadId: 'q', model: 'demo', ui })
  cleanups.push(() => runtime.dispose())
  return { ui, runtime, rec: new Recorder(runtime) }
}

const call = (args: object) => `call ask_user_question ${JSON.stringify(args)}`

describe('ask_user_question tool', () => {
  it('builds one skippable question card and reports "answered: <value>"', async () => {
    const { runtime, rec, ui } = await setup()
    runtime.prompt({
      messageId: 'p',
      text: call({
        question: '  Which colour?  ',
        mode: 'single',
        options: [{ label: ' Red ', detail: 'warm' }, { label: '   ' }, { label: 'Blue', value: 'b' }],
        allowOther: true,
      }),
    })
    const q = await ui.nthQuestion(0)
    expect(q.request.question).toEqual({
      id: 'q1',
      prompt: 'Which colour?',
      mode: 'single',
      options: [
        { value: 'Red', label: 'Red', description: 'warm' },
        { value: 'b', label: 'Blue' },
      ],
      allowOther: true,
      skippable: true,
    })
    expect(q.request.options.toolCallId).toBe(rec.of('tool-start')[0].toolCallId)
    expect(q.request.options.signal).toBeInstanceOf(AbortSignal)
    q.resolve({ status: 'answered', value: 'b' })
    await rec.next('settled')
    expect(rec.of('tool-end')[0].result.text).toBe('answered: b')
  })

  it('three questions in one assistant message reach ui.askUser in call order, all at once (pi runs the batch concurrently)', async () => {
    const { runtime, rec, ui } = await setup()
    runtime.prompt({
      messageId: 'p',
      text: [
        call({ question: 'First?', mode: 'text' }),
        call({ question: 'Second?', mode: 'multi', options: [{ label: 'x' }, { label: 'y' }] }),
        call({ question: 'Third?', mode: 'single', options: [{ label: 'z' }] }),
      ].join('\n'),
    })
    const third = await ui.nthQuestion(2)
    // All three are parked before any is answered: pi did not wait for the first to finish.
    expect(ui.questions.map((q) => [q.request.question.prompt, q.settled])).toEqual([
      ['First?', false],
      ['Second?', false],
      ['Third?', false],
    ])
    const ids = rec.of('tool-start').map((e) => e.toolCallId)
    expect(ui.questions.map((q) => q.request.options.toolCallId)).toEqual(ids)
    // answered out of order, results still land per call
    third.resolve({ status: 'skipped' })
    ui.questions[1].resolve({ status: 'answered', values: ['x', 'y'], other: 'w' })
    ui.questions[0].resolve({ status: 'answered', value: 'because' })
    await rec.next('settled')
    const byId = new Map(rec.of('tool-end').map((e) => [e.toolCallId, e.result.text]))
    expect(ids.map((id) => byId.get(id))).toEqual(['answered: because', 'answered: x, y, other: w', 'skipped'])
    expect(rec.of('assistant-end').at(-1)?.text).toBe(
      'Tool results:\n- ask_user_question: answered: because\n- ask_user_question: answered: x, y, other: w\n- ask_user_question: skipped',
    )
  })

  it('an "unavailable" answer from the bridge is reported as unavailable', async () => {
    const { runtime, rec, ui } = await setup()
    runtime.prompt({ messageId: 'p', text: call({ question: 'Hm?', mode: 'text' }) })
    ;(await ui.nthQuestion(0)).resolve({ status: 'unavailable' })
    await rec.next('settled')
    expect(rec.of('tool-end')[0].result.text).toBe('unavailable')
  })

  it('too many options is a clear tool error and nothing is asked', async () => {
    const { runtime, rec, ui } = await setup()
    const options = Array.from({ length: 13 }, (_, i) => ({ label: `o${i}` }))
    runtime.prompt({ messageId: 'p', text: call({ question: 'Pick', mode: 'single', options }) })
    await rec.next('settled')
    const end = rec.of('tool-end')[0]
    expect(end.isError).toBe(true)
    expect((end.result as { text: string }).text).toMatch(/at most 12 options/)
    expect(ui.questions).toHaveLength(0)
  })

  it('buildQuestion enforces the bounds and drops options in text mode', () => {
    expect(() => buildQuestion({ question: ' ', mode: 'text' })).toThrow(/must not be empty/)
    expect(() => buildQuestion({ question: 'x'.repeat(2001), mode: 'text' })).toThrow(/2000/)
    expect(() => buildQuestion({ question: 'q', mode: 'single', options: [{ label: 'y'.repeat(501) }] })).toThrow(/500/)
    expect(() => buildQuestion({ question: 'q', mode: 'single', options: [{ label: ' ' }] })).toThrow(/at least one option/)
    expect(() => buildQuestion({ question: 'q', mode: 'multi', options: [{ label: 'a' }, { label: 'b', value: 'a' }] })).toThrow(
      /unique/,
    )
    expect(buildQuestion({ question: 'q', mode: 'single', allowOther: true })).toMatchObject({ options: [], allowOther: true })
    expect(buildQuestion({ question: 'q', mode: 'text', options: [{ label: 'a' }], allowOther: true })).toMatchObject({
      options: [],
      allowOther: false,
    })
  })

  it('describeAnswer names each status', () => {
    expect(describeAnswer({ status: 'answered', other: 'mine' })).toBe('answered: mine')
    expect(describeAnswer({ status: 'answered', values: ['a', 'b'] })).toBe('answered: a, b')
    expect(describeAnswer({ status: 'skipped' })).toBe('skipped')
    expect(describeAnswer({ status: 'cancelled' })).toBe('cancelled')
    expect(describeAnswer({ status: 'unavailable' })).toBe('unavailable')
  })
})

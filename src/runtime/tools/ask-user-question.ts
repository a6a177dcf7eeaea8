/**
 * `ask_user_question`: the model asks the human ONE question (free text, single or multi choice).
 *
 * The question goes to the host's ask-queue (`UiBridge.askUser`), which shows one at a time in
 * call order; pi runs a batch of tool calls concurrently, so the queue, not this tool, serialises
 * them (ADR-0032). Each call reports one of `answered`, `skipped`, `cancelled`, `unavailable`.
 */
import { Type } from 'typebox'
import type { ExtensionFactory } from '@earendil-works/pi-coding-agent'
import type { QuestionnaireQuestion } from '../../schemas/index.js'
import type { AskUserResult, UiBridge } from '../port.js'
import { errorText, type RuntimeLogger } from '../extension-ui.js'

export const ASK_USER_QUESTION = 'ask_user_question'
export const LIMITS = { question: 2000, options: 12, label: 500, detail: 1000 } as const

const Params = Type.Object({
  question: Type.String({ description: 'The question, in full.' }),
  mode: Type.Union([Type.Literal('text'), Type.Literal('single'), Type.Literal('multi')], {
    description: "'text' for a free answer, 'single' to pick one option, 'multi' to pick several.",
  }),
  options: Type.Optional(
    Type.Array(
      Type.Object({
        label: Type.String(),
        value: Type.Optional(Type.String({ description: 'Defaults to the label.' })),
        detail: Type.Optional(Type.String()),
      }),
    ),
  ),
  allowOther: Type.Optional(Type.Boolean({ description: 'Let the user type an answer of their own.' })),
})

export interface AskUserQuestionParams {
  question: string
  mode: 'text' | 'single' | 'multi'
  options?: Array<{ label: string; value?: string; detail?: string }>
  allowOther?: boolean
}

/** Normalises the model's arguments into one question card, or throws a message the model can act on. */
export function buildQuestion(params: AskUserQuestionParams): QuestionnaireQuestion {
  const prompt = params.question.trim()
  if (!prompt) throw new Error('question must not be empty')
  if (prompt.length > LIMITS.question) throw new Error(`question is longer than ${LIMITS.question} characters`)
  const options =
    params.mode === 'text'
      ? []
      : (params.options ?? [])
          .map((o) => ({ label: o.label.trim(), value: o.value?.trim(), detail: o.detail?.trim() }))
          .filter((o) => o.label.length > 0)
          .map((o) => ({
            value: o.value || o.label,
            label: o.label,
            ...(o.detail ? { description: o.detail } : {}),
          }))
  if (options.length > LIMITS.options) throw new Error(`at most ${LIMITS.options} options are allowed`)
  const long = options.find((o) => o.label.length > LIMITS.label)
  if (long) throw new Error(`option labels must be at most ${LIMITS.label} characters`)
  if (options.some((o) => (o.description?.length ?? 0) > LIMITS.detail)) {
    throw new Error(`option details must be at most ${LIMITS.detail} characters`)
  }
  if (new Set(options.map((o) => o.value)).size !== options.length) throw new Error('option values must be unique')
  const allowOther = params.mode !== 'text' && params.allowOther === true
  if (params.mode !== 'text' && options.length === 0 && !allowOther) {
    throw new Error(`mode '${params.mode}' needs at least one option with a non-empty label (or allowOther: true)`)
  }
  return { id: 'q1', prompt, mode: params.mode, options, allowOther, skippable: true }
}

/** The text the model reads back. */
export function describeAnswer(result: AskUserResult): string {
  if (result.status !== 'answered') return result.status
  const parts = [...(result.value !== undefined ? [result.value] : []), ...(result.values ?? [])]
  if (result.other !== undefined) parts.push(parts.length ? `other: ${result.other}` : result.other)
  return `answered: ${parts.join(', ')}`
}

export function askUserQuestionExtension(ui: UiBridge, log: RuntimeLogger): ExtensionFactory {
  return (pi) => {
    pi.registerTool({
      name: ASK_USER_QUESTION,
      label: 'Ask the user',
      description:
        'Ask the user one question and wait for the answer. Use it instead of ending your reply with a question. ' +
        `At most ${LIMITS.options} options. The result is 'answered: …', 'skipped', 'cancelled' or 'unavailable'.`,
      promptSnippet: 'ask_user_question: ask the user a question (free text, single or multiple choice)',
      parameters: Params,
      async execute(toolCallId, params, signal, _onUpdate, ctx) {
        const question = buildQuestion(params)
        let result: AskUserResult
        if (!ctx.hasUI) result = { status: 'unavailable' }
        else if (signal?.aborted) result = { status: 'cancelled' }
        else {
          try {
            result = await ui.askUser(question, { ...(signal ? { signal } : {}), toolCallId })
          } catch (error) {
            log.error(`ui.askUser failed: ${errorText(error)}`)
            result = { status: 'unavailable' }
          }
        }
        return { content: [{ type: 'text', text: describeAnswer(result) }], details: { question, result } }
      },
    })
  }
}

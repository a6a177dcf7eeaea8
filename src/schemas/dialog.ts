/**
 * The questions extensions and tools ask a human, and the answers that settle them.
 *
 * Shared by the server (which refuses a wrong answer with 422 before the runtime sees it) and the
 * browser (which renders the card), so both enforce one rule.
 */
import { Type, type Static } from 'typebox'
import { Compile } from 'typebox/compile'
import { TerminalScreen, TerminalTypist } from './terminal.js'

const Title = Type.String({ maxLength: 2000 })

export const ConfirmSpec = Type.Object({
  method: Type.Literal('confirm'),
  title: Title,
  message: Type.String(),
})
export const SelectSpec = Type.Object({
  method: Type.Literal('select'),
  title: Title,
  options: Type.Array(Type.String()),
})
export const InputSpec = Type.Object({
  method: Type.Literal('input'),
  title: Title,
  placeholder: Type.Optional(Type.String()),
})
export const EditorSpec = Type.Object({
  method: Type.Literal('editor'),
  title: Title,
  prefill: Type.Optional(Type.String()),
})

export const QuestionOption = Type.Object({
  value: Type.String(),
  label: Type.String(),
  description: Type.Optional(Type.String()),
})
export const Question = Type.Object({
  id: Type.String({ minLength: 1 }),
  prompt: Type.String(),
  label: Type.Optional(Type.String()),
  mode: Type.Union([Type.Literal('text'), Type.Literal('single'), Type.Literal('multi')]),
  options: Type.Array(QuestionOption),
  allowOther: Type.Boolean(),
  /** Only on the one-question cards of `ask_user_question`: the card offers Skip. */
  skippable: Type.Optional(Type.Boolean()),
})
export const QuestionnaireSpec = Type.Object({
  method: Type.Literal('questionnaire'),
  title: Type.Optional(Title),
  questions: Type.Array(Question, { minItems: 1 }),
})

/**
 * A terminal component (`ctx.ui.custom()`): not answered by a payload but by its own keys
 * (`POST …/dialog/:dialogId/input`) until it calls `done`. Its screen travels beside the spec.
 */
export const TerminalSpec = Type.Object({
  method: Type.Literal('terminal'),
  title: Type.Optional(Title),
  cols: Type.Integer({ minimum: 1 }),
  rows: Type.Integer({ minimum: 1 }),
})

export const DialogSpec = Type.Union([ConfirmSpec, SelectSpec, InputSpec, EditorSpec, QuestionnaireSpec, TerminalSpec])
export type DialogSpec = Static<typeof DialogSpec>
export type DialogMethod = DialogSpec['method']
export type QuestionnaireQuestion = Static<typeof Question>
export type QuestionnaireSpec = Static<typeof QuestionnaireSpec>

export const QuestionAnswer = Type.Object(
  {
    id: Type.String(),
    value: Type.Optional(Type.String()),
    values: Type.Optional(Type.Array(Type.String())),
    other: Type.Optional(Type.String()),
    skipped: Type.Optional(Type.Literal(true)),
  },
  { additionalProperties: false },
)
export type QuestionAnswer = Static<typeof QuestionAnswer>

/** What a human sends to answer a dialog (without the dialog id, which the route carries). */
export const DialogAnswer = Type.Union([
  Type.Object({ value: Type.String() }, { additionalProperties: false }),
  Type.Object({ confirmed: Type.Boolean() }, { additionalProperties: false }),
  Type.Object({ answers: Type.Array(QuestionAnswer) }, { additionalProperties: false }),
])
export type DialogAnswer = Static<typeof DialogAnswer>

export const DialogOutcome = Type.Union([
  Type.Literal('answered'),
  Type.Literal('cancelled'),
  Type.Literal('timeout'),
  Type.Literal('aborted'),
])
export type DialogOutcome = Static<typeof DialogOutcome>

/** Where a question came from: an extension's `ctx.ui`, or a built-in tool call. */
export const DialogOrigin = Type.Object({
  kind: Type.Union([Type.Literal('extension'), Type.Literal('tool')]),
  name: Type.Optional(Type.String()),
  toolCallId: Type.Optional(Type.String()),
})
export type DialogOrigin = Static<typeof DialogOrigin>

/** A parked question as every follower sees it, in `snapshot.openDialogs` and `extension-ui-request`. */
export const OpenDialog = Type.Object({
  id: Type.String(),
  dialog: DialogSpec,
  origin: DialogOrigin,
  expiresAt: Type.Optional(Type.Number()),
  /** A terminal component's screen as its frames left it (only for `method: 'terminal'`). */
  screen: Type.Optional(TerminalScreen),
  /** The tab typing into a terminal component, while its input lease holds. */
  typist: Type.Optional(TerminalTypist),
})
export type OpenDialog = Static<typeof OpenDialog>

const dialogAnswerValidator = Compile(DialogAnswer)
const dialogSpecValidator = Compile(DialogSpec)

export function isDialogSpec(value: unknown): value is DialogSpec {
  return dialogSpecValidator.Check(value)
}

/**
 * Does this payload answer THIS dialog?
 *
 * Returns `undefined` when it does, or a human-readable refusal. The select rule matters most: pi
 * hands the answered value to the extension verbatim, so a value outside the offered options would
 * put a string the extension never offered into its control flow. That injection seam is closed
 * here rather than trusted to the renderer.
 */
export function validateDialogAnswer(spec: DialogSpec, payload: unknown): string | undefined {
  if (!dialogAnswerValidator.Check(payload)) {
    return 'the payload is not a dialog answer ({ value: string }, { confirmed: boolean } or { answers: [...] })'
  }
  switch (spec.method) {
    case 'confirm':
      return 'confirmed' in payload ? undefined : `a 'confirm' dialog takes { confirmed: boolean }`
    case 'select':
      if (!('value' in payload)) return `a 'select' dialog takes { value: string }`
      return spec.options.includes(payload.value) ? undefined : `'${payload.value}' is not one of the offered options`
    case 'input':
    case 'editor':
      return 'value' in payload ? undefined : `an '${spec.method}' dialog takes { value: string }`
    case 'questionnaire':
      if (!('answers' in payload)) return `a 'questionnaire' dialog takes { answers: [...] }`
      return questionnaireRefusal(spec.questions, payload.answers)
    case 'terminal':
      return 'a terminal component is answered by its own keys (POST …/dialog/:dialogId/input), not by a payload'
  }
}

/** Every question answered exactly once, no unknown id, and each answer fits its question's mode. */
export function questionnaireRefusal(
  questions: readonly QuestionnaireQuestion[],
  answers: readonly QuestionAnswer[],
): string | undefined {
  const byId = new Map(questions.map((q) => [q.id, q]))
  const seen = new Set<string>()
  for (const answer of answers) {
    const question = byId.get(answer.id)
    if (!question) return `'${answer.id}' is not a question of this questionnaire`
    if (seen.has(answer.id)) return `question '${answer.id}' is answered more than once`
    seen.add(answer.id)
    const refusal = answer.skipped ? skippedRefusal(answer) : answerRefusal(question, answer)
    if (refusal) return `question '${answer.id}': ${refusal}`
  }
  const missing = questions.find((q) => !seen.has(q.id))
  return missing ? `question '${missing.id}' has no answer` : undefined
}

function skippedRefusal(answer: QuestionAnswer): string | undefined {
  const extra = answer.value !== undefined || answer.values !== undefined || answer.other !== undefined
  return extra ? 'a skipped question carries no value' : undefined
}

function answerRefusal(question: QuestionnaireQuestion, answer: QuestionAnswer): string | undefined {
  const offered = new Set(question.options.map((o) => o.value))
  const other = answer.other?.trim()
  if (answer.other !== undefined) {
    if (question.mode === 'text') return 'a text question takes { value }, not other'
    if (!question.allowOther) return 'this question does not allow an answer of your own'
    if (!other) return 'the answer of your own is empty'
  }
  switch (question.mode) {
    case 'text':
      if (answer.values !== undefined) return 'a text question takes { value }, not values'
      return answer.value?.trim() ? undefined : 'a text question takes a non-empty value'
    case 'single':
      if (answer.values !== undefined) return 'a single-choice question takes one value, not values'
      if (answer.value !== undefined && other) return 'choose an option or give your own answer, not both'
      if (answer.value === undefined) return other ? undefined : 'choose one of the offered options'
      return offered.has(answer.value) ? undefined : `'${answer.value}' is not one of the offered options`
    case 'multi': {
      if (answer.value !== undefined) return 'a multi-choice question takes values, not value'
      const values = answer.values ?? []
      const stray = values.find((v) => !offered.has(v))
      if (stray !== undefined) return `'${stray}' is not one of the offered options`
      if (new Set(values).size !== values.length) return 'an option is chosen more than once'
      return values.length > 0 || other ? undefined : 'choose at least one option'
    }
  }
}

/**
 * What an answer chose, in the words of the card's choices, for every tab's note when a question
 * settles ("answered in another tab: us-east"). Only choices among what the question offered are
 * said: a typed answer (input, editor, a questionnaire's text or "Other") may be long or private,
 * and stays with the extension that asked.
 */
import type { DialogAnswer, DialogSpec } from './dialog.js'

export function chosenOf(spec: DialogSpec, answer: DialogAnswer | undefined): string | undefined {
  if (!answer) return undefined
  if (spec.method === 'confirm' && 'confirmed' in answer) return answer.confirmed ? 'Yes' : 'No'
  if (spec.method === 'select' && 'value' in answer) return spec.options.includes(answer.value) ? answer.value : undefined
  if (spec.method !== 'questionnaire' || !('answers' in answer)) return undefined
  if (answer.answers.length > 0 && answer.answers.every((a) => a.skipped)) return 'skipped'
  const said = answer.answers.flatMap((a) => {
    const question = spec.questions.find((q) => q.id === a.id)
    if (!question || question.mode === 'text' || a.skipped) return []
    // An answer names an option by its value; the note says its label, as the card showed it.
    const label = new Map(question.options.map((o) => [o.value, o.label]))
    return [...(a.value !== undefined ? [a.value] : []), ...(a.values ?? [])].flatMap((v) => (label.has(v) ? [label.get(v)!] : []))
  })
  return said.length > 0 ? said.join(', ') : undefined
}

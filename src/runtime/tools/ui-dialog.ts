/**
 * `ui_dialog`: lets the model (and the demo) open any dialog kind the host can draw.
 *
 * confirm/select/input go through `ctx.ui`, exactly as a third-party extension would, so this tool
 * exercises the real pi → ExtensionUIContext path. pi's editor() takes no signal or timeout and
 * there is no questionnaire in pi's UI, so those two go to the bridge directly.
 *
 * Every call passes its own AbortSignal (chained to the tool's) so the real outcome — answered,
 * cancelled, timeout, aborted — can be read back; pi's return values alone cannot tell them apart.
 */
import { Type } from 'typebox'
import type { ExtensionContext, ExtensionFactory } from '@earendil-works/pi-coding-agent'
import { isDialogSpec, type DialogSpec } from '../../schemas/index.js'
import type { DialogResolution, UiBridge } from '../port.js'
import { askBridge, resolutionFor, type RuntimeLogger } from '../extension-ui.js'
import { DEMO_MODEL_ID, DEMO_PROVIDER } from '../demo-model.js'

export const UI_DIALOG = 'ui_dialog'

const Params = Type.Object({
  method: Type.Union([
    Type.Literal('confirm'),
    Type.Literal('select'),
    Type.Literal('input'),
    Type.Literal('editor'),
    Type.Literal('questionnaire'),
  ]),
  title: Type.String(),
  message: Type.Optional(Type.String()),
  options: Type.Optional(Type.Array(Type.String())),
  placeholder: Type.Optional(Type.String()),
  prefill: Type.Optional(Type.String()),
  questions: Type.Optional(Type.Array(Type.Unknown(), { description: 'questionnaire only: Question objects' })),
  timeoutMs: Type.Optional(Type.Number({ description: 'Dismiss the dialog after this many milliseconds.' })),
})

export interface UiDialogParams {
  method: 'confirm' | 'select' | 'input' | 'editor' | 'questionnaire'
  title: string
  message?: string
  options?: string[]
  placeholder?: string
  prefill?: string
  questions?: unknown[]
  timeoutMs?: number
}

export interface UiDialogResult {
  outcome: DialogResolution['outcome'] | 'unavailable'
  value: unknown
}

/** The dialog this call describes, or a message the model can act on. */
export function dialogSpec(p: UiDialogParams): DialogSpec {
  if (!p.title.trim()) throw new Error('title must not be empty')
  if (p.timeoutMs !== undefined && !(p.timeoutMs > 0)) throw new Error('timeoutMs must be a positive number')
  let spec: DialogSpec
  switch (p.method) {
    case 'confirm':
      spec = { method: 'confirm', title: p.title, message: p.message ?? '' }
      break
    case 'select':
      if (!p.options?.length) throw new Error("method 'select' needs a non-empty options array")
      spec = { method: 'select', title: p.title, options: p.options }
      break
    case 'input':
      spec = { method: 'input', title: p.title, ...(p.placeholder !== undefined ? { placeholder: p.placeholder } : {}) }
      break
    case 'editor':
      spec = { method: 'editor', title: p.title, ...(p.prefill !== undefined ? { prefill: p.prefill } : {}) }
      break
    case 'questionnaire':
      if (!p.questions?.length) throw new Error("method 'questionnaire' needs a non-empty questions array")
      spec = { method: 'questionnaire', title: p.title, questions: p.questions as never }
      break
  }
  if (!isDialogSpec(spec)) {
    throw new Error(
      p.method === 'questionnaire'
        ? 'questions must be objects {id, prompt, mode: text|single|multi, options: [{value, label}], allowOther}'
        : 'the dialog is not valid (title at most 2000 characters)',
    )
  }
  return spec
}

async function run(
  ui: UiBridge,
  log: RuntimeLogger,
  spec: DialogSpec,
  p: UiDialogParams,
  ctx: ExtensionContext,
  toolCallId: string,
  signal: AbortSignal,
): Promise<UiDialogResult> {
  const timeout = p.timeoutMs
  const opts = { signal, ...(timeout !== undefined ? { timeout } : {}) }
  const outcome = (fallback: unknown, value: unknown): UiDialogResult => {
    const resolution = resolutionFor(signal)
    // No recorded resolution means ctx.ui is not our bridge (pi's no-UI context): treat as unavailable.
    if (!resolution) return { outcome: 'unavailable', value: fallback }
    return { outcome: resolution.outcome, value }
  }
  switch (spec.method) {
    case 'confirm':
      return outcome(false, await ctx.ui.confirm(spec.title, spec.message, opts))
    case 'select':
      return outcome(undefined, await ctx.ui.select(spec.title, spec.options, opts))
    case 'input':
      return outcome(undefined, await ctx.ui.input(spec.title, spec.placeholder, opts))
    case 'editor':
    case 'questionnaire': {
      const origin = { kind: 'tool' as const, name: UI_DIALOG, toolCallId }
      const r = await askBridge(ui, { spec, origin, signal, ...(timeout !== undefined ? { timeoutMs: timeout } : {}) }, log)
      const a = r.outcome === 'answered' ? r.answer : undefined
      const value = a && 'value' in a ? a.value : a && 'answers' in a ? a.answers : undefined
      return { outcome: r.outcome, value }
    }
    // Not one of this tool's methods (a terminal component is an extension's `ctx.ui.custom()`).
    case 'terminal':
      throw new Error("method 'terminal' is not a dialog this tool opens")
  }
}

/**
 * The tool is the demo model's: its scripted replies open dialogs with it. A real model is not
 * offered it (it would only be one more tool in its list and its system prompt, beside
 * ask_user_question), so it is active exactly while the thread's model is the demo.
 */
export function uiDialogExtension(ui: UiBridge, log: RuntimeLogger): ExtensionFactory {
  return (pi) => {
    const offerOnlyToDemo = (model: { provider: string; id: string } | undefined) => {
      const demo = model?.provider === DEMO_PROVIDER && model.id === DEMO_MODEL_ID
      const active = pi.getActiveTools()
      if (demo === active.includes(UI_DIALOG)) return
      pi.setActiveTools(demo ? [...active, UI_DIALOG] : active.filter((name) => name !== UI_DIALOG))
    }
    pi.on('session_start', (_event, ctx) => offerOnlyToDemo(ctx.model))
    pi.on('model_select', (event) => offerOnlyToDemo(event.model))
    pi.registerTool({
      name: UI_DIALOG,
      label: 'Dialog',
      description:
        'Open a dialog for the user: confirm (title, message), select (title, options), input (title, placeholder), ' +
        'editor (title, prefill) or questionnaire (title, questions). Returns {"outcome", "value"} as JSON.',
      parameters: Params,
      async execute(toolCallId, params, signal, _onUpdate, ctx) {
        const spec = dialogSpec(params)
        if (!ctx.hasUI) return textResult({ outcome: 'unavailable', value: undefined })
        const own = new AbortController()
        const relay = () => own.abort(signal?.reason)
        if (signal?.aborted) relay()
        else signal?.addEventListener('abort', relay, { once: true })
        try {
          return textResult(await run(ui, log, spec, params, ctx, toolCallId, own.signal))
        } finally {
          signal?.removeEventListener('abort', relay)
        }
      },
    })
  }
}

function textResult(result: UiDialogResult) {
  // `null`, not a missing key, so the model always sees both fields.
  const text = JSON.stringify({ outcome: result.outcome, value: result.value ?? null })
  return { content: [{ type: 'text' as const, text }], details: result }
}

/**
 * The ExtensionUIContext bound once per pi session: pi's dialog calls become `UiBridge.ask` requests.
 *
 * pi's dialog API cannot say *why* a dialog ended (cancel, timeout and abort all return the same
 * default), so every resolution is also recorded against the caller's AbortSignal. A caller that
 * passes its own signal (our `ui_dialog` tool does) can read the real outcome back with
 * `resolutionFor(signal)`; ordinary extensions just see pi's values.
 */
import type { ExtensionUIContext, ExtensionUIDialogOptions } from '@earendil-works/pi-coding-agent'
import type { DialogOrigin, DialogSpec, NotifyLevel } from '../schemas/index.js'
import type { DialogResolution, UiBridge } from './port.js'

export interface RuntimeLogger {
  info(message: string): void
  warn(message: string): void
  error(message: string): void
}

export const consoleLogger: RuntimeLogger = {
  info: () => {},
  warn: (m) => console.warn(`[runtime] ${m}`),
  error: (m) => console.error(`[runtime] ${m}`),
}

export interface DialogCall {
  spec: DialogSpec
  origin: DialogOrigin
  signal?: AbortSignal
  timeoutMs?: number
}

const resolutions = new WeakMap<AbortSignal, DialogResolution>()

/** The outcome of the last dialog asked with this signal (see the header comment). */
export function resolutionFor(signal: AbortSignal): DialogResolution | undefined {
  return resolutions.get(signal)
}

/**
 * Asks the host. A signal that is already aborted never reaches the host: pi's own UIs resolve the
 * default immediately in that case, and a card that appears and vanishes would only be noise.
 */
export async function askBridge(ui: UiBridge, call: DialogCall, log: RuntimeLogger): Promise<DialogResolution> {
  let resolution: DialogResolution
  if (call.signal?.aborted) {
    resolution = { outcome: 'aborted' }
  } else {
    try {
      resolution = await ui.ask({
        spec: call.spec,
        origin: call.origin,
        ...(call.signal ? { signal: call.signal } : {}),
        ...(call.timeoutMs !== undefined ? { timeoutMs: call.timeoutMs } : {}),
      })
    } catch (error) {
      // A broken bridge must not wedge the agent: the extension gets its cancel value.
      log.error(`ui.ask failed for ${call.spec.method}: ${errorText(error)}`)
      resolution = { outcome: 'cancelled' }
    }
  }
  if (call.signal) resolutions.set(call.signal, resolution)
  return resolution
}

function answeredValue(resolution: DialogResolution): string | undefined {
  const answer = resolution.answer
  if (resolution.outcome !== 'answered' || !answer || !('value' in answer)) return undefined
  return answer.value
}

function answeredConfirm(resolution: DialogResolution): boolean {
  const answer = resolution.answer
  return resolution.outcome === 'answered' && !!answer && 'confirmed' in answer && answer.confirmed
}

function timeoutOf(opts: ExtensionUIDialogOptions | undefined): number | undefined {
  return opts?.timeout !== undefined && opts.timeout > 0 ? opts.timeout : undefined
}

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** One stable context per session; pi reads `ctx.ui` at call time, so it is never swapped. */
export function createExtensionUi(ui: UiBridge, log: RuntimeLogger): ExtensionUIContext {
  const origin: DialogOrigin = { kind: 'extension' }
  const ask = (spec: DialogSpec, opts?: ExtensionUIDialogOptions) =>
    askBridge(ui, { spec, origin, signal: opts?.signal, timeoutMs: timeoutOf(opts) }, log)
  const notify = (message: string, level: NotifyLevel) => {
    try {
      ui.notify(message, level)
    } catch (error) {
      log.warn(`ui.notify failed: ${errorText(error)}`)
    }
  }

  const context: ExtensionUIContext = {
    async select(title, options, opts) {
      return answeredValue(await ask({ method: 'select', title, options: [...options] }, opts))
    },
    async confirm(title, message, opts) {
      return answeredConfirm(await ask({ method: 'confirm', title, message }, opts))
    },
    async input(title, placeholder, opts) {
      const spec: DialogSpec = { method: 'input', title, ...(placeholder !== undefined ? { placeholder } : {}) }
      return answeredValue(await ask(spec, opts))
    },
    // pi gives editor() no signal or timeout; the host settles it when the run is stopped.
    async editor(title, prefill) {
      const spec: DialogSpec = { method: 'editor', title, ...(prefill !== undefined ? { prefill } : {}) }
      return answeredValue(await ask(spec))
    },
    notify(message, type) {
      notify(message, type ?? 'info')
    },
    setStatus(_key, text) {
      if (text) notify(text, 'info')
    },
    // custom() hands the extension a terminal component; a browser cannot draw it (pi's RPC mode agrees).
    async custom() {
      log.warn('an extension called ui.custom(), which a web host cannot render; it resolves undefined')
      return undefined as never
    },
    onTerminalInput: () => () => {},
    setWorkingMessage: () => {},
    setWorkingVisible: () => {},
    setWorkingIndicator: () => {},
    setHiddenThinkingLabel: () => {},
    setWidget: () => {},
    setFooter: () => {},
    setHeader: () => {},
    setTitle: () => {},
    pasteToEditor: () => {},
    setEditorText: () => {},
    getEditorText: () => '',
    addAutocompleteProvider: () => {},
    setEditorComponent: () => {},
    getEditorComponent: () => undefined,
    // There is no terminal theme here; pi's dialogs and tools work with it undefined (pi-runtime.md §1.1).
    get theme() {
      return undefined as never
    },
    getAllThemes: () => [],
    getTheme: () => undefined,
    setTheme: () => ({ success: false, error: 'Themes are not supported by this host' }),
    getToolsExpanded: () => false,
    setToolsExpanded: () => {},
  }
  return context
}

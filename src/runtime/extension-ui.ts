/**
 * The ExtensionUIContext bound once per pi session: pi's dialog calls become `UiBridge.ask` requests,
 * its fire-and-forget calls the bridge's notify / setStatus / setWidget / setWorking / setTitle /
 * setEditorText.
 *
 * pi's dialog API cannot say *why* a dialog ended (cancel, timeout and abort all return the same
 * default), so every resolution is also recorded against the caller's AbortSignal. A caller that
 * passes its own signal (our `ui_dialog` tool does) can read the real outcome back with
 * `resolutionFor(signal)`; ordinary extensions just see pi's values.
 */
import type { ExtensionUIContext, ExtensionUIDialogOptions, ExtensionWidgetOptions } from '@earendil-works/pi-coding-agent'
import type { DialogOrigin, DialogSpec, NotifyLevel, WorkingState } from '../schemas/index.js'
import type { DialogResolution, UiBridge } from './port.js'
import { piTheme } from './pi-theme.js'
import { showCustom, TerminalWidgets } from './terminal-components.js'
import { plainText } from './terminal-text.js'

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

/** How long the same terminal-only call is only logged after its toast. */
export const TERMINAL_NOTICE_GAP_MS = 5000

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/**
 * One stable context per session; pi reads `ctx.ui` at call time, so it is never swapped.
 *
 * The fire-and-forget calls (notify, setStatus, setWidget, setWorkingMessage/Visible, setTitle,
 * setEditorText/pasteToEditor) go to the bridge, which makes each an observation for every follower.
 * Their text is made plain first (terminal-text.ts): extensions colour it for a terminal, with
 * `theme` — pi's own theme object, as pi's RPC mode hands it over — or with escapes of their own.
 * Terminal components are drawn when the bridge can show them (`ui.showTerminal`, terminal-components.ts):
 * `custom()` becomes a question with a live screen, widget, header and footer factories blocks of
 * ANSI lines beside the composer (their colours kept: the page draws them). What still needs a real
 * terminal (setEditorComponent, onTerminalInput, setTheme — and all of the above on a bridge that
 * cannot show components) keeps pi's RPC behaviour — undefined or a no-op — and the people watching
 * are told each time, as a warning toast (the same call again within TERMINAL_NOTICE_GAP_MS is only
 * logged, so an extension that calls on every turn does not flood them). The context is shared by
 * every extension, so it cannot name the one that called: the toast says "an extension".
 */
export function createExtensionUi(ui: UiBridge, log: RuntimeLogger): ExtensionUIContext {
  const origin: DialogOrigin = { kind: 'extension' }
  const ask = (spec: DialogSpec, opts?: ExtensionUIDialogOptions) =>
    askBridge(ui, { spec, origin, signal: opts?.signal, timeoutMs: timeoutOf(opts) }, log)
  /** A broken bridge must not break the extension that called it. */
  const tell = (what: string, call: () => void) => {
    try {
      call()
    } catch (error) {
      log.warn(`ui.${what} failed: ${errorText(error)}`)
    }
  }
  const notify = (message: string, level: NotifyLevel) => tell('notify', () => ui.notify(plainText(message), level))
  const toldAt = new Map<string, number>()
  const needsTerminal = (method: string) => {
    log.warn(`an extension called ui.${method}(), which needs a terminal; a web host cannot show it`)
    const now = Date.now()
    const last = toldAt.get(method)
    if (last !== undefined && now - last < TERMINAL_NOTICE_GAP_MS) return
    toldAt.set(method, now)
    notify(`An extension needs a terminal: it called ui.${method}(), which this web host cannot show.`, 'warning')
  }
  let working: WorkingState = { visible: true }
  const setWorking = (next: WorkingState) => {
    working = next
    tell('setWorking', () => ui.setWorking(next))
  }
  const setEditorText = (text: string) => tell('setEditorText', () => ui.setEditorText(text))
  const theme = piTheme()
  const statuses = new Map<string, string>()
  const widgets = ui.showTerminal
    ? new TerminalWidgets(ui, theme, log, () => ({
        getGitBranch: () => null,
        getExtensionStatuses: () => new Map(statuses),
        getAvailableProviderCount: () => 0,
        onBranchChange: () => () => {},
      }))
    : undefined

  const context: ExtensionUIContext = {
    async select(title, options, opts) {
      // Shown plain; the extension gets back the option exactly as it gave it.
      const shown = options.map(plainText)
      const value = answeredValue(await ask({ method: 'select', title: plainText(title), options: shown }, opts))
      return value === undefined ? undefined : (options[shown.indexOf(value)] ?? value)
    },
    async confirm(title, message, opts) {
      return answeredConfirm(await ask({ method: 'confirm', title: plainText(title), message: plainText(message) }, opts))
    },
    async input(title, placeholder, opts) {
      const spec: DialogSpec = { method: 'input', title: plainText(title), ...(placeholder !== undefined ? { placeholder: plainText(placeholder) } : {}) }
      return answeredValue(await ask(spec, opts))
    },
    // pi gives editor() no signal or timeout; the host settles it when the run is stopped.
    async editor(title, prefill) {
      const spec: DialogSpec = { method: 'editor', title: plainText(title), ...(prefill !== undefined ? { prefill } : {}) }
      return answeredValue(await ask(spec))
    },
    notify(message, type) {
      notify(message, type ?? 'info')
    },
    setStatus(key, text) {
      if (text === undefined) statuses.delete(key)
      else statuses.set(key, text)
      tell('setStatus', () => ui.setStatus(key, text === undefined ? undefined : plainText(text)))
    },
    // String arrays are drawn plain; a component factory is drawn as a terminal block where the bridge can.
    setWidget(key: string, content: unknown, options?: ExtensionWidgetOptions) {
      if (typeof content === 'function') return widgets ? widgets.set(key, content as never, options) : needsTerminal('setWidget')
      const lines = Array.isArray(content) ? content.map((line) => plainText(String(line))) : undefined
      const placement = options?.placement
      tell('setWidget', () => (placement ? ui.setWidget(key, lines, placement) : ui.setWidget(key, lines)))
    },
    setWorkingMessage(message) {
      setWorking(message !== undefined ? { message: plainText(message), visible: working.visible } : { visible: working.visible })
    },
    setWorkingVisible(visible) {
      setWorking({ ...working, visible })
    },
    setTitle(title) {
      tell('setTitle', () => ui.setTitle(plainText(title)))
    },
    // pi's RPC mode: paste delegates to setEditorText, without terminal paste handling.
    pasteToEditor: (text) => setEditorText(text),
    setEditorText: (text) => setEditorText(text),
    // pi's RPC mode answers "" here; the host knows what the tabs last reported.
    getEditorText: () => ui.editorText(),
    // custom() hands the extension a terminal component: drawn for every tab where the bridge can show it.
    async custom(factory, options) {
      if (!ui.showTerminal) {
        needsTerminal('custom')
        return undefined as never
      }
      return (await showCustom(ui as Parameters<typeof showCustom>[0], theme, log, factory as never, options)) as never
    },
    onTerminalInput: () => {
      needsTerminal('onTerminalInput')
      return () => {}
    },
    setFooter: (factory) => {
      if (widgets) widgets.footer(factory as never)
      else if (factory) needsTerminal('setFooter')
    },
    setHeader: (factory) => {
      if (widgets) widgets.header(factory as never)
      else if (factory) needsTerminal('setHeader')
    },
    setEditorComponent: (factory) => {
      if (factory) needsTerminal('setEditorComponent')
    },
    getEditorComponent: () => undefined,
    setWorkingIndicator: () => {},
    setHiddenThinkingLabel: () => {},
    addAutocompleteProvider: () => {},
    // pi's own theme, as its RPC mode gives it: extensions colour with it, the escapes are dropped above.
    get theme() {
      return theme
    },
    getAllThemes: () => [],
    getTheme: () => undefined,
    setTheme: () => {
      needsTerminal('setTheme')
      return { success: false, error: 'Themes are not supported by this host' }
    },
    getToolsExpanded: () => false,
    setToolsExpanded: () => {},
  }
  return context
}

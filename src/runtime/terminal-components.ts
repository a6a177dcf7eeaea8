/**
 * pi's terminal components for a host that draws them (`UiBridge.showTerminal`): `ctx.ui.custom()`
 * as a question whose screen every follower sees and one tab types into, and widget, header and
 * footer factories as blocks of ANSI-styled lines beside the composer. Each component lives in a
 * ComponentHost (terminal-host.ts); this file is the glue between pi's calls and the bridge.
 */
import type { ExtensionUIContext, ExtensionWidgetOptions, KeybindingsManager, Theme } from '@earendil-works/pi-coding-agent'
import { getKeybindings, type TUI } from '@earendil-works/pi-tui'
import { TERMINAL_COLS, TERMINAL_ROWS, type DialogOrigin, type WidgetPlacement } from '../schemas/index.js'
import type { UiBridge } from './port.js'
import { ComponentHost, type HostedComponent, type TerminalSize } from './terminal-host.js'

interface Log {
  warn(message: string): void
  error(message: string): void
}

type CustomOptions = Parameters<ExtensionUIContext['custom']>[1]
type Factory = (tui: TUI, theme: Theme, keybindings: KeybindingsManager, done: (result: unknown) => void) => HostedComponent | Promise<HostedComponent>

/** The widest a component may ask to be drawn (an overlay's `width`); 80 columns otherwise. */
const MAX_COLS = 200

function sizeFor(options: CustomOptions): TerminalSize {
  const overlay = typeof options?.overlayOptions === 'function' ? options.overlayOptions() : options?.overlayOptions
  const asked = overlay?.width
  const cols = typeof asked === 'number' && asked > 0 ? Math.min(Math.floor(asked), MAX_COLS) : TERMINAL_COLS
  return { cols, rows: TERMINAL_ROWS }
}

/**
 * `ctx.ui.custom(factory, options)`: resolves with the value the component gives `done`, or
 * `undefined` when its question ended any other way (stopped, cancelled, the thread went away) —
 * pi's cancel value. The factory runs only when the component's turn comes, so one drained from
 * the queue by a stop is never built. A factory that throws ends the question `cancelled` and
 * rejects, as a throwing factory does in pi.
 */
export async function showCustom(ui: UiBridge & Required<Pick<UiBridge, 'showTerminal'>>, theme: Theme, log: Log, factory: Factory, options: CustomOptions): Promise<unknown> {
  const origin: DialogOrigin = { kind: 'extension' }
  const size = sizeFor(options)
  let value: unknown
  let failure: { error: unknown } | undefined
  const resolution = await ui.showTerminal({
    origin,
    ...size,
    open(output) {
      const host = new ComponentHost({
        size,
        onScreen: (screen) => output.frame(screen),
        onError: (error) => log.error(`a terminal component failed: ${errorText(error)}`),
      })
      let finished = false
      const done = (result: unknown) => {
        if (finished) return
        finished = true
        value = result
        output.done()
      }
      const fail = (error: unknown) => {
        failure = { error }
        log.error(`ctx.ui.custom(): the component could not be built: ${errorText(error)}`)
        if (!finished) {
          finished = true
          output.cancel()
        }
      }
      try {
        // pi's own KeybindingsManager (app bindings) is not exported; pi-tui's carries the editor's and lists'.
        Promise.resolve(factory(host.tui, theme, getKeybindings() as KeybindingsManager, done)).then((c) => host.mount(c), fail)
      } catch (error) {
        fail(error)
      }
      options?.onHandle?.({
        hide: () => {},
        setHidden: () => {},
        isHidden: () => false,
        focus: () => {},
        unfocus: () => {},
        isFocused: () => true,
        getBounds: () => undefined,
      })
      return { input: (data) => host.input(data), close: () => host.dispose() }
    },
  })
  if (failure) throw failure.error
  return resolution.outcome === 'answered' ? value : undefined
}

type WidgetFactory = (tui: TUI, theme: Theme, footerData?: unknown) => HostedComponent

/**
 * Widgets, a header and a footer given as component factories: each built once in a host of its
 * own, drawn at 80 columns as ANSI lines through `setWidget` whenever it renders (coalesced as
 * any component's renders are). The header is pi's above-the-chat block and the footer its status
 * line: here they are the widgets `pi.header` (above the composer) and `pi.footer` (below it).
 */
export class TerminalWidgets {
  readonly #hosts = new Map<string, ComponentHost>()

  constructor(
    private readonly ui: UiBridge,
    private readonly theme: Theme,
    private readonly log: Log,
    /** What a footer factory reads (pi's ReadonlyFooterDataProvider). */
    private readonly footerData: () => unknown,
  ) {}

  set(key: string, factory: WidgetFactory | undefined, options?: ExtensionWidgetOptions): void {
    this.#hosts.get(key)?.dispose()
    this.#hosts.delete(key)
    const placement: WidgetPlacement | undefined = options?.placement
    if (!factory) return this.#show(key, undefined, placement)
    const host = new ComponentHost({
      size: { cols: TERMINAL_COLS, rows: TERMINAL_ROWS },
      onScreen: (screen) => this.#show(key, screen.lines, placement),
      onError: (error) => this.log.error(`widget ${key} failed: ${errorText(error)}`),
    })
    this.#hosts.set(key, host)
    try {
      host.mount(factory(host.tui, this.theme, key === FOOTER ? this.footerData() : undefined))
    } catch (error) {
      this.log.error(`widget ${key} could not be built: ${errorText(error)}`)
      host.dispose()
      this.#hosts.delete(key)
    }
  }

  header(factory: WidgetFactory | undefined): void {
    this.set(HEADER, factory, { placement: 'aboveEditor' })
  }

  footer(factory: WidgetFactory | undefined): void {
    this.set(FOOTER, factory, { placement: 'belowEditor' })
  }

  #show(key: string, lines: string[] | undefined, placement: WidgetPlacement | undefined): void {
    try {
      if (placement) this.ui.setWidget(key, lines, placement)
      else this.ui.setWidget(key, lines)
    } catch (error) {
      this.log.warn(`ui.setWidget failed: ${errorText(error)}`)
    }
  }
}

export const HEADER = 'pi.header'
export const FOOTER = 'pi.footer'

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

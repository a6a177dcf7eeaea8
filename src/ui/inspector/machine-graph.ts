/**
 * One machine drawn as a statechart (SVG): its active states filled, the transitions just taken
 * drawn bold in the accent colour. The layout is computed once per machine and reused for every
 * state the page shows, so stepping through history only repaints classes.
 */
import { LitElement, css, html, svg, nothing } from 'lit'
import { customElement, property, state } from 'lit/decorators.js'
import { tokens } from '../styles.js'
import { loadElk } from './elk.js'
import { activeStateIds } from '../../shared/xstate-internals.js'
import { layoutMachine, transitionLabel, type Drawing, type DrawnEdge, type DrawnState } from './layout.js'
import type { MachineInfo } from './types.js'

const drawings = new WeakMap<MachineInfo, Promise<Drawing>>()

function drawingOf(machine: MachineInfo): Promise<Drawing> {
  let drawing = drawings.get(machine)
  if (!drawing) {
    drawing = loadElk().then((elk) => layoutMachine(elk, machine))
    drawings.set(machine, drawing)
  }
  return drawing
}

@customElement('machine-graph')
export class MachineGraph extends LitElement {
  @property({ attribute: false }) machine?: MachineInfo
  @property({ attribute: false }) value: unknown = null
  /** Keys (diagram.ts) of the transitions taken by the step shown. */
  @property({ attribute: false }) taken: string[] = []
  @property() status = 'active'

  @state() private drawing?: Drawing
  @state() private error = ''
  #for?: MachineInfo

  static override styles = [
    tokens,
    css`
      :host {
        display: block;
        overflow: auto;
      }
      svg {
        display: block;
        font-family: var(--th-font);
        font-size: 12px;
      }
      .state rect {
        fill: var(--th-bg);
        stroke: var(--th-border);
        stroke-width: 1.5;
      }
      .state.compound > rect {
        fill: var(--th-bg-soft);
      }
      .state.root > rect {
        fill: transparent;
        stroke-dasharray: 4 3;
      }
      .state.active > rect {
        stroke: var(--th-accent);
        stroke-width: 2.5;
      }
      .state.active:not(.compound) > rect {
        fill: var(--th-accent-soft);
      }
      .state.done.active > rect {
        stroke: var(--th-ok);
      }
      .state .name {
        font-weight: 600;
        fill: var(--th-fg);
      }
      .state .internal {
        fill: var(--th-fg-soft);
        font-size: 11px;
      }
      .state .internal.taken {
        fill: var(--th-accent);
        font-weight: 700;
      }
      .edge path {
        fill: none;
        stroke: var(--th-fg-soft);
        stroke-width: 1.2;
      }
      .edge text {
        fill: var(--th-fg-soft);
        font-size: 11px;
      }
      .edge.taken path {
        stroke: var(--th-accent);
        stroke-width: 3;
      }
      .edge.taken text {
        fill: var(--th-accent);
        font-weight: 700;
      }
      .initial {
        fill: var(--th-fg);
      }
      marker path {
        fill: var(--th-fg-soft);
      }
      marker.taken path {
        fill: var(--th-accent);
      }
      .note {
        color: var(--th-fg-soft);
        padding: 1rem;
      }
    `,
  ]

  protected override willUpdate(): void {
    const machine = this.machine
    if (machine === this.#for) return
    this.#for = machine
    this.drawing = undefined
    this.error = ''
    if (!machine) return
    drawingOf(machine).then(
      (d) => {
        if (this.machine === machine) this.drawing = d
      },
      (e: Error) => {
        if (this.machine === machine) this.error = `The machine could not be laid out: ${e.message}`
      },
    )
  }

  override render() {
    if (this.error) return html`<p class="note">${this.error}</p>`
    const d = this.drawing
    if (!this.machine || !d) return html`<p class="note">Laying out…</p>`
    const active = activeStateIds(this.machine.definition, this.value)
    const taken = new Set(this.taken)
    const activeList = [...active].filter((id) => id !== this.machine!.definition.id).join(', ') || 'none'
    return html`
      <svg
        role="img"
        aria-label=${`${this.machine.machineId} machine; active: ${activeList}`}
        width=${d.width}
        height=${d.height}
        viewBox="0 0 ${d.width} ${d.height}"
      >
        <defs>
          <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
            <path d="M0,0 L10,5 L0,10 z"></path>
          </marker>
          <marker id="arrow-taken" class="taken" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" orient="auto-start-reverse">
            <path d="M0,0 L10,5 L0,10 z"></path>
          </marker>
        </defs>
        ${d.states.map((s) => this.#state(s, active, taken))} ${d.edges.map((e) => this.#edge(e, taken))}
      </svg>
    `
  }

  #state(s: DrawnState, active: Set<string>, taken: Set<string>) {
    const classes = ['state', s.compound ? 'compound' : '', s.depth === 0 ? 'root' : '', active.has(s.id) ? 'active' : '', this.status === 'done' ? 'done' : '']
    const final = s.type === 'final'
    return svg`<g class=${classes.join(' ')} data-state=${s.id}>
      <rect x=${s.x} y=${s.y} width=${s.width} height=${s.height} rx=${s.compound ? 10 : 8}></rect>
      ${final ? svg`<rect x=${s.x + 3} y=${s.y + 3} width=${s.width - 6} height=${s.height - 6} rx="6"></rect>` : nothing}
      <text class="name" x=${s.x + 8} y=${s.y + 17}>${s.depth === 0 ? `${s.key} (machine)` : s.key}</text>
      ${s.internal.map(
        (t, i) =>
          svg`<text class="internal ${taken.has(t.key) ? 'taken' : ''}" x=${s.x + 8} y=${s.y + 33 + i * 15}>↻ ${transitionLabel(t)}</text>`,
      )}
    </g>`
  }

  #edge(e: DrawnEdge, taken: Set<string>) {
    if (e.initial) {
      const [start, ...rest] = e.points
      return svg`<g class="edge"><circle class="initial" cx=${start.x} cy=${start.y} r="4"></circle>
        <path d=${path([start, ...rest])} marker-end="url(#arrow)"></path></g>`
    }
    const isTaken = taken.has(e.key)
    return svg`<g class="edge ${isTaken ? 'taken' : ''}" data-transition=${e.key}>
      <path d=${path(e.points)} marker-end=${isTaken ? 'url(#arrow-taken)' : 'url(#arrow)'}></path>
      ${e.labelAt ? svg`<text x=${e.labelAt.x} y=${e.labelAt.y + 11}>${e.label}</text>` : nothing}
    </g>`
  }
}

const path = (points: { x: number; y: number }[]) => points.map((p, i) => `${i ? 'L' : 'M'}${p.x},${p.y}`).join(' ')

declare global {
  interface HTMLElementTagNameMap {
    'machine-graph': MachineGraph
  }
}

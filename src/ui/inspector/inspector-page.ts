/**
 * `#/inspect`: every thread, dialog and ask-queue machine, live, with its recorded history.
 *
 * The tree comes from /api/debug/actors and is refreshed when an actor starts or stops; state
 * values in between come straight from the snapshot records. The page holds the record stream open
 * only while it is shown, because the server records nothing while no inspector is connected.
 */
import { LitElement, css, html, nothing } from 'lit'
import { customElement, property, state } from 'lit/decorators.js'
import { controls, tokens } from '../styles.js'
import './actor-tree.js'
import { shortId, stateText } from './actor-tree.js'
import './event-log.js'
import { RecordHistory } from './history.js'
import { inspectorApi as defaultApi, type InspectorApi } from './inspector-api.js'
import './machine-graph.js'
import type { ActorNode, InspectionRecord, MachineInfo } from './types.js'

/** `#/inspect/<actorId>` preselects an actor; `#/inspect?thread=<id>` preselects a thread. */
export function actorFromHash(hash: string): string {
  const m = /^#\/inspect(?:\/([^?]+))?(?:\?thread=([^&]+))?/.exec(hash)
  if (!m) return ''
  try {
    if (m[1]) return decodeURIComponent(m[1])
    if (m[2]) return `thread:${decodeURIComponent(m[2])}`
  } catch {
    // a malformed hash selects nothing
  }
  return ''
}

@customElement('inspector-page')
export class InspectorPage extends LitElement {
  @property({ attribute: false }) api: InspectorApi = defaultApi

  @state() private threads: ActorNode[] = []
  @state() private selected = actorFromHash(location.hash)
  /** The history entry shown; 0 follows live. */
  @state() private chosen = 0
  @state() private machine?: MachineInfo
  @state() private error = ''
  @state() private connected = false
  @state() private revision = 0
  /** The server's actor forest was read at least once: an actor it does not hold has no machine running. */
  @state() private actorsLoaded = false

  readonly #history = new RecordHistory()
  readonly #machines = new Map<string, Promise<MachineInfo>>()
  #source?: EventSource
  #refresh?: ReturnType<typeof setTimeout>

  static override styles = [
    tokens,
    controls,
    css`
      :host {
        display: grid;
        grid-template-rows: auto 1fr;
        height: 100%;
        min-height: 0;
        background: var(--th-bg);
      }
      header {
        display: flex;
        align-items: center;
        gap: 0.75rem;
        padding: 0.6rem 1rem;
        border-bottom: 1px solid var(--th-border);
      }
      header h1 {
        font-size: 1rem;
        margin: 0;
      }
      header a {
        color: var(--th-accent);
        font-size: 0.875rem;
      }
      .badge {
        font-size: 0.75rem;
        color: var(--th-fg-soft);
        margin-left: auto;
      }
      .badge.on::before {
        content: '● ';
        color: var(--th-ok);
      }
      .body {
        display: grid;
        grid-template-columns: 17rem 1fr 22rem;
        min-height: 0;
      }
      actor-tree {
        border-right: 1px solid var(--th-border);
        min-height: 0;
      }
      .center {
        display: grid;
        grid-template-rows: auto 1fr auto;
        min-width: 0;
        min-height: 0;
      }
      .caption {
        display: flex;
        gap: 0.75rem;
        align-items: baseline;
        padding: 0.6rem 1rem;
        flex-wrap: wrap;
      }
      .caption h2 {
        font-size: 0.95rem;
        margin: 0;
      }
      .caption .value {
        font-family: var(--th-mono);
        color: var(--th-accent);
      }
      .caption .when {
        color: var(--th-fg-soft);
        font-size: 0.8rem;
      }
      machine-graph {
        min-height: 0;
        padding: 0 1rem 1rem;
      }
      .context {
        border-top: 1px solid var(--th-border);
        max-height: 12rem;
        overflow: auto;
        margin: 0;
        padding: 0.5rem 1rem;
        font-family: var(--th-mono);
        font-size: 0.75rem;
        background: var(--th-bg-soft);
        white-space: pre-wrap;
      }
      aside {
        border-left: 1px solid var(--th-border);
        display: flex;
        flex-direction: column;
        min-height: 0;
      }
      aside h2 {
        font-size: 0.8rem;
        margin: 0;
        padding: 0.6rem 0.75rem 0.3rem;
        display: flex;
        justify-content: space-between;
        align-items: center;
      }
      event-log {
        flex: 1;
      }
      .note {
        color: var(--th-fg-soft);
        padding: 2rem;
      }
      .error {
        color: var(--th-danger);
        background: var(--th-danger-soft);
        padding: 0.5rem 1rem;
        margin: 0;
      }
      @media (max-width: 1000px) {
        .body {
          grid-template-columns: 1fr;
          grid-auto-rows: minmax(12rem, auto);
          overflow: auto;
        }
      }
    `,
  ]

  override connectedCallback(): void {
    super.connectedCallback()
    this.#connect()
    void this.#loadActors()
    window.addEventListener('hashchange', this.#onHash)
    this.addEventListener('select-actor', this.#onSelect as EventListener)
    this.addEventListener('choose-record', this.#onChoose as EventListener)
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback()
    this.#source?.close()
    this.#source = undefined
    clearTimeout(this.#refresh)
    window.removeEventListener('hashchange', this.#onHash)
  }

  #connect(): void {
    const source = new EventSource(this.api.eventsUrl())
    this.#source = source
    source.addEventListener('open', () => (this.connected = true))
    source.addEventListener('error', () => {
      this.connected = false
      // A 401 or 404 closes the stream for good; say why instead of spinning.
      if (source.readyState === EventSource.CLOSED) void this.#loadActors()
    })
    source.addEventListener('record', (e) => this.#onRecord(JSON.parse((e as MessageEvent<string>).data) as InspectionRecord))
    source.addEventListener('ready', () => this.revision++)
  }

  #onRecord(record: InspectionRecord): void {
    if (!this.#history.add(record)) return
    if (record.kind === 'actor.started' || record.kind === 'actor.stopped') this.#scheduleRefresh()
    if (record.kind === 'snapshot') this.threads = withValue(this.threads, record.actorId, record.value)
    if (!this.selected && record.kind === 'actor.started' && !record.parentId) this.#select(record.actorId)
    this.revision++
  }

  #scheduleRefresh(): void {
    clearTimeout(this.#refresh)
    this.#refresh = setTimeout(() => void this.#loadActors(), 120)
  }

  async #loadActors(): Promise<void> {
    try {
      this.threads = await this.api.actors()
      this.actorsLoaded = true
      this.error = ''
      if (!this.selected && this.threads[0]) this.#select(this.threads[0].actorId)
      else if (this.selected && !this.machine) this.#select(this.selected)
    } catch (err) {
      this.error = (err as Error).message
    }
  }

  #select(actorId: string): void {
    this.selected = actorId
    this.chosen = 0
    const machineId = this.#history.meta(actorId)?.machineId ?? findNode(this.threads, actorId)?.machineId
    if (!machineId) return
    if (this.machine?.machineId === machineId) return
    this.machine = undefined
    let loading = this.#machines.get(machineId)
    if (!loading) {
      loading = this.api.machine(machineId)
      this.#machines.set(machineId, loading)
    }
    loading.then(
      (m) => {
        if (this.#machineIdOf(this.selected) === machineId) this.machine = m
      },
      (err: Error) => {
        this.#machines.delete(machineId)
        this.error = err.message
      },
    )
  }

  #machineIdOf(actorId: string): string | undefined {
    return this.#history.meta(actorId)?.machineId ?? findNode(this.threads, actorId)?.machineId
  }

  #onSelect = (e: CustomEvent<string>) => this.#select(e.detail)

  #onChoose = (e: CustomEvent<number>) => {
    this.chosen = e.detail
  }

  #onHash = () => {
    const actor = actorFromHash(location.hash)
    if (actor && actor !== this.selected) this.#select(actor)
  }

  override render() {
    void this.revision
    // A fresh array each render: the history appends in place, and lit compares by identity.
    const records = this.selected ? [...this.#history.records(this.selected)] : []
    const shown = this.chosen ? this.#history.stateAfter(this.selected, this.chosen) : this.#history.latest(this.selected)
    const live = findNode(this.threads, this.selected)
    const value = shown?.value ?? live?.value ?? null
    const status = shown?.status ?? live?.status ?? 'active'
    const machineId = this.#machineIdOf(this.selected)
    const name = this.selected.includes('/') ? `${shortId(this.selected)} in ${this.selected.split('/')[0]}` : this.selected
    return html`
      <header>
        <h1>Machine inspector</h1>
        <a href="#/">Back to threads</a>
        <span class="badge ${this.connected ? 'on' : ''}" role="status">${this.connected ? 'Recording' : 'Not connected'}</span>
      </header>
      ${this.error ? html`<p class="error" role="alert">${this.error}</p>` : nothing}
      <div class="body">
        <actor-tree .threads=${this.threads} .stopped=${this.#history.stopped()} .selected=${this.selected}></actor-tree>
        <section class="center" aria-label="Statechart">
          ${this.selected
            ? html`<div class="caption">
                  <h2>${machineId ?? 'machine'} · ${name}</h2>
                  <span class="value" data-testid="state-value">${stateText(value)}${status !== 'active' ? ` (${status})` : ''}</span>
                  <span class="when">${this.chosen ? `as it was after entry #${this.chosen}` : live ? 'live' : 'last recorded'}</span>
                  ${this.chosen ? html`<button class="ghost" @click=${() => (this.chosen = 0)}>Follow live</button>` : nothing}
                </div>
                ${!machineId && this.actorsLoaded
                  ? html`<p class="note" role="status">
                      Nothing to draw yet: ${name} has no machine running. A thread's machines start with its
                      runtime — when it is sent a message — and appear here live.
                    </p>`
                  : html`<machine-graph tabindex="0" .machine=${this.machine} .value=${value} .taken=${shown?.transitions ?? []} status=${status}></machine-graph>`}
                <pre class="context" aria-label="Context digest">${shown ? JSON.stringify(shown.context, null, 2) : 'No recorded snapshot yet.'}</pre>`
            : html`<p class="note">Pick an actor on the left.</p>`}
        </section>
        <aside aria-label="Event log">
          <h2>Events and states <span class="when">${records.length} recorded</span></h2>
          <event-log .records=${records} chosen=${this.chosen}></event-log>
        </aside>
      </div>
    `
  }
}

function findNode(nodes: ActorNode[], actorId: string): ActorNode | undefined {
  for (const n of nodes) {
    if (n.actorId === actorId) return n
    const found = findNode(n.children, actorId)
    if (found) return found
  }
  return undefined
}

function withValue(nodes: ActorNode[], actorId: string, value: unknown): ActorNode[] {
  if (!findNode(nodes, actorId)) return nodes
  return nodes.map((n) =>
    n.actorId === actorId ? { ...n, value: value as ActorNode['value'] } : { ...n, children: withValue(n.children, actorId, value) },
  )
}

declare global {
  interface HTMLElementTagNameMap {
    'inspector-page': InspectorPage
  }
}

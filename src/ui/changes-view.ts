/**
 * The "Changes" panel of a thread: what each run changed in the workspace (from the view's
 * `changes`, so every tab updates live), a run's or the whole thread's unified diff on demand, and
 * Revert / Redo — each asked first, with the files it will restore listed. The server decides and
 * refuses (a run in flight, a file changed since); the panel shows its words.
 */
import { LitElement, css, html, nothing } from 'lit'
import { customElement, property, state } from 'lit/decorators.js'
import type { ChangesReport, FileChange, ThreadChanges } from '../schemas/index.js'
import { describeError } from './api.js'
import { tokens, controls } from './styles.js'

/** What the panel needs of the server. */
export interface ChangesApi {
  runChanges(id: string, run: number): Promise<ChangesReport>
  threadChanges(id: string): Promise<ChangesReport>
  revert(id: string, toRun: number): Promise<unknown>
  redo(id: string): Promise<unknown>
}

type Shown = { kind: 'run'; run: number } | { kind: 'thread' }
type Asking = { action: 'revert'; run: number; files: string[] } | { action: 'redo'; files: string[] }

const count = (files: FileChange[]) => `${files.length} ${files.length === 1 ? 'file' : 'files'}`

@customElement('changes-view')
export class ChangesView extends LitElement {
  @property({ attribute: 'thread-id' }) threadId = ''
  @property({ attribute: false }) changes: ThreadChanges | undefined
  @property({ type: Boolean }) busy = false
  @property({ attribute: false }) api: ChangesApi | undefined

  @state() private shown: Shown | undefined
  @state() private report: ChangesReport | undefined
  @state() private asking: Asking | undefined
  @state() private error = ''
  @state() private working = false

  static override styles = [
    tokens,
    controls,
    css`
      :host { display: block; }
      details { border: 1px solid var(--th-border); border-radius: var(--th-radius); background: var(--th-bg-soft); margin: 8px 0; }
      summary { cursor: pointer; padding: 8px 12px; font-weight: 600; }
      .runs { list-style: none; margin: 0; padding: 0 12px 8px; display: grid; gap: 4px; }
      .runs li { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; }
      .runs .label { flex: 1; min-width: 8em; }
      .reverted .label { text-decoration: line-through; color: var(--th-fg-soft); }
      .untracked { color: var(--th-warn); font-size: 0.85em; }
      .ask, .error { margin: 0 12px 8px; padding: 8px; border-radius: 8px; }
      .ask { background: var(--th-warn-soft); }
      .error { background: var(--th-danger-soft); color: var(--th-danger); }
      .ask ul { margin: 4px 0; padding-left: 1.2em; font-family: var(--th-mono); font-size: 0.85em; }
      .diff { margin: 0 12px 12px; }
      .file { border: 1px solid var(--th-border); border-radius: 8px; margin-top: 8px; overflow: hidden; background: var(--th-bg); }
      .file header { padding: 4px 8px; font-family: var(--th-mono); font-size: 0.85em; background: var(--th-bg-sunk); }
      pre { margin: 0; padding: 4px 0; overflow-x: auto; font-family: var(--th-mono); font-size: 0.8em; line-height: 1.4; }
      pre span { display: block; padding: 0 8px; white-space: pre; }
      .add { background: var(--th-ok-soft); color: var(--th-ok); }
      .del { background: var(--th-danger-soft); color: var(--th-danger); }
      .hunk { color: var(--th-accent); }
      .meta { color: var(--th-fg-soft); }
    `,
  ]

  protected override willUpdate(changed: Map<string, unknown>): void {
    // A run's summary changed (a revert, a redo, a new run): the diff shown is read again.
    if (changed.has('changes') && this.shown && changed.get('changes') !== undefined) void this.#load(this.shown)
  }

  override render() {
    const runs = Object.entries(this.changes?.runs ?? {})
      .map(([run, summary]) => ({ run: Number(run), ...summary }))
      .sort((a, b) => a.run - b.run)
    if (runs.length === 0) return nothing
    const files = new Set(runs.filter((r) => !r.reverted).flatMap((r) => r.files.map((f) => f.path)))
    return html`<details>
      <summary>Changes · ${files.size} ${files.size === 1 ? 'file' : 'files'}</summary>
      <ul class="runs" aria-label="Changes by run">
        ${runs.map(
          (r) => html`<li class=${r.reverted ? 'reverted' : ''} data-run=${r.run}>
            <span class="label">Run ${r.run} · ${count(r.files)}${r.reverted ? ' · reverted' : ''}
              ${r.untracked ? html`<span class="untracked" title=${r.untracked}>· not all tracked</span>` : nothing}</span>
            <button class="ghost" @click=${() => this.#show({ kind: 'run', run: r.run })}>Diff</button>
            ${r.reverted
              ? nothing
              : html`<button ?disabled=${this.busy || this.working} @click=${() => this.#ask('revert', r.run)}>Revert</button>`}
          </li>`,
        )}
        <li>
          <span class="label"></span>
          <button class="ghost" @click=${() => this.#show({ kind: 'thread' })}>Whole thread</button>
          ${this.changes?.canRedo
            ? html`<button ?disabled=${this.busy || this.working} @click=${() => this.#ask('redo')}>Redo</button>`
            : nothing}
        </li>
      </ul>
      ${this.asking ? this.#confirmation(this.asking) : nothing}
      ${this.error ? html`<div class="error" role="alert">${this.error}</div>` : nothing}
      ${this.report ? this.#diff(this.report) : nothing}
    </details>`
  }

  #confirmation(asking: Asking) {
    const what = asking.action === 'revert' ? `Revert run ${asking.run} and every later run?` : 'Redo the last revert?'
    return html`<div class="ask" role="alertdialog" aria-label=${what}>
      <strong>${what}</strong> These files will be restored:
      <ul>${asking.files.map((f) => html`<li>${f}</li>`)}</ul>
      <button class="primary" ?disabled=${this.working} @click=${() => this.#confirm(asking)}>${asking.action === 'revert' ? 'Revert' : 'Redo'}</button>
      <button ?disabled=${this.working} @click=${() => (this.asking = undefined)}>Cancel</button>
    </div>`
  }

  #diff(report: ChangesReport) {
    return html`<div class="diff" aria-label=${report.run ? `Diff of run ${report.run}` : 'Diff of the thread'}>
      ${report.untracked ? html`<div class="untracked">${report.untracked}</div>` : nothing}
      ${report.files.length === 0 ? html`<div class="meta">No changes.</div>` : nothing}
      ${report.files.map(
        (f) => html`<div class="file" data-file=${f.path}>
          <header>${f.status} · ${f.path}${f.binary ? ' · binary' : ` · +${f.added} −${f.removed}`}</header>
          ${f.patch ? html`<pre>${f.patch.split('\n').map((line) => html`<span class=${lineClass(line)}>${line}</span>`)}</pre>` : nothing}
          ${f.truncated ? html`<div class="meta">… the diff is cut here</div>` : nothing}
        </div>`,
      )}
    </div>`
  }

  async #show(shown: Shown): Promise<void> {
    this.shown = shown
    await this.#load(shown)
  }

  async #load(shown: Shown): Promise<void> {
    if (!this.api) return
    try {
      this.report = shown.kind === 'run' ? await this.api.runChanges(this.threadId, shown.run) : await this.api.threadChanges(this.threadId)
      this.error = ''
    } catch (err) {
      this.report = undefined
      this.error = describeError(err)
    }
  }

  /** The files a revert to `run` restores: those of that run and every later one not reverted. */
  #ask(action: 'revert' | 'redo', run?: number): void {
    const runs = Object.entries(this.changes?.runs ?? {}).map(([n, s]) => ({ run: Number(n), ...s }))
    const chosen = action === 'revert' ? runs.filter((r) => r.run >= run! && !r.reverted) : runs.filter((r) => r.reverted)
    const files = [...new Set(chosen.flatMap((r) => r.files.map((f) => f.path)))].sort()
    this.error = ''
    this.asking = action === 'revert' ? { action, run: run!, files } : { action, files }
  }

  async #confirm(asking: Asking): Promise<void> {
    if (!this.api) return
    this.working = true
    try {
      if (asking.action === 'revert') await this.api.revert(this.threadId, asking.run)
      else await this.api.redo(this.threadId)
      this.asking = undefined
    } catch (err) {
      // A conflict's words name the files changed since; nothing was written.
      this.error = describeError(err)
    } finally {
      this.working = false
    }
  }
}

function lineClass(line: string): string {
  if (line.startsWith('+++') || line.startsWith('---') || line.startsWith('diff --git') || line.startsWith('index ')) return 'meta'
  if (line.startsWith('+')) return 'add'
  if (line.startsWith('-')) return 'del'
  if (line.startsWith('@@')) return 'hunk'
  return ''
}

declare global {
  interface HTMLElementTagNameMap {
    'changes-view': ChangesView
  }
}

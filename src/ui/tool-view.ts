/**
 * Tool calls drawn for a person, as pi's terminal UI draws them: `bash` as the command (code) and
 * its output as terminal text, `read` as the path and a file excerpt, `edit` as a diff of each
 * oldText → newText, `write` as the path and the file's content. Any other tool shows its arguments
 * and its result. Each is a `<details>`, collapsed to its one-line summary (as pi's rows are until Ctrl+O)
 * unless the person opened tool output or the call failed; output longer than FOLD_LINES is folded
 * ("Show all N lines"): bash keeps its last lines (where the answer usually is), files their first.
 */
import { html, nothing, type TemplateResult } from 'lit'
import { unsafeHTML } from 'lit/directives/unsafe-html.js'
import type { ToolResult, TranscriptEntry } from '../schemas/index.js'
import { highlight, languageOfPath } from './highlight.js'

export type ToolEntry = Extract<TranscriptEntry, { kind: 'tool' }>

export const FOLD_LINES = 12

export interface ToolViewOptions {
  /** The follow is down: a running tool's state is not known. */
  offline: boolean
  /** Whether the person unfolded this tool's long output. */
  expanded: boolean
  toggleExpanded: () => void
  /** The row shows its body: tool output is opened (Ctrl+O), or the call failed. */
  open: boolean
  /** When the tool started (pi's time, else when this tab saw it start). */
  time?: TemplateResult | typeof nothing
}

type Args = Record<string, unknown>
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined)

function pretty(v: unknown): string {
  try {
    return typeof v === 'string' ? v : JSON.stringify(v, null, 2)
  } catch {
    return String(v)
  }
}

function argsPreview(args: unknown): string {
  if (args === undefined || args === null) return ''
  const s = typeof args === 'string' ? args : JSON.stringify(args)
  return s.length > 80 ? `${s.slice(0, 79)}…` : s
}

/** The edits an `edit` call makes: pi 1.x sends `edits: [{oldText, newText}]`; older calls one pair. */
export function editsOf(args: Args): { oldText: string; newText: string }[] {
  if (Array.isArray(args.edits)) {
    return args.edits.flatMap((e) => {
      const o = str((e as Args)?.oldText)
      const n = str((e as Args)?.newText)
      return o !== undefined && n !== undefined ? [{ oldText: o, newText: n }] : []
    })
  }
  const o = str(args.oldText)
  const n = str(args.newText)
  return o !== undefined && n !== undefined ? [{ oldText: o, newText: n }] : []
}

export interface DiffLine {
  op: ' ' | '-' | '+'
  text: string
}

/** A line diff (longest common subsequence); big inputs fall back to "all removed, all added". */
export function lineDiff(before: string, after: string): DiffLine[] {
  const a = before.split('\n')
  const b = after.split('\n')
  if (a.length * b.length > 250_000) return [...a.map((text) => ({ op: '-' as const, text })), ...b.map((text) => ({ op: '+' as const, text }))]
  const lcs: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0))
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1])
  }
  const out: DiffLine[] = []
  let i = 0
  let j = 0
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      out.push({ op: ' ', text: a[i] })
      i++
      j++
    } else if (lcs[i + 1][j] >= lcs[i][j + 1]) out.push({ op: '-', text: a[i++] })
    else out.push({ op: '+', text: b[j++] })
  }
  while (i < a.length) out.push({ op: '-', text: a[i++] })
  while (j < b.length) out.push({ op: '+', text: b[j++] })
  return out
}

/** Long text folded to FOLD_LINES: the first lines, or the last (`tail`), and how many were left out. */
export function fold(text: string, expanded: boolean, tail: boolean): { shown: string; total: number; hidden: number } {
  const lines = text.replace(/\n$/, '').split('\n')
  if (expanded || lines.length <= FOLD_LINES) return { shown: text, total: lines.length, hidden: 0 }
  const kept = tail ? lines.slice(-FOLD_LINES) : lines.slice(0, FOLD_LINES)
  return { shown: kept.join('\n'), total: lines.length, hidden: lines.length - FOLD_LINES }
}

function foldButton(total: number, hidden: number, o: ToolViewOptions) {
  if (hidden === 0 && !o.expanded) return nothing
  if (total <= FOLD_LINES) return nothing
  return html`<button type="button" class="ghost fold" aria-expanded=${o.expanded ? 'true' : 'false'} @click=${o.toggleExpanded}>
    ${o.expanded ? 'Show fewer lines' : `Show all ${total} lines`}
  </button>`
}

/** Text as code: coloured when the language is known and the highlighter is loaded. */
function codeText(text: string, language: string | undefined) {
  const coloured = language ? highlight(text, language) : undefined
  return coloured === undefined ? text : unsafeHTML(coloured)
}

const hasOutput = (r: ToolResult) => r.text !== '' || r.truncated !== undefined || (r.images?.length ?? 0) > 0 || r.details !== undefined

/** What the host left out (cut characters, images), said rather than hidden. */
function leftOut(r: ToolResult) {
  return html`${r.truncated ? html`<p class="tool-note">… ${r.truncated} more characters not shown.</p>` : nothing}
  ${(r.images ?? []).map((i) => html`<p class="tool-note image">[image: ${i.mimeType}, not shown]</p>`)}`
}

/**
 * The output as the feed carries it, folded: preformatted text (terminal text, not Markdown), then
 * what was left out. Details are shown only when there is nothing else: they are for renderers.
 */
function output(r: ToolResult, o: ToolViewOptions, opts: { tail: boolean; language?: string; cls?: string }) {
  const images = r.images ?? []
  const showDetails = r.text === '' && images.length === 0 && r.details !== undefined
  const f = fold(r.text, o.expanded, opts.tail)
  const earlier = f.hidden > 0 && opts.tail ? html`<p class="tool-note">… ${f.hidden} earlier lines</p>` : nothing
  const later = f.hidden > 0 && !opts.tail ? html`<p class="tool-note">… ${f.hidden} more lines</p>` : nothing
  return html`${r.text !== '' || r.truncated
      ? html`${earlier}<pre class="output ${opts.cls ?? ''}" tabindex="0" role="region" aria-label="Output">${codeText(f.shown, opts.language)}</pre>${later}${foldButton(f.total, f.hidden, o)}`
      : nothing}
    ${leftOut(r)} ${showDetails ? html`<pre class="output details" tabindex="0" role="region" aria-label="Details">${pretty(r.details)}</pre>` : nothing}`
}

function stateBadge(e: ToolEntry, o: ToolViewOptions) {
  const unknown = e.state === 'running' && o.offline
  const label = unknown ? 'unknown' : e.state === 'running' ? 'running' : e.state === 'done' ? 'done' : 'error'
  return html`<span
    class="state ${unknown ? 'unknown' : e.state}"
    title=${unknown ? 'The connection is down: whether it is still running is known again once it is back.' : ''}
    >${label}</span
  >`
}

export function renderTool(e: ToolEntry, o: ToolViewOptions): TemplateResult {
  const args = (e.args && typeof e.args === 'object' ? e.args : {}) as Args
  const out = e.state === 'running' ? e.partial : e.result
  const heading = e.state === 'running' ? 'Progress' : 'Result'
  const path = str(args.path) ?? str(args.file_path)
  let kind = 'generic'
  let what: TemplateResult | string = argsPreview(e.args)
  let body: TemplateResult
  if (e.name === 'bash' && str(args.command) !== undefined) {
    kind = 'bash'
    what = html`<code class="command">$ ${str(args.command)}</code>`
    body = html`${out && hasOutput(out)
      ? html`<h3>${heading}</h3>${output(out, o, { tail: true, cls: 'terminal' })}`
      : e.state === 'done'
        ? html`<p class="tool-note">(no output)</p>`
        : nothing}`
  } else if (e.name === 'read' && path !== undefined) {
    kind = 'read'
    const range = [args.offset !== undefined ? `from line ${String(args.offset)}` : '', args.limit !== undefined ? `${String(args.limit)} lines` : '']
      .filter(Boolean)
      .join(', ')
    what = html`<code class="path">${path}</code>${range ? html` <span class="range">(${range})</span>` : nothing}`
    body = html`${out && hasOutput(out)
      ? html`<h3>${heading}</h3>${output(out, o, { tail: false, language: e.state === 'error' ? undefined : languageOfPath(path), cls: 'file' })}`
      : nothing}`
  } else if (e.name === 'write' && path !== undefined && str(args.content) !== undefined) {
    kind = 'write'
    const content = str(args.content)!
    what = html`<code class="path">${path}</code>`
    const f = fold(content, o.expanded, false)
    body = html`<h3>Content</h3>
      <pre class="output file content" tabindex="0" role="region" aria-label="Content">${codeText(f.shown, languageOfPath(path))}</pre>
      ${f.hidden > 0 ? html`<p class="tool-note">… ${f.hidden} more lines</p>` : nothing} ${foldButton(f.total, f.hidden, o)}
      ${out && hasOutput(out) ? html`<h3>${heading}</h3>${output(out, o, { tail: false })}` : nothing}`
  } else if (e.name === 'edit' && path !== undefined && editsOf(args).length > 0) {
    kind = 'edit'
    const edits = editsOf(args)
    what = html`<code class="path">${path}</code>${edits.length > 1 ? html` <span class="range">(${edits.length} edits)</span>` : nothing}`
    const lines = edits.flatMap((x, i) => [...(i > 0 ? [{ op: ' ' as const, text: '…' }] : []), ...lineDiff(x.oldText, x.newText)])
    const shown = o.expanded || lines.length <= FOLD_LINES * 2 ? lines : lines.slice(0, FOLD_LINES * 2)
    const removed = lines.filter((l) => l.op === '-').length
    const added = lines.filter((l) => l.op === '+').length
    body = html`<h3>Diff</h3>
      <pre class="output diff" tabindex="0" role="region" aria-label=${`Diff: ${removed} line${removed === 1 ? '' : 's'} removed, ${added} added`}>${shown.map(
        (l) => html`<span class="line ${l.op === '-' ? 'del' : l.op === '+' ? 'add' : 'ctx'}">${l.op === ' ' ? ' ' : l.op} ${l.text}
</span>`,
      )}</pre>
      ${lines.length > shown.length ? html`<p class="tool-note">… ${lines.length - shown.length} more lines</p>` : nothing}
      ${lines.length > FOLD_LINES * 2
        ? html`<button type="button" class="ghost fold" aria-expanded=${o.expanded ? 'true' : 'false'} @click=${o.toggleExpanded}>
            ${o.expanded ? 'Show fewer lines' : `Show all ${lines.length} lines`}
          </button>`
        : nothing}
      ${out && hasOutput(out) && (e.state === 'error' || out.text !== '') ? html`<h3>${heading}</h3>${output(out, o, { tail: false })}` : nothing}`
  } else {
    body = html`<h3>Arguments</h3>
      <pre tabindex="0" role="region" aria-label="Arguments">${pretty(e.args)}</pre>
      ${out && hasOutput(out) ? html`<h3>${heading}</h3>${output(out, o, { tail: false })}` : nothing}`
  }
  return html`<details class="tool ${kind}" data-tool=${e.toolCallId} ?open=${o.open}>
    <summary>
      <span class="tool-name">${e.name}</span>
      <span class="tool-args">${what}</span>
      ${o.time ?? nothing} ${stateBadge(e, o)}
    </summary>
    <div class="tool-body">${body}</div>
  </details>`
}

/**
 * The question a permission dialog asks: the tool, and what it is about to do, as a human reads it —
 * the command for bash, the path for file tools, a short -/+ preview for edit, the first lines for
 * write. Everything is clipped so a long file or command cannot push the answer off the card (and
 * the title stays within the dialog schema's limit).
 */
const MAX_LINE = 160
const MAX_TITLE = 1800

export function describeToolCall(tool: string, input: Record<string, unknown>, outside: readonly string[]): string {
  const lines = [...callLines(tool, input)]
  for (const path of outside) lines.push(`${path} is outside this thread's workspace.`)
  const title = lines.join('\n')
  return title.length > MAX_TITLE ? `${title.slice(0, MAX_TITLE - 1)}…` : title
}

function callLines(tool: string, input: Record<string, unknown>): string[] {
  const text = (key: string) => (typeof input[key] === 'string' ? (input[key] as string) : undefined)
  const where = text('path') ?? '.'
  switch (tool) {
    case 'bash':
    case 'powershell':
      return [`Allow ${tool} to run this command?`, ...excerpt(text('command') ?? '', 12, '$ ', '  ')]
    case 'read':
      return [`Allow read of ${where}?`]
    case 'write':
      return [`Allow write to ${where}?`, ...excerpt(text('content') ?? '', 6, '  ', '  ')]
    case 'edit':
      return [`Allow edit of ${where}?`, ...editPreview(input.edits)]
    case 'grep':
      return [`Allow grep for ${JSON.stringify(text('pattern') ?? '')} in ${where}?`]
    case 'find':
      return [`Allow find ${JSON.stringify(text('pattern') ?? '')} in ${where}?`]
    case 'ls':
      return [`Allow ls of ${where}?`]
    default:
      return [`Allow ${tool}?`, clip(JSON.stringify(input) ?? '', 600)]
  }
}

function editPreview(edits: unknown): string[] {
  if (!Array.isArray(edits)) return []
  const out: string[] = []
  for (const edit of edits.slice(0, 3)) {
    const { oldText, newText } = (edit ?? {}) as { oldText?: unknown; newText?: unknown }
    out.push(...excerpt(typeof oldText === 'string' ? oldText : '', 4, '- ', '- '))
    out.push(...excerpt(typeof newText === 'string' ? newText : '', 4, '+ ', '+ '))
  }
  if (edits.length > 3) out.push(`… ${edits.length - 3} more edits`)
  return out
}

/** The first `max` lines of `body`, each clipped and prefixed, then how many more there are. */
function excerpt(body: string, max: number, first: string, rest: string): string[] {
  if (body === '') return []
  const all = body.replace(/\n$/, '').split('\n')
  const shown = all.slice(0, max).map((line, i) => clip(`${i === 0 ? first : rest}${line}`, MAX_LINE))
  if (all.length > max) shown.push(`… ${all.length - max} more lines`)
  return shown
}

function clip(line: string, max: number): string {
  return line.length > max ? `${line.slice(0, max - 1)}…` : line
}

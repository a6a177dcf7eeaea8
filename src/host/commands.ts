/**
 * Slash commands in the composer: what a thread can run, and what a `/text` prompt means.
 *
 * pi handles its own (extension commands, prompt templates, `/skill:name`) inside `prompt()`; the
 * host handles threadhost's (`/name`, `/model`, `/thinking`, `/compact`, `/new`) on the thread; anything else
 * that looks like a command is refused with the closest names, instead of reaching the model as text.
 */
import { THINKING_LEVELS, type CommandInfo } from '../schemas/index.js'

export const HOST_COMMANDS: CommandInfo[] = [
  { name: 'name', description: 'Rename this thread: /name <title>', kind: 'threadhost' },
  { name: 'model', description: 'Use another model from the next run: /model <provider>/<id> (or demo)', kind: 'threadhost' },
  { name: 'thinking', description: `Set the thinking level from the next run: /thinking ${THINKING_LEVELS.join('|')}`, kind: 'threadhost' },
  { name: 'compact', description: 'Summarise the conversation so far into a shorter context: /compact [instructions]', kind: 'threadhost' },
  { name: 'new', description: 'Start a new thread with this model and workspace: /new [title]', kind: 'threadhost' },
]

export type HostCommand = 'name' | 'model' | 'thinking' | 'compact' | 'new'

export type ParsedCommand =
  | { kind: 'text' }
  | { kind: 'host'; name: HostCommand; args: string }
  | { kind: 'runtime' }
  | { kind: 'unknown'; name: string; suggestions: string[] }

/** `/name args`: a host command, one of the runtime's, or unknown. Text that is not `/word…` is a prompt. */
export function parseCommand(text: string, runtimeCommands: CommandInfo[]): ParsedCommand {
  const match = /^\/([^\s/]+)(?:\s+([\s\S]*))?$/.exec(text.trim())
  if (!match) return { kind: 'text' }
  const [, name, args = ''] = match
  const host = HOST_COMMANDS.find((c) => c.name === name)
  if (host) return { kind: 'host', name: host.name as HostCommand, args: args.trim() }
  if (runtimeCommands.some((c) => c.name === name)) return { kind: 'runtime' }
  const names = [...HOST_COMMANDS, ...runtimeCommands].map((c) => c.name)
  return { kind: 'unknown', name, suggestions: closest(name, names) }
}

/** Up to three names within an edit distance of 2, or sharing the typed prefix, nearest first. */
export function closest(name: string, names: string[]): string[] {
  return names
    .map((candidate) => ({ candidate, d: candidate.startsWith(name) ? 0 : distance(name, candidate) }))
    .filter(({ d }) => d <= 2)
    .sort((a, b) => a.d - b.d || a.candidate.localeCompare(b.candidate))
    .slice(0, 3)
    .map(({ candidate }) => `/${candidate}`)
}

function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1))
    prev = row
  }
  return prev[b.length]
}

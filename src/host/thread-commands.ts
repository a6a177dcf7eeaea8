/**
 * threadhost's own slash commands carried out on a thread (`/name`, `/model`, `/thinking`,
 * `/compact`, `/new`): applied to the thread, never queued. Parsing is commands.ts's; the thread's
 * settings are the registry's `update`, so a command and the settings route answer alike.
 */
import { THINKING_LEVELS, type ThinkingLevel, type ThreadSummary } from '../schemas/index.js'
import type { HostCommand } from './commands.js'
import type { LiveThread } from './live-thread.js'

export type UpdateOutcome =
  | { kind: 'updated'; summary: ThreadSummary }
  | { kind: 'unknown' }
  | { kind: 'invalid'; reason: string }
  | { kind: 'busy' }
  | { kind: 'unavailable'; reason: string }

export type CommandOutcome =
  | { kind: 'command-done'; command: string; summary: ThreadSummary }
  | { kind: 'unknown-command'; name: string; suggestions: string[] }
  | Exclude<UpdateOutcome, { kind: 'updated' }>

export type ThreadChange = { title?: string; model?: string; thinkingLevel?: ThinkingLevel }

/** What a command needs of the registry. */
export interface CommandTarget {
  threadId: string
  /** The thread's model, thinking level and workspace, for `/new`. */
  settings: { model: string; thinkingLevel?: ThinkingLevel; cwd?: string }
  live: LiveThread
  update(change: ThreadChange): Promise<UpdateOutcome>
  /** A new thread like this one; its summary, or why there is none. */
  createLike(title: string): Promise<{ summary: ThreadSummary } | { reason: string }>
  /** The thread was changed by a command that is not a settings change (`/compact`). */
  touched(): Promise<ThreadSummary>
}

export async function runHostCommand(target: CommandTarget, name: HostCommand, args: string): Promise<CommandOutcome> {
  if (name === 'new') {
    const created = await target.createLike(args)
    return 'reason' in created ? { kind: 'invalid', reason: created.reason } : { kind: 'command-done', command: 'new', summary: created.summary }
  }
  if (name === 'compact') return compact(target, args)
  if (!args) return { kind: 'invalid', reason: `/${name} needs an argument` }
  if (name === 'thinking' && !(THINKING_LEVELS as readonly string[]).includes(args)) {
    return { kind: 'invalid', reason: `/thinking takes one of ${THINKING_LEVELS.join(', ')}` }
  }
  const change = name === 'name' ? { title: args } : name === 'model' ? { model: args } : { thinkingLevel: args as ThinkingLevel }
  const outcome = await target.update(change)
  return outcome.kind === 'updated' ? { kind: 'command-done', command: name, summary: outcome.summary } : outcome
}

/** `/compact`: between runs, like a model change. */
async function compact(target: CommandTarget, instructions: string): Promise<CommandOutcome> {
  if (target.live.busy) return { kind: 'busy' }
  try {
    await target.live.compact(instructions)
  } catch (error) {
    return { kind: 'invalid', reason: `compaction failed: ${error instanceof Error ? error.message : String(error)}` }
  }
  return { kind: 'command-done', command: 'compact', summary: await target.touched() }
}

/**
 * threadhost's own slash commands carried out on a thread (`/name`, `/model`, `/thinking`,
 * `/compact`, `/new`): applied to the thread, never queued. Parsing is commands.ts's; the thread's
 * settings are the registry's `update`, so a command and the settings route answer alike.
 */
import { THINKING_LEVELS, type ThinkingLevel, type ThreadSummary } from '../schemas/index.js'
import type { CommandOutcome, UpdateOutcome } from '../schemas/outcomes.js'
import type { HostCommand } from './commands.js'
import type { LiveThread } from './live-thread.js'

/** What a settings change and a command come to: the vocabulary is src/schemas/outcomes.ts's. */
export type { CommandOutcome, UpdateOutcome } from '../schemas/outcomes.js'

export type ThreadChange = { title?: string; model?: string; thinkingLevel?: ThinkingLevel }

/** What a command needs of the registry. */
export interface CommandTarget {
  live: LiveThread
  /** The thread's model, thinking level and workspace, which `/new` copies. */
  settings: { model: string; thinkingLevel?: ThinkingLevel; cwd?: string }
  update(change: ThreadChange): Promise<UpdateOutcome>
  create(request: { model: string; thinkingLevel?: ThinkingLevel; cwd?: string; title?: string }): Promise<{ kind: 'created'; threadId: string } | { kind: 'taken' } | { kind: 'invalid'; reason: string }>
  summary(threadId: string): ThreadSummary | undefined
  /** The thread was changed by a command that is not a settings change (`/compact`); its summary after. */
  touch(): ThreadSummary
}

export async function runHostCommand(target: CommandTarget, name: HostCommand, args: string): Promise<CommandOutcome> {
  if (name === 'new') return newLike(target, args)
  if (name === 'compact') return compact(target, args)
  if (!args) return { kind: 'invalid', reason: `/${name} needs an argument` }
  if (name === 'thinking' && !(THINKING_LEVELS as readonly string[]).includes(args)) {
    return { kind: 'invalid', reason: `/thinking takes one of ${THINKING_LEVELS.join(', ')}` }
  }
  const change = name === 'name' ? { title: args } : name === 'model' ? { model: args } : { thinkingLevel: args as ThinkingLevel }
  const outcome = await target.update(change)
  if (outcome.kind === 'updated') return { kind: 'command-done', command: name, summary: outcome.summary }
  return outcome.kind === 'busy' ? { kind: 'command-busy', command: name } : outcome
}

/** `/new`: a fresh thread with this one's model, thinking level and workspace. */
async function newLike(target: CommandTarget, title: string): Promise<CommandOutcome> {
  const { model, thinkingLevel, cwd } = target.settings
  const created = await target.create({ model, ...(thinkingLevel ? { thinkingLevel } : {}), ...(cwd ? { cwd } : {}), ...(title ? { title } : {}) })
  if (created.kind !== 'created') return { kind: 'invalid', reason: created.kind === 'invalid' ? created.reason : 'no new thread id was free' }
  return { kind: 'command-done', command: 'new', summary: target.summary(created.threadId)! }
}

/** `/compact`: between runs, like a model change. */
async function compact(target: CommandTarget, instructions: string): Promise<CommandOutcome> {
  if (target.live.busy) return { kind: 'command-busy', command: 'compact' }
  try {
    await target.live.compact(instructions)
  } catch (error) {
    return { kind: 'invalid', reason: `compaction failed: ${error instanceof Error ? error.message : String(error)}` }
  }
  return { kind: 'command-done', command: 'compact', summary: target.touch() }
}

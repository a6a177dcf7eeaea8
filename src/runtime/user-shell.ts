/**
 * pi's user shell from the composer, as pi's interactive mode has it: `!cmd` runs `cmd` in the
 * thread's workspace and its output goes into the model's context; `!!cmd` runs it and keeps the
 * output out of the context. Extensions hear `user_bash` first and may run it elsewhere (their
 * `operations`) or answer it themselves (their `result`); pi's `executeBash` / `recordBashResult`
 * run and record it, so the session holds the same `bashExecution` message pi's CLI writes.
 *
 * In the transcript it is a `bash` tool entry (its command, then its output), live and cold alike.
 */
import type { ToolResult } from '../schemas/index.js'
import { compactToolResult } from './map-events.js'

export interface UserShellCommand {
  command: string
  /** `!!`: the output stays out of the model's context. */
  excludeFromContext: boolean
}

/** `!cmd` or `!!cmd` (pi's syntax); anything else, or a bare `!`, is a prompt. */
export function userShellCommand(text: string): UserShellCommand | undefined {
  const match = /^(!!?)([\s\S]*)$/.exec(text.trim())
  const command = match?.[2].trim()
  if (!match || !command) return undefined
  return { command, excludeFromContext: match[1] === '!!' }
}

/** The `bash` tool entry's arguments: what the transcript shows above the output. */
export function userShellArgs(shell: UserShellCommand): Record<string, unknown> {
  return { command: shell.command, user: true, ...(shell.excludeFromContext ? { excludeFromContext: true } : {}) }
}

/** pi's BashResult (or the `bashExecution` message it records) as the transcript's tool result. */
export function userShellResult(result: { output: string; exitCode: number | undefined; cancelled: boolean }): { result: ToolResult; isError: boolean } {
  const ending = result.cancelled ? '\n(cancelled)' : result.exitCode ? `\n(exit code ${result.exitCode})` : ''
  return {
    result: compactToolResult({ content: [{ type: 'text', text: `${result.output}${ending}` }] }),
    isError: !!result.cancelled || (result.exitCode !== undefined && result.exitCode !== 0),
  }
}

/**
 * pi's user shell from the composer, as pi's interactive mode has it: `!cmd` runs `cmd` in the
 * thread's workspace and its output goes into the model's context; `!!cmd` runs it and keeps the
 * output out of the context. Extensions hear `user_bash` first and may run it elsewhere (their
 * `operations`) or answer it themselves (their `result`); pi's `executeBash` / `recordBashResult`
 * run and record it, so the session holds the same `bashExecution` message pi's CLI writes.
 *
 * In the transcript it is a `bash` tool entry (its command, then its output), live and cold alike.
 */
import { randomUUID } from 'node:crypto'
import type { AgentSession } from '@earendil-works/pi-coding-agent'
import type { ToolResult } from '../schemas/index.js'
import type { RuntimeEvent } from './port.js'
import { errorText } from './extension-ui.js'
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

export interface UserShellRun {
  emit(event: RuntimeEvent): void
  /** Pairs the `bashExecution` message pi writes next with the tool entry `toolCallId` (transcript.ts). */
  mark(toolCallId: string): void
  /** The tool policy's bash rule: why the command may not run, or `undefined` to run it. */
  permission?: (command: string) => Promise<string | undefined>
  /** The run was stopped (Stop, or the thread released) before the command started. */
  stopped(): boolean
}

/**
 * A `!`/`!!` command as pi's interactive mode runs it: the tool policy's bash rule first, then
 * extensions hear `user_bash` (and may take it over), then pi runs and records it. Resolves when it
 * has ended; it never rejects (a failure is the tool entry's result).
 */
export async function runUserShell(session: AgentSession, prompt: { messageId: string; text: string }, shell: UserShellCommand, run: UserShellRun): Promise<void> {
  const { messageId, text } = prompt
  run.emit({ type: 'prompt-handled', messageId, text })
  const toolCallId = randomUUID()
  const end = (result: { output: string; exitCode: number | undefined; cancelled: boolean }) =>
    run.emit({ type: 'tool-end', toolCallId, ...userShellResult(result) })
  run.emit({ type: 'tool-start', toolCallId, name: 'bash', args: userShellArgs(shell), at: Date.now() })
  try {
    const refusal = await run.permission?.(shell.command)
    if (refusal || run.stopped()) {
      end({ output: refusal ?? 'The run was stopped before the command ran.', exitCode: undefined, cancelled: true })
      return
    }
    const { command, excludeFromContext } = shell
    // An extension that fails here is reported by pi (onError); as in pi, the command then does not run.
    const taken = await session.extensionRunner.emitUserBash({ type: 'user_bash', command, excludeFromContext, cwd: session.sessionManager.getCwd() })
    run.mark(toolCallId)
    if (taken?.result) {
      session.recordBashResult(command, taken.result, { excludeFromContext })
      end(taken.result)
      return
    }
    let output = ''
    const result = await session.executeBash(
      command,
      (chunk) => {
        output += chunk
        run.emit({ type: 'tool-update', toolCallId, partial: userShellResult({ output, exitCode: 0, cancelled: false }).result })
      },
      { excludeFromContext, ...(taken?.operations ? { operations: taken.operations } : {}) },
    )
    end(result)
  } catch (error) {
    end({ output: errorText(error), exitCode: undefined, cancelled: true })
  }
}

/**
 * Bash permission gate: every `bash` tool call waits for a human "Yes" before it runs.
 *
 * pi runs `tool_call` handlers in the preflight of a tool batch, one call at a time, so two bash
 * calls in one message are asked in order. Anything but an explicit Yes (No, cancel, timeout,
 * Stop, no UI) blocks the call; the model gets the reason as the tool's error result.
 */
import { isToolCallEventType, type ExtensionFactory } from '@earendil-works/pi-coding-agent'

export const BASH_BLOCKED_REASON = 'The user did not allow this command to run.'
export const BASH_NO_UI_REASON = 'No one is there to approve this command, so it was not run.'

export function bashPermissionExtension(): ExtensionFactory {
  return (pi) => {
    pi.on('tool_call', async (event, ctx) => {
      if (!isToolCallEventType('bash', event)) return undefined
      if (!ctx.hasUI) return { block: true, reason: BASH_NO_UI_REASON }
      const signal = ctx.signal
      const approved = await ctx.ui.confirm('Run this command?', event.input.command, signal ? { signal } : undefined)
      return approved ? undefined : { block: true, reason: BASH_BLOCKED_REASON }
    })
  }
}

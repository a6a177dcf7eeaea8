/**
 * The tool policy (tool-policy.ts), enforced on every tool call through pi's `tool_call` hook —
 * including calls a codemode script makes, which pi routes through the same hook.
 *
 * pi runs `tool_call` handlers in the preflight of a tool batch, one call at a time, so two calls in
 * one message are asked in order. A question is a select with three answers, so the human can also
 * stop being asked: "Allow for this thread" remembers the tool for this session, in memory — it ends
 * with the thread's runtime (idle release, restart), when the next call asks again. Anything but an
 * allow (Deny, cancel, timeout, Stop, no UI) blocks the call; the model gets the reason as the
 * tool's error result. Every question's outcome and every refusal by policy is also appended to the
 * session as a `threadhost.tool-permission` custom entry, which pi keeps out of the model's context.
 */
import type { ExtensionFactory, ToolCallEvent } from '@earendil-works/pi-coding-agent'
import { contains, readPathVariants, toolPath } from '../paths.js'
import { FILE_TOOLS, ruleFor, type ToolPolicy } from '../tool-policy.js'
import { describeToolCall } from './describe-tool-call.js'

export const TOOL_PERMISSION_ENTRY = 'threadhost.tool-permission'
export const ALLOW_ONCE = 'Allow once'
export const ALLOW_FOR_THREAD = 'Allow for this thread'
export const DENY = 'Deny'
export const PERMISSION_CHOICES = [ALLOW_ONCE, ALLOW_FOR_THREAD, DENY]

/** What "Allow for this thread" granted: the workspace only, or (asked about an outside path) anywhere. */
type Grant = 'workspace' | 'anywhere'

export interface ToolPermissionRecord {
  toolCallId: string
  tool: string
  decision: 'allow-once' | 'allow-for-thread' | 'deny'
  by: 'user' | 'policy'
  /** How the question ended when nobody chose (cancelled, timeout, aborted, no UI). */
  outcome?: string
  /** The paths outside the workspace the call named. */
  outside?: string[]
}

/** Who asks threadhost's permission questions, on each card: an extension's own question (pi's `permission-gate.ts`) says it is an extension's. */
export const TOOL_POLICY_ORIGIN = "threadhost's tool policy"

/** Asks the people watching one permission question (a select of PERMISSION_CHOICES), under TOOL_POLICY_ORIGIN. */
export type PermissionAsk = (title: string, options: { signal?: AbortSignal; toolCallId?: string }) => Promise<{ value?: string; outcome: string }>

export function toolPermissionExtension(policy: ToolPolicy, askPermission: PermissionAsk): ExtensionFactory {
  // Built per session (see session-factory.ts), so this is one thread's memory.
  const granted = new Map<string, Grant>()
  return (pi) => {
    pi.on('tool_call', async (event, ctx) => {
      const tool = event.toolName
      const outside = outsidePaths(event, ctx.cwd)
      const record = (entry: Omit<ToolPermissionRecord, 'toolCallId' | 'tool' | 'outside'>) =>
        pi.appendEntry<ToolPermissionRecord>(TOOL_PERMISSION_ENTRY, {
          toolCallId: event.toolCallId,
          tool,
          ...entry,
          ...(outside.length > 0 ? { outside } : {}),
        })

      const rule = ruleFor(policy, tool)
      if (rule === 'deny') {
        record({ decision: 'deny', by: 'policy' })
        return { block: true, reason: `The tool policy does not allow ${tool}, so it did not run.` }
      }
      if (outside.length > 0 && policy.outsideWorkspace === 'deny') {
        record({ decision: 'deny', by: 'policy' })
        return { block: true, reason: `The tool policy does not allow ${tool} outside the workspace (${outside.join(', ')}), so it did not run.` }
      }
      const grant = granted.get(tool)
      const mustAsk = outside.length > 0 ? grant !== 'anywhere' : rule === 'ask' && grant === undefined
      if (!mustAsk) return undefined

      const choice = ctx.hasUI
        ? await askPermission(describeToolCall(tool, event.input, outside), { ...(ctx.signal ? { signal: ctx.signal } : {}), toolCallId: event.toolCallId })
        : { outcome: 'refused' }
      if (choice.value === ALLOW_ONCE || choice.value === ALLOW_FOR_THREAD) {
        const thread = choice.value === ALLOW_FOR_THREAD
        if (thread) granted.set(tool, outside.length > 0 || grant === 'anywhere' ? 'anywhere' : 'workspace')
        record({ decision: thread ? 'allow-for-thread' : 'allow-once', by: 'user' })
        return undefined
      }
      record({ decision: 'deny', by: 'user', ...(choice.value === DENY ? {} : { outcome: choice.outcome }) })
      return { block: true, reason: blockedReason(tool, choice.value === DENY ? 'denied' : choice.outcome) }
    })
  }
}

/**
 * A `!`/`!!` command typed in the composer passes the policy's bash rule as the model's bash does:
 * `deny` refuses it, `ask` asks the same card (its title says the command came from the composer),
 * `allow` runs it. "Allow for this thread" here covers the composer's commands only, never the model's.
 */
export function userShellPermission(policy: ToolPolicy, ask: PermissionAsk): (command: string) => Promise<string | undefined> {
  let granted = false
  return async (command) => {
    const rule = ruleFor(policy, 'bash')
    if (rule === 'deny') return 'The tool policy does not allow bash, so the command did not run.'
    if (rule === 'allow' || granted) return undefined
    const choice = await ask(`A shell command typed in the composer (!).\n${describeToolCall('bash', { command }, [])}`, {})
    if (choice.value === ALLOW_FOR_THREAD) granted = true
    if (choice.value === ALLOW_ONCE || choice.value === ALLOW_FOR_THREAD) return undefined
    return blockedReason('bash', choice.value === DENY ? 'denied' : choice.outcome).replace('this bash call', 'this command')
  }
}

function blockedReason(tool: string, outcome: string): string {
  switch (outcome) {
    case 'denied':
      return `The user denied this ${tool} call, so it did not run.`
    case 'timeout':
      return `No one answered whether ${tool} may run before the question timed out, so it did not run.`
    case 'aborted':
      return `The run was stopped before anyone allowed ${tool}, so it did not run.`
    case 'refused':
      return `No one is there to allow ${tool}, so it did not run.`
    default:
      return `The user dismissed the question whether ${tool} may run, so it did not run.`
  }
}

/** The paths a file tool would touch that lie outside the workspace; other tools' arguments are not interpreted. */
function outsidePaths(event: ToolCallEvent, cwd: string): string[] {
  if (!(FILE_TOOLS as readonly string[]).includes(event.toolName)) return []
  const raw = (event.input as { path?: unknown }).path
  // grep, find and ls default to the workspace itself.
  const path = toolPath(typeof raw === 'string' ? raw : '.', cwd)
  const candidates = event.toolName === 'read' ? readPathVariants(path) : [path]
  return candidates.some((p) => !contains(cwd, p)) ? [path] : []
}

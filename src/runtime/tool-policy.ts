/**
 * The tool policy: which tool calls run, which ask a human first, which are refused. One policy for
 * the whole server, from `--tools-policy FILE` over the defaults below; the `tool_call` hook in
 * tools/tool-permission.ts enforces it per thread.
 *
 * The file (every field optional):
 *
 *   { "tools": { "bash": "allow", "write": "deny", "*": "ask" }, "outsideWorkspace": "deny" }
 *
 * - `tools`: a rule per tool name, `allow | ask | deny`, laid over the defaults. `*` is the rule for
 *   every tool that has neither an entry nor a default — extension and MCP tools.
 * - `outsideWorkspace`: `ask` (default) or `deny`, for a file tool whose path lies outside the
 *   thread's workspace. It applies even to tools the policy allows; `deny` here beats an allow.
 *
 * Kept free of pi so the server can check the file before anything heavy is loaded.
 */
import { readFileSync } from 'node:fs'
import { Type, type Static } from 'typebox'
import { Compile } from 'typebox/compile'

const Rule = Type.Union([Type.Literal('allow'), Type.Literal('ask'), Type.Literal('deny')])
const Outside = Type.Union([Type.Literal('ask'), Type.Literal('deny')])

export const ToolPolicyFile = Type.Object(
  {
    tools: Type.Optional(Type.Record(Type.String(), Rule)),
    outsideWorkspace: Type.Optional(Outside),
  },
  // A typo ("tool", "outside") must not silently leave the defaults in force.
  { additionalProperties: false },
)
export type ToolPolicyFile = Static<typeof ToolPolicyFile>
export type ToolRule = Static<typeof Rule>

export interface ToolPolicy {
  tools: Record<string, ToolRule>
  outsideWorkspace: Static<typeof Outside>
}

/** The tools whose path arguments the policy checks against the workspace (pi's file tools). */
export const FILE_TOOLS = ['read', 'grep', 'find', 'ls', 'write', 'edit'] as const

export const DEFAULT_TOOL_POLICY: ToolPolicy = {
  tools: {
    // Looking around the workspace is what an agent does all the time; asking would only train "Allow".
    read: 'allow',
    grep: 'allow',
    find: 'allow',
    ls: 'allow',
    // Whatever changes the machine is asked.
    bash: 'ask',
    powershell: 'ask',
    write: 'ask',
    edit: 'ask',
    // threadhost's own tools only ask the human something; asking leave to ask would be noise.
    // `deny` leaves them out of the model's tool list altogether (ui_dialog is the demo model's only).
    ask_user_question: 'allow',
    ui_dialog: 'allow',
    // pi has no permission system of its own, so an extension or MCP tool is trusted as much as the
    // extension that brought it: it runs, as it would in pi's CLI. A policy file can say otherwise.
    '*': 'allow',
  },
  outsideWorkspace: 'ask',
}

export function ruleFor(policy: ToolPolicy, tool: string): ToolRule {
  // Own keys only: a tool named `constructor` must not find Object.prototype's.
  const own = (name: string) => (Object.hasOwn(policy.tools, name) ? policy.tools[name] : undefined)
  return own(tool) ?? own('*') ?? 'allow'
}

export type ToolPolicyCheck = { ok: true; policy: ToolPolicy } | { ok: false; field: string; reason: string }

const validator = Compile(ToolPolicyFile)

/** Validates a parsed policy file and lays it over the defaults. */
export function parseToolPolicy(value: unknown): ToolPolicyCheck {
  if (!validator.Check(value)) return { ok: false, ...fault(value) }
  return {
    ok: true,
    policy: {
      tools: { ...DEFAULT_TOOL_POLICY.tools, ...value.tools },
      outsideWorkspace: value.outsideWorkspace ?? DEFAULT_TOOL_POLICY.outsideWorkspace,
    },
  }
}

export class ToolPolicyError extends Error {}

/** Reads and checks a policy file; the error names the file and the field at fault. */
export function loadToolPolicy(file: string): ToolPolicy {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    throw new ToolPolicyError(`${file}: cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`)
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new ToolPolicyError(`${file}: not JSON (${(error as Error).message})`)
  }
  const check = parseToolPolicy(value)
  if (!check.ok) throw new ToolPolicyError(`${file}: ${check.field} ${check.reason}`)
  return check.policy
}

/** The first fault, said the way the file is written: `tools.bash`, not a JSON pointer. */
function fault(value: unknown): { field: string; reason: string } {
  const errors = [...validator.Errors(value)]
  const extra = errors.find((e) => e.keyword === 'additionalProperties')
  if (extra) {
    const names = (extra.params as { additionalProperties?: string[] }).additionalProperties ?? []
    return { field: names[0] ?? '(unknown field)', reason: 'is not a policy field (the fields are "tools" and "outsideWorkspace")' }
  }
  const path = (errors[0]?.instancePath ?? '')
    .split('/')
    .slice(1)
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
  const field = path.length === 0 ? '(the whole file)' : path.join('.')
  const found = path.reduce<unknown>((at, key) => (at as Record<string, unknown> | undefined)?.[key], value)
  const got = `, not ${JSON.stringify(found)}`
  if (path.length === 0) return { field, reason: `must be a JSON object${got}` }
  if (path[0] === 'tools' && path.length === 1) return { field, reason: `must be an object of tool names to rules${got}` }
  if (path[0] === 'tools') return { field, reason: `must be "allow", "ask" or "deny"${got}` }
  return { field, reason: `must be "ask" or "deny"${got}` }
}

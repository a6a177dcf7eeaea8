/**
 * Project trust, decided as pi's CLI decides it, with one difference: where pi would show its
 * terminal prompt, the question is a dialog in the thread (every tab sees it, one answer settles it).
 *
 * Order (pi's docs/security.md): threadhost's `--trust-projects yes|no` override; a folder with no
 * trust-requiring resources (`.pi/settings.json`, `.pi/extensions`, …) is trusted unless a saved
 * decision says otherwise; a saved decision in the agent dir's trust store; the `defaultProjectTrust`
 * setting (`always` / `never`); else ask. Before the saved decision, the user's global extensions
 * may decide through their `project_trust` handlers (first yes/no wins), as in pi; they run while the
 * thread is being built, so they are told there is no UI to ask with.
 */
import {
  hasTrustRequiringProjectResources,
  ProjectTrustStore,
  type LoadExtensionsResult,
  type ProjectTrustContext,
  type ProjectTrustEventResult,
  type SettingsManager,
} from '@earendil-works/pi-coding-agent'
import type { DialogSpec } from '../schemas/index.js'
import type { DialogResolution } from './port.js'

export type TrustPolicy = 'yes' | 'no' | 'ask'

export const TRUST_ONCE = 'Trust this time'
export const TRUST_ALWAYS = 'Trust and remember'
export const TRUST_NEVER = "Don't trust"

/** The decision, or `ask` when a human has to make it. */
export function decideTrust(cwd: string, agentDir: string, settings: SettingsManager, policy: TrustPolicy): boolean | 'ask' {
  if (policy !== 'ask') return policy === 'yes'
  const saved = new ProjectTrustStore(agentDir).get(cwd)
  if (!hasTrustRequiringProjectResources(cwd)) return saved ?? true
  if (saved !== null) return saved
  switch (settings.getDefaultProjectTrust()) {
    case 'always':
      return true
    case 'never':
      return false
    default:
      return 'ask'
  }
}

/** Whether pi would resolve trust for this folder at all: only when the folder has resources trust gates. */
export function needsTrustDecision(cwd: string, policy: TrustPolicy): boolean {
  return policy === 'ask' && hasTrustRequiringProjectResources(cwd)
}

/**
 * The user's extensions' say, as pi's own `emitProjectTrustEvent` (not exported to SDK hosts) runs
 * it: each `project_trust` handler in load order, the first yes/no wins, errors are reported and skipped.
 */
export async function extensionTrust(
  extensions: LoadExtensionsResult,
  cwd: string,
  agentDir: string,
  onError: (message: string) => void,
): Promise<boolean | undefined> {
  const ctx: ProjectTrustContext = {
    cwd,
    mode: 'rpc',
    hasUI: false,
    ui: { select: async () => undefined, confirm: async () => false, input: async () => undefined, notify: () => {} },
  }
  for (const ext of extensions.extensions) {
    for (const handler of ext.handlers.get('project_trust') ?? []) {
      let result: ProjectTrustEventResult | undefined
      try {
        result = (await handler({ type: 'project_trust', cwd }, ctx as never)) as ProjectTrustEventResult | undefined
      } catch (error) {
        onError(`extension ${ext.path} failed on project_trust: ${error instanceof Error ? error.message : String(error)}`)
        continue
      }
      if (!result || result.trusted === 'undecided') continue
      const trusted = result.trusted === 'yes'
      if (result.remember === true) new ProjectTrustStore(agentDir).set(cwd, trusted)
      return trusted
    }
  }
  return undefined
}

export function trustQuestion(cwd: string): DialogSpec {
  return {
    method: 'select',
    title: `Trust project folder ${cwd}? This lets pi load its .pi settings and resources and run its project extensions.`,
    options: [TRUST_ONCE, TRUST_ALWAYS, TRUST_NEVER],
  }
}

/** Reads the answer; anything but a trust choice (cancel, Stop, timeout) is "not trusted". */
export function trustAnswer(resolution: DialogResolution, cwd: string, agentDir: string): boolean {
  const answer = resolution.outcome === 'answered' && resolution.answer && 'value' in resolution.answer ? resolution.answer.value : undefined
  if (answer === TRUST_ALWAYS || answer === TRUST_NEVER) new ProjectTrustStore(agentDir).set(cwd, answer === TRUST_ALWAYS)
  return answer === TRUST_ONCE || answer === TRUST_ALWAYS
}

/**
 * Project trust, decided as pi's CLI decides it, with one difference: where pi would show its
 * terminal prompt, the question is a dialog in the thread (every tab sees it, one answer settles it).
 *
 * Order (pi's docs/security.md): threadhost's `--trust-projects yes|no` override; a folder with no
 * trust-requiring resources (`.pi/settings.json`, `.pi/extensions`, …) is trusted unless a saved
 * decision says otherwise; a saved decision in the agent dir's trust store; the `defaultProjectTrust`
 * setting (`always` / `never`); else ask. Extensions' `project_trust` handlers are not consulted:
 * pi does not export that step to SDK hosts.
 */
import { hasTrustRequiringProjectResources, ProjectTrustStore, type SettingsManager } from '@earendil-works/pi-coding-agent'
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

/**
 * What a thread's pi session says about itself as it changes — the model and thinking level it runs
 * on, its session name — told to the host as it happens, whoever changed it: an extension
 * (`pi.setModel`, `pi.setThinkingLevel`, `pi.setSessionName`, e.g. preset.ts or session-name.ts),
 * pi's own commands, or the host's configure. pi tells these to extensions (`model_select`,
 * `thinking_level_select`, `session_info_changed`), so threadhost listens as one: a hook of the one
 * extension of the host's own that every session loads (session-factory.ts).
 */
import type { Api, Model } from '@earendil-works/pi-ai'
import type { ExtensionAPI } from '@earendil-works/pi-coding-agent'
import { THINKING_LEVELS, type ThinkingLevel } from '../schemas/index.js'
import type { SessionChange } from './port.js'

/** A level threadhost's API can name (pi may know more, e.g. `max`): one it cannot is left unsaid. */
const known = (level: string | undefined): ThinkingLevel | undefined =>
  level !== undefined && (THINKING_LEVELS as readonly string[]).includes(level) ? (level as ThinkingLevel) : undefined

export function sessionChangesHook(changed: (change: SessionChange) => void, nameOf: (model: Model<Api>) => string): (pi: ExtensionAPI) => void {
  return (pi) => {
    // The level from the handler's context, as `pi.getThinkingLevel()` reads it: a handler that kept
    // `pi` would keep the whole extension API (≈ 2.5 KiB of closures) for the session's life.
    pi.on('model_select', (event, ctx) => changed({ model: nameOf(event.model), thinkingLevel: known(ctx.thinkingLevel) }))
    pi.on('thinking_level_select', (event) => changed({ thinkingLevel: known(event.level) }))
    // pi's normalized name; cleared is the empty name, as pi's own `session_info` records it.
    pi.on('session_info_changed', (event) => changed({ name: event.name ?? '' }))
  }
}

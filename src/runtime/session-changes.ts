/**
 * What a thread's pi session says about itself as it changes — its session name — told to the host
 * as it happens, whoever changed it: an extension (`pi.setSessionName`, e.g. session-name.ts) or
 * pi's own commands. pi tells it to extensions (`session_info_changed`), so threadhost listens as
 * one: an extension of its own that every session loads.
 */
import type { ExtensionFactory } from '@earendil-works/pi-coding-agent'
import type { SessionChange } from './port.js'

export function sessionChangesExtension(changed: (change: SessionChange) => void): ExtensionFactory {
  return (pi) => {
    // pi's normalized name; cleared is the empty name, as pi's own `session_info` records it.
    pi.on('session_info_changed', (event) => changed({ name: event.name ?? '' }))
  }
}

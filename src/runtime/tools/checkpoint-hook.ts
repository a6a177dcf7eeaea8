/**
 * The host's checkpoint before a tool changes files: a `tool_call` handler, loaded after the tool
 * policy's (tool-permission.ts) so a call that policy blocks takes no checkpoint, that awaits the
 * host's `beforeFileChange` for pi's `write`, `edit` and `bash`. It never blocks a call.
 */
import type { ExtensionAPI } from '@earendil-works/pi-coding-agent'
import { toolPath } from '../paths.js'
import type { FileChangeIntent } from '../port.js'

const CHANGING = new Set(['write', 'edit', 'bash'])

export function checkpointHook(beforeFileChange: (change: FileChangeIntent) => Promise<void>): (pi: ExtensionAPI) => void {
  return (pi) => {
    pi.on('tool_call', async (event, ctx) => {
      if (!CHANGING.has(event.toolName)) return undefined
      const tool = event.toolName as FileChangeIntent['tool']
      const raw = (event.input as { path?: unknown }).path
      const path = tool !== 'bash' && typeof raw === 'string' ? toolPath(raw, ctx.cwd) : undefined
      await beforeFileChange({ tool, ...(path ? { path } : {}) }).catch(() => undefined)
      return undefined
    })
  }
}

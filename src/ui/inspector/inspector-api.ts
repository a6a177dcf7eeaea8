/** The inspector's routes, with the same token handling as the rest of the client. */
import { ApiError, apiConfig } from '../api.js'
import type { ActorNode, MachineInfo } from './types.js'

async function get<T>(path: string): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' }
  if (apiConfig.token) headers.authorization = `Bearer ${apiConfig.token}`
  const res = await fetch(apiConfig.base + path, { headers })
  const body = await res.json().catch(() => ({}))
  if (res.status === 404 && path.startsWith('/api/debug/actors')) {
    throw new ApiError(404, { error: 'the inspector is off on this server (--inspector off)' })
  }
  if (!res.ok) throw new ApiError(res.status, body)
  return body as T
}

export const inspectorApi = {
  actors: () => get<{ threads: ActorNode[] }>('/api/debug/actors').then((r) => r.threads),
  machine: (machineId: string) => get<MachineInfo>(`/api/debug/machines/${encodeURIComponent(machineId)}`),
  /** EventSource sends Last-Event-ID itself on reconnect; the token rides in the query. */
  eventsUrl: () => `${apiConfig.base}/api/debug/events${apiConfig.token ? `?token=${encodeURIComponent(apiConfig.token)}` : ''}`,
}
export type InspectorApi = typeof inspectorApi

/** The inspector's routes, through the same typed client (route table, token) as the rest of the web client. */
import { answered, ApiError, apiConfig, client } from '../api.js'
import type { ActorNode, MachineInfo } from './types.js'

const inspectorOff = (err: unknown): never => {
  // The route is not there at all: the server runs with --inspector off.
  if (answered(err, 'ROUTE_NOT_FOUND')) {
    throw new ApiError(404, { error: 'the inspector is off on this server (--inspector off)', code: 'ROUTE_NOT_FOUND' }, err.route)
  }
  throw err
}

export const inspectorApi = {
  // The actor forest's schema is depth-limited (a recursive type the route table leaves open): typed here.
  actors: () => client.call('debugActors').then((r) => r.threads as ActorNode[], inspectorOff),
  machine: (machineId: string) => client.call('debugMachine', { params: { machineId } }).then((r) => r as unknown as MachineInfo),
  /** EventSource sends Last-Event-ID itself on reconnect; the token rides in the query. */
  eventsUrl: () => `${apiConfig.base}/api/debug/events${apiConfig.token ? `?token=${encodeURIComponent(apiConfig.token)}` : ''}`,
}
export type InspectorApi = typeof inspectorApi

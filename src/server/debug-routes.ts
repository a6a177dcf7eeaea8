/**
 * The machine inspector's routes, as a buildApp plugin (so they sit behind the same token check and
 * error handler as the rest of /api, appear in the OpenAPI document, and vanish with `--inspector off`):
 *
 *   GET /api/debug/actors              the live actors as a tree, each with its machine and state
 *   GET /api/debug/machines/:machineId the machine's definition, for drawing it
 *   GET /api/debug/events              SSE of inspection records; resumable; `?thread=` filters
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { AnyActorRef, AnyStateMachine } from 'xstate'
import { Inspection, type InspectionRecord } from '../host/inspection.js'
import type { ActorNode } from '../schemas/inspection.js'
import { machineOutcomes } from '../schemas/outcomes.js'
import { encodeFrame } from '../host/frame.js'
import type { ThreadRegistry } from '../host/thread-registry.js'
import { askQueueMachine } from '../machines/ask-queue.machine.js'
import { transitionsOf } from '../machines/diagram.js'
import { dialogMachine } from '../machines/dialog.machine.js'
import { threadMachine } from '../machines/thread.machine.js'
import { machineDefinition, machineIdOf, snapshotOf, systemIdOf } from '../shared/xstate-internals.js'
import { defaultStreamOptions, openEventStream, resumePoint, type StreamOptions } from './event-stream.js'
import { replyWith } from './responses.js'
import { registerRoutes } from './routes/register.js'

export const MACHINES: Record<string, AnyStateMachine> = {
  thread: threadMachine,
  dialog: dialogMachine,
  askQueue: askQueueMachine,
}

export type { ActorNode } from '../schemas/inspection.js'

export interface DebugRoutesOptions {
  registry: ThreadRegistry
  /** Made here when not given; tests pass their own to look inside. */
  inspection?: Inspection
  stream?: Partial<StreamOptions>
}

export function debugRoutes(options: DebugRoutesOptions) {
  return async (app: FastifyInstance): Promise<void> => {
    const { registry } = options
    const inspection = options.inspection ?? new Inspection(registry)
    const stream = { ...defaultStreamOptions, ...options.stream }
    app.addHook('onClose', async () => inspection.dispose())

    registerRoutes(app, {
      debugActors: {
        tags,
        summary: 'The live actors as a tree, each with its machine and state',
        handler: async () => ({
          threads: registry.liveThreads().map((t) => actorTree(t.actor as AnyActorRef, t.threadId, undefined)),
        }),
      },
      debugMachine: {
        tags,
        summary: "A machine's definition, for drawing it",
        handler: async (request, reply) => {
          const { machineId } = request.params
          const machine = Object.hasOwn(MACHINES, machineId) ? MACHINES[machineId] : undefined
          if (!machine) return replyWith(reply, machineOutcomes, { kind: 'unknown', machines: Object.keys(MACHINES) }, { machineId })
          // toJSON() leaves out eventless (`always`) transitions; transitionsOf lists them all, with the
          // keys the snapshot records use for "the transition just taken".
          return { machineId, definition: machineDefinition(machine), transitions: transitionsOf(machine) }
        },
      },
      debugEvents: {
        tags,
        summary: 'Inspection records as Server-Sent Events; resumable; `?thread=` filters',
        handler: async (request, reply) => {
          streamRecords(request, reply, inspection, stream)
        },
      },
    })
  }
}

const tags = ['inspector']

function actorTree(ref: AnyActorRef, threadId: string, parentPath: string | undefined): ActorNode {
  const snapshot = snapshotOf(ref)
  const actorId = parentPath === undefined ? ref.id : `${parentPath}/${ref.id}`
  const systemId = systemIdOf(ref)
  return {
    actorId,
    id: ref.id,
    threadId,
    machineId: machineIdOf(ref) ?? 'unknown',
    ...(systemId ? { systemId } : {}),
    value: snapshot.value ?? null,
    status: snapshot.status,
    children: snapshot.children.map((c) => actorTree(c, threadId, actorId)),
  }
}

/** The inspection records as SSE: the same stream rules as the follow, resumable by record id. */
function streamRecords(
  request: FastifyRequest<{ Querystring: { after?: string; thread?: string } }>,
  reply: FastifyReply,
  inspection: Inspection,
  options: StreamOptions,
): void {
  const threadId = request.query.thread || undefined
  let close = () => {}
  const stream = openEventStream(request, reply, options, () => close())
  // The first client's connect attaches the observers, which record each actor as it is right
  // away; those records wait here so they follow the replay instead of preceding it.
  let held: InspectionRecord[] | undefined = []
  const frame = (r: InspectionRecord) => encodeFrame(r.id, 'record', r)
  const send = (r: InspectionRecord) => {
    if (threadId !== undefined && r.threadId !== threadId) return
    if (held) held.push(r)
    else stream.send(frame(r))
  }
  // A resume point past the head means the host restarted: the client gets everything retained.
  let after = resumePoint(request)
  if (after !== undefined && after > inspection.head) after = undefined
  const session = inspection.connect(send, after, threadId)
  close = () => session.close()
  for (const r of session.replay) stream.send(frame(r))
  const live = held
  held = undefined
  for (const r of live) send(r)
  // Tells the client where the replay ended, so it can show "live from here".
  stream.send(encodeFrame(inspection.head, 'ready', { head: inspection.head }))
}

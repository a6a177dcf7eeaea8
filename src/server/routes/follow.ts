/** `GET …/follow`: the route that opens a thread's follow stream (the stream itself is ../follow.ts). */
import type { ThreadRegistry } from '../../host/thread-registry.js'
import { lookupOutcomes } from '../../schemas/outcomes.js'
import type { StreamOptions } from '../event-stream.js'
import { streamFeed } from '../follow.js'
import { replyWith } from '../responses.js'
import type { RouteHandlers } from './register.js'

export function followRoutes(registry: ThreadRegistry, stream: StreamOptions): RouteHandlers {
  return {
    follow: {
      tags: ['follow'],
      summary: 'Follow a thread: a snapshot, then every observation in order (Server-Sent Events)',
      description: 'Frames are `snapshot` then observations (src/schemas/observation.ts); resume with `Last-Event-ID` or `?after=`.',
      handler: async (request, reply) => {
        const feed = await registry.feed(request.params.id)
        if (!feed) return replyWith(reply, lookupOutcomes, { kind: 'unknown' }, { threadId: request.params.id })
        streamFeed(request, reply, feed, stream)
      },
    },
  }
}

/** `GET …/follow`: the route that opens a thread's follow stream (the stream itself is ../follow.ts). */
import type { ThreadRegistry } from '../../host/thread-registry.js'
import { followOutcomes } from '../../schemas/outcomes.js'
import { resumePoint, type StreamOptions } from '../event-stream.js'
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
        const after = resumePoint(request)
        const found = await registry.follow(request.params.id, after)
        if (found.kind !== 'following') return replyWith(found.kind === 'behind' ? reply.header('retry-after', '1') : reply, followOutcomes, found, { threadId: request.params.id })
        streamFeed(request, reply, found.feed, after, stream)
      },
    },
  }
}

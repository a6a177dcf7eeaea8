/** `GET …/follow`: the route that opens a thread's follow stream (the stream itself is ../follow.ts). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { ThreadParams } from '../../schemas/index.js'
import type { ThreadRegistry } from '../../host/thread-registry.js'
import type { StreamOptions } from '../event-stream.js'
import { streamFeed } from '../follow.js'
import { EventStream, guarded, notFound } from '../responses.js'

const FollowQuery = Type.Object({
  /** Resume after this seq (`Last-Event-ID` wins when both are sent). */
  after: Type.Optional(Type.String()),
  /** The token, for EventSource, which cannot send headers. */
  token: Type.Optional(Type.String()),
})

export const followRoutes: FastifyPluginAsyncTypebox<{ registry: ThreadRegistry; stream: StreamOptions }> = async (
  app,
  { registry, stream },
) => {
  app.get(
    '/api/threads/:id/follow',
    {
      schema: {
        tags: ['follow'],
        summary: 'Follow a thread: a snapshot, then every observation in order (Server-Sent Events)',
        description: 'Frames are `snapshot` then observations (src/schemas/observation.ts); resume with `Last-Event-ID` or `?after=`.',
        params: ThreadParams,
        querystring: FollowQuery,
        response: { 200: EventStream('the event stream'), 404: notFound('no such thread'), ...guarded },
      },
    },
    async (request, reply) => {
      const feed = await registry.feed(request.params.id)
      if (!feed) return reply.code(404).send({ error: `no thread ${request.params.id}` })
      streamFeed(request, reply, feed, stream)
    },
  )
}

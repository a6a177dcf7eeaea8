/** `GET …/follow`: the route that opens a thread's follow stream (the stream itself is ../follow.ts). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { apiRoutes } from '../../schemas/api-routes.js'
import type { ThreadRegistry } from '../../host/thread-registry.js'
import type { StreamOptions } from '../event-stream.js'
import { streamFeed } from '../follow.js'

/** What the route takes and answers: the table the typed client reads too. */
const { follow } = apiRoutes

export const followRoutes: FastifyPluginAsyncTypebox<{ registry: ThreadRegistry; stream: StreamOptions }> = async (
  app,
  { registry, stream },
) => {
  app.get(
    follow.path,
    {
      schema: {
        tags: ['follow'],
        summary: 'Follow a thread: a snapshot, then every observation in order (Server-Sent Events)',
        description: 'Frames are `snapshot` then observations (src/schemas/observation.ts); resume with `Last-Event-ID` or `?after=`.',
        params: follow.params,
        querystring: follow.querystring,
        response: follow.response,
      },
    },
    async (request, reply) => {
      const feed = await registry.feed(request.params.id)
      if (!feed) return reply.code(404).send({ error: `no thread ${request.params.id}` })
      streamFeed(request, reply, feed, stream)
    },
  )
}

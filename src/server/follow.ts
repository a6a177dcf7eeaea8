/**
 * GET /api/threads/:id/follow — a snapshot, then every observation of the thread in order.
 *
 * Frames come from the feed already encoded, so each follower costs one socket write per frame.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Feed } from '../host/feed.js'
import { encodeSnapshot } from '../host/frame.js'
import { openEventStream, resumePoint, type StreamOptions } from './event-stream.js'

export function streamFeed(
  request: FastifyRequest<{ Querystring: { after?: string } }>,
  reply: FastifyReply,
  feed: Feed,
  options: StreamOptions,
): void {
  let unfollow = () => {}
  const stream = openEventStream(request, reply, options, () => unfollow())
  // Resume and subscribe in one synchronous step, so no frame falls between them.
  const resume = feed.resume(resumePoint(request))
  unfollow = feed.follow({ send: (frame) => stream.send(frame), close: () => stream.close() })
  if (resume.kind === 'snapshot') stream.send(encodeSnapshot(resume.snapshot))
  else for (const frame of resume.frames) stream.send(frame)
}

/**
 * Starting and stopping runs: `POST …/prompt` and `POST …/abort`. The registry (and the thread's
 * machine behind it) decides; these reply with the outcome table's answer (src/schemas/outcomes.ts).
 */
import type { ThreadRegistry } from '../../host/thread-registry.js'
import { decodedBytes, MAX_IMAGE_BYTES, MAX_PROMPT_CHARS } from '../../schemas/index.js'
import { abortOutcomes, editOutcomes, guardOutcomes, promptOutcomes, takeQueueOutcomes } from '../../schemas/outcomes.js'
import { replyWith } from '../responses.js'
import type { WriteGuards } from '../writes.js'
import type { RouteHandlers } from './register.js'
import { emptyBodyIsObject } from './threads.js'

const tags = ['runs']

export function runRoutes(registry: ThreadRegistry, writes: WriteGuards): RouteHandlers {
  return {
    prompt: {
      tags,
      summary: "Start a run, or queue the prompt into the running one; or run one of threadhost's commands",
      description: 'The first prompt to an unknown id creates the thread.',
      handler: async (request, reply) => {
        const { id } = request.params
        const { message, admission = 'enqueue', deliverAs = 'steer', run, images } = request.body
        if (message.length > MAX_PROMPT_CHARS) {
          return replyWith(reply, guardOutcomes, { kind: 'prompt-too-long', limit: MAX_PROMPT_CHARS }, undefined)
        }
        // Checked before anything is stored: a refused image leaves no trace.
        if (images?.some((image) => decodedBytes(image.data) > MAX_IMAGE_BYTES)) {
          return replyWith(reply, guardOutcomes, { kind: 'image-too-large', limit: MAX_IMAGE_BYTES }, undefined)
        }
        // A crash between the prompt's admission and its answer being recorded loses nothing: the
        // admission claims the Idempotency-Key in the same commit, and a retry is answered from it.
        const body = { message, admission, deliverAs, ...(run !== undefined ? { run } : {}), ...(images?.length ? { images } : {}) }
        const outcome = await registry.prompt(id, body, writes.claimOf(request))
        if (outcome.kind === 'not-durable') request.log.warn({ code: outcome.fault.code }, `prompt refused: ${outcome.fault.message}`)
        // As the cluster's other 503s: the retry, with the same key, reaches the thread's new owner.
        if (outcome.kind === 'owner-changed') reply.header('retry-after', '1')
        return replyWith(reply, promptOutcomes, outcome, { threadId: id, run, damage: () => registry.get(id)?.unavailable })
      },
    },

    editMessage: {
      tags,
      summary: 'Edit or regenerate a prompt in place: a new version of it, sent where it was (no new thread)',
      description:
        "The conversation goes back to just before the prompt `messageId` names (a user message, or the prompt that produced the reply named) in pi's session tree; every follower gets a `branch` frame with it; then `text` (none: the prompt's own, a Regenerate) is sent there as a prompt, journaled as any. The prompts sent in one another's place are the user message's `versions`.",
      handler: async (request, reply) => {
        const { id } = request.params
        const { messageId, text } = request.body
        if (text !== undefined && text.length > MAX_PROMPT_CHARS) {
          return replyWith(reply, guardOutcomes, { kind: 'prompt-too-long', limit: MAX_PROMPT_CHARS }, undefined)
        }
        const outcome = await registry.edit(id, { messageId, ...(text !== undefined ? { text } : {}) }, writes.claimOf(request))
        return replyWith(reply, editOutcomes, outcome, { threadId: id, messageId, damage: () => registry.get(id)?.unavailable })
      },
    },

    abort: {
      tags,
      summary: 'Stop the run (the body is optional); the queued prompts are handed back',
      description: 'The run still ends on the follow, by its own `settled`.',
      // Not `durable`: a stop is never refused for a full or read-only disk; stopping an agent must always work.
      preValidation: emptyBodyIsObject,
      handler: async (request, reply) => {
        const { id } = request.params
        const outcome = await registry.abort(id, request.body.run)
        // The count only: the texts are the user's and go back to the caller alone.
        if (outcome.kind === 'stopped') request.log.info({ threadId: id, restored: outcome.restored.length }, 'abort: queue restored to the caller')
        return replyWith(reply, abortOutcomes, outcome, { threadId: id, run: request.body.run })
      },
    },

    takeQueue: {
      tags,
      summary: "Take the queued prompts back (pi's Alt+Up): handed back as a stop hands them back, and the run goes on",
      description: 'Every follower sees the emptied `queue`; the texts go to the caller alone. 409 `THREAD_IDLE` with nothing in flight.',
      // Not `durable`, as a stop: handing the user's prompts back must work on a full disk too.
      preValidation: emptyBodyIsObject,
      handler: async (request, reply) => {
        const { id } = request.params
        const outcome = await registry.takeQueue(id, request.body.run)
        if (outcome.kind === 'taken') request.log.info({ threadId: id, restored: outcome.restored.length }, 'queue taken back by the caller')
        return replyWith(reply, takeQueueOutcomes, outcome, { threadId: id, run: request.body.run })
      },
    },
  }
}

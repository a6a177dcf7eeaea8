/**
 * `POST …/dialog`: answer (or withdraw) an open question. The question's own machine judges the
 * answer; the outcome table (src/schemas/outcomes.ts) says what its verdict is on the wire.
 */
import type { ThreadRegistry } from '../../host/thread-registry.js'
import { answerOutcomes, terminalInputOutcomes } from '../../schemas/outcomes.js'
import { replyWith } from '../responses.js'
import type { RouteHandlers } from './register.js'

export function dialogRoutes(registry: ThreadRegistry): RouteHandlers {
  return {
    answerDialog: {
      tags: ['dialogs'],
      summary: 'Answer an open question: `{id, value}`, `{id, confirmed}`, `{id, answers}` or `{id, cancelled: true}`',
      handler: async (request, reply) => {
        const { id } = request.params
        const dialogId = request.body.id
        const outcome = await registry.answer(id, request.body)
        // Never asked, or already settled (another tab was first): worth a look when it repeats.
        if (outcome.kind === 'unknown') request.log.warn({ threadId: id, dialogId }, 'answer names no open question')
        return replyWith(reply, answerOutcomes, outcome, { threadId: id, dialogId })
      },
    },
    terminalInput: {
      tags: ['dialogs'],
      summary: 'Type into an open terminal component: `{data, tab?}`, one key or paste as terminal bytes',
      handler: async (request, reply) => {
        const { id, dialogId } = request.params
        const outcome = registry.terminalInput(id, dialogId, request.body)
        return replyWith(reply, terminalInputOutcomes, outcome, { threadId: id, dialogId })
      },
    },
  }
}

/** The push routes: the server's VAPID key, and a browser's subscription kept or removed (src/host/push). */
import type { PushNotifier } from '../../host/push/notifier.js'
import type { RouteHandlers } from './register.js'

const tags = ['notifications']

export function pushRoutes(push: PushNotifier): RouteHandlers {
  return {
    pushKey: {
      tags,
      summary: "The server's VAPID public key: a browser subscribes with it (`applicationServerKey`)",
      handler: async () => ({ publicKey: push.vapid.publicKey }),
    },
    subscribePush: {
      tags,
      summary: 'Notify this browser when a question waits or a run ends (the body is the browser subscription, as JSON)',
      handler: async (request, reply) => {
        push.subscribe(request.body)
        return reply.code(204).send()
      },
    },
    unsubscribePush: {
      tags,
      summary: "Stop notifying this browser (by its subscription's endpoint)",
      handler: async (request, reply) => {
        push.unsubscribe(request.body.endpoint)
        return reply.code(204).send()
      },
    },
  }
}

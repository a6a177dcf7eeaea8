/**
 * The API described by its own route schemas: OpenAPI 3.1 at `GET /api/openapi.json` and a reference
 * page at `GET /api/docs`. Both sit under /api, so the same guard covers them (the token when one is
 * set). The page is Swagger UI as @fastify/swagger-ui ships it, served from this process: it loads
 * nothing from the network (its validator badge, the one remote call it would make, is off).
 *
 * Registered before the routes: the document is built from the routes as they are added.
 */
import fastifySwagger from '@fastify/swagger'
import fastifySwaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
import { apiRoutes } from '../schemas/api-routes.js'
import { registerRoutes } from './routes/register.js'

export const OPENAPI_PATH = apiRoutes.openapi.path
export const DOCS_PREFIX = '/api/docs'

export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'threadhost',
        version: '0.1.0',
        description:
          'Host pi agent threads that many browser tabs follow at once. The prose — what each answer means, ' +
          'the order of frames on a follow — is in docs/api.md; this document holds the shapes.',
      },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'required on every /api route when the server runs with --token' },
        },
      },
      security: [{ bearer: [] }],
    },
  })
  await app.register(fastifySwaggerUi, {
    routePrefix: DOCS_PREFIX,
    // The only network call Swagger UI would make: the online validator's badge.
    validatorUrl: false,
    uiConfig: { deepLinking: true },
  })
  registerRoutes(app, { openapi: { tags: ['meta'], summary: 'This document', handler: async () => app.swagger() } })
}

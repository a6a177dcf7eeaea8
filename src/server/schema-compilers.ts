/**
 * The app's schema compilers (fastify's `schemaController` option). Validators are compiled at a
 * route's first request, not at start: fastify compiles every route's schemas with Ajv when the app gets
 * ready, before it listens, and loading Ajv, building its instance and compiling some 40 routes' schemas
 * cost about a tenth of the CPU before the server answered anything. The compiler is fastify's own
 * (@fastify/ajv-compiler, resolved from fastify itself, given the app's Ajv options), so a request is
 * validated exactly as before; only when the validator is built moves.
 *
 * One difference fastify makes for any compiler given to it: a `headers` schema is passed on as
 * written, its property names not lowercased. The route table has none (src/schemas/api-routes.ts).
 */
import { createRequire } from 'node:module'
import type { FastifyServerOptions } from 'fastify'

type SchemaController = NonNullable<FastifyServerOptions['schemaController']>
/** A validator as fastify calls it: Ajv's, with `errors` set after a failed call. */
type Validator = ((data: unknown, context?: unknown) => unknown) & { errors?: unknown }
type Compile = (route: unknown) => Validator
type AjvOptions = unknown

/** fastify's default validator builder (what it uses when given none), loaded when first needed. */
function fastifyAjv(externalSchemas: unknown, options: AjvOptions): Compile {
  const fromFastify = createRequire(createRequire(import.meta.url).resolve('fastify'))
  const AjvCompiler = fromFastify('@fastify/ajv-compiler') as () => (externalSchemas: unknown, options: AjvOptions) => Compile
  return AjvCompiler()(externalSchemas, options)
}

export function schemaCompilers(): SchemaController {
  return {
    compilersFactory: {
      buildValidator: ((externalSchemas: unknown, options: AjvOptions): Compile => {
        let compile: Compile | undefined
        return (route) => {
          let validate: Validator | undefined
          const lazy = (data: unknown, context?: unknown) => {
            validate ??= (compile ??= fastifyAjv(externalSchemas, options))(route)
            return validate(data, context)
          }
          return Object.defineProperties(lazy, {
            // Why a request failed is read from the validator after the call.
            errors: { get: () => validate?.errors },
            // fastify gives an Ajv validator the request as the parent of the part it checks (so Ajv may
            // replace the part itself); this one always is one, once compiled.
            schemaEnv: { value: true },
          })
        }
      }) as unknown as NonNullable<SchemaController['compilersFactory']>['buildValidator'],
      // Response schemas document and are tested; they do not shape the bytes. A schema-built
      // serializer would silently drop any field a schema does not name, so bodies stay JSON.stringify
      // (and fast-json-stringify, with its own Ajv, is never loaded).
      buildSerializer: () => () => (data: unknown) => JSON.stringify(data),
    },
  }
}

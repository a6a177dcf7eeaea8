/**
 * What the typed client lets a caller write, checked by the compiler: test/shared/api-client.test.ts
 * compiles this file and expects no diagnostics, so an input the client should refuse that it
 * accepts (an unused `@ts-expect-error`) fails that test, as does a result type that drifts.
 * Nothing here runs.
 */
import type { AbortReceipt, CommandReceipt, PromptReceipt, ThreadSummary } from '../../src/schemas/index.js'
import { isApiError, type ApiClient, type ErrorCode } from '../../src/shared/api-client.js'

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false
const same = <A, B>(proof: Equal<A, B>) => proof

export async function callsAreTyped(th: ApiClient): Promise<void> {
  // Results are the success bodies of the route's schemas.
  same<ThreadSummary, Awaited<ReturnType<typeof th.call<'getThread'>>>>(true)
  same<PromptReceipt | CommandReceipt, Awaited<ReturnType<typeof th.call<'prompt'>>>>(true)
  same<AbortReceipt, Awaited<ReturnType<typeof th.call<'abort'>>>>(true)
  same<undefined, Awaited<ReturnType<typeof th.call<'deleteThread'>>>>(true)
  same<string, Awaited<ReturnType<typeof th.call<'metrics'>>>>(true)

  // A route without required input takes none; one with a path parameter needs it.
  await th.call('listThreads')
  await th.call('createThread')
  // @ts-expect-error the thread id is required
  await th.call('getThread')
  // @ts-expect-error `id`, not `threadId`
  await th.call('getThread', { params: { threadId: 't1' } })
  // @ts-expect-error a prompt needs a message
  await th.call('prompt', { params: { id: 't1' }, body: {} })
  // @ts-expect-error the message is a string
  await th.call('prompt', { params: { id: 't1' }, body: { message: 1 } })
  // @ts-expect-error no such admission
  await th.call('prompt', { params: { id: 't1' }, body: { message: 'hi', admission: 'maybe' } })
  // @ts-expect-error listing threads takes no body
  await th.call('listThreads', { body: { title: 'x' } })
  // @ts-expect-error no such route
  await th.call('listEverything')
  // An Idempotency-Key only where the server honours one.
  await th.call('abort', { params: { id: 't1' }, idempotencyKey: 'k1' })
  // @ts-expect-error a read takes no Idempotency-Key
  await th.call('getThread', { params: { id: 't1' }, idempotencyKey: 'k1' })

  // `request` answers every status, the body narrowed by it.
  const reply = await th.request('prompt', { params: { id: 't1' }, body: { message: 'hi' } })
  if (reply.status === 202) same<PromptReceipt, typeof reply.body>(true)
  if (reply.status === 422) same<string[] | undefined, typeof reply.body.suggestions>(true)
  if (reply.status === 409) same<string, typeof reply.body.reason>(true)
  // Every error body carries its stable code, the thing to switch on.
  if (reply.status === 409) same<ErrorCode, typeof reply.body.code>(true)
  if (!reply.ok) same<ErrorCode, typeof reply.body.code>(true)
  // The statuses every route shares (spread into the table) are there too.
  if (reply.status === 413) same<number | undefined, typeof reply.body.limit>(true)
  if (reply.status === 503) same<string, typeof reply.body.error>(true)
  // @ts-expect-error the prompt route never answers 418
  if (reply.status === 418) return

  // An error of a route, narrowed by its status.
  try {
    await th.call('abort', { params: { id: 't1' } })
  } catch (err) {
    if (isApiError(err, 'abort') && err.status === 409) same<string, typeof err.body.reason>(true)
    if (isApiError(err, 'abort')) same<ErrorCode | undefined, typeof err.code>(true)
    // @ts-expect-error no such code
    if (isApiError(err, 'abort') && err.code === 'RUN_OLD') return
    // @ts-expect-error a stop never answers 418
    if (isApiError(err, 'abort') && err.status === 418) return
  }
}

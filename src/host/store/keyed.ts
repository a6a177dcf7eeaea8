/**
 * The `Idempotency-Key` of the request being handled, carried along its async path so the store can
 * claim the key in the same commit as the command's journal write (a prompt's admission). A crash
 * after the command was journaled but before its answer was recorded then leaves the key pointing at
 * the journaled command, and a retry is answered from it instead of running it again.
 */
import { AsyncLocalStorage } from 'node:async_hooks'

export interface KeyedRequest {
  key: string
  /** The request's digest, as the answer will be recorded with. */
  fingerprint: string
}

export const keyedRequest = new AsyncLocalStorage<KeyedRequest>()

/**
 * How the NATS adapters read a refusal (src/host/cluster/nats-link.ts): every answer JetStream gives a
 * compare-and-set or conditional append that lost to another writer is `refused` — the writer is fenced,
 * the owner record or key is another's — and nothing else is, so a write that may still land is tried
 * again rather than taken for a loss. The errors are the client library's own, built from the error
 * object a server puts in its answer.
 */
import { JetStreamApiError } from '@nats-io/jetstream'
import { describe, expect, it } from 'vitest'
import { refused } from '../../src/host/cluster/nats-link.js'
import { EngineAway } from '../../src/host/cluster/port.js'

const answer = (code: number, err_code: number, description: string) => new JetStreamApiError({ code, err_code, description })

describe('a refusal from NATS', () => {
  it('is the wrong last sequence a single server answers, and the one a clustered server answers for a write racing another', () => {
    expect(refused(answer(400, 10071, 'wrong last sequence: 42'))).toBe(true)
    // nats-server 2.11+ in a cluster: another conditional write of the subject was still on its way.
    expect(refused(answer(400, 10164, 'wrong last sequence'))).toBe(true)
  })

  it('is not an answer that says the write may still land, nor a failure to reach the engine', () => {
    expect(refused(answer(409, 10158, 'duplicate message id is in process'))).toBe(false)
    expect(refused(answer(503, 10163, 'expected last sequence per subject temporarily unavailable'))).toBe(false)
    expect(refused(answer(400, 10070, 'wrong last msg ID: x'))).toBe(false)
    expect(refused(new EngineAway())).toBe(false)
    expect(refused(new Error('wrong last sequence'))).toBe(false)
  })
})

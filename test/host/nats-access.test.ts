/**
 * A node reaches a NATS that asks who it is (src/host/cluster/nats-link.ts `connectionOptions`, from
 * config.ts's reading of the NATS tools' variables): a user and password, a token, an nkey, a creds file
 * (a user JWT signed by an account of an operator the server trusts), and TLS with the server's CA and a
 * client certificate. Each against a real nats-server that demands it: the node with the right access
 * joins (its lease is in the engine, so JetStream answered it), without it is refused at once — the start
 * fails with the server's reason instead of retrying forever. Skipped, saying why, where nats-server (or,
 * for TLS, openssl) is not installed.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createAccount, createOperator, createUser, type KeyPair } from '@nats-io/nkeys'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { NatsAccess } from '../../src/host/cluster/nats-link.js'
import { natsMissing, startNats, type NatsServer } from '../support/nats-server.js'

const opensslMissing = spawnSync('openssl', ['version'], { stdio: 'ignore' }).status === 0 ? undefined : 'openssl is not installed: the TLS test makes its certificates with it; skipped'

/** Joins with `access`, and says which nodes the engine lists; the engine is closed after. */
async function join_(access: NatsAccess): Promise<string[]> {
  const { connectNats } = await import('../../src/host/cluster/nats.js')
  const engine = await connectNats(access, 'n1')
  try {
    await engine.membership.join()
    return (await engine.membership.live()).map((node) => node.name)
  } finally {
    await engine.close()
  }
}

describe.skipIf(natsMissing !== undefined)(`a node on a NATS that asks who it is${natsMissing ? ` (${natsMissing})` : ''}`, () => {
  let dir: string
  const servers: NatsServer[] = []
  const start = async (args: string[]) => {
    const server = await startNats({ args })
    servers.push(server)
    return server
  }
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'threadhost-nats-access-'))
  })
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()))
    rmSync(dir, { recursive: true, force: true })
  })

  it('a user and password: joins with them, is refused without them or with another password', async () => {
    const { url } = await start(['--user', 'th', '--pass', 'opensesame'])
    expect(await join_({ servers: [url], auth: { user: 'th', pass: 'opensesame' } })).toEqual(['n1'])
    await expect(join_({ servers: [url] })).rejects.toThrow(/authorization/i)
    await expect(join_({ servers: [url], auth: { user: 'th', pass: 'wrong' } })).rejects.toThrow(/authorization/i)
  })

  it('a token: joins with it, is refused with another', async () => {
    const { url } = await start(['--auth', 's3cret-token'])
    expect(await join_({ servers: [url], auth: { token: 's3cret-token' } })).toEqual(['n1'])
    await expect(join_({ servers: [url], auth: { token: 'another' } })).rejects.toThrow(/authorization/i)
  })

  it('an nkey: joins with the seed file of a key the server lists, is refused with another key', async () => {
    const user = createUser()
    const other = createUser()
    const conf = join(dir, 'nkey.conf')
    writeFileSync(conf, `authorization { users = [ { nkey: "${user.getPublicKey()}" } ] }\n`)
    // As `nsc` writes one: the seed between its decorations.
    const seedFile = join(dir, 'user.nk')
    writeFileSync(seedFile, `-----BEGIN USER NKEY SEED-----\n${new TextDecoder().decode(user.getSeed())}\n------END USER NKEY SEED------\n`)
    const otherFile = join(dir, 'other.nk')
    writeFileSync(otherFile, new TextDecoder().decode(other.getSeed()))
    const { url } = await start(['-c', conf])
    expect(await join_({ servers: [url], auth: { nkeyFile: seedFile } })).toEqual(['n1'])
    await expect(join_({ servers: [url], auth: { nkeyFile: otherFile } })).rejects.toThrow(/authorization/i)
  })

  it('a creds file: joins as a user of an account the server trusts, with JetStream on', async () => {
    const { operatorConf: conf, account } = operatorSetup(dir)
    const user = createUser()
    const userJwt = jwt(account, user, { type: 'user', version: 2, pub: {}, sub: {}, subs: -1, data: -1, payload: -1 })
    const credsFile = join(dir, 'user.creds')
    writeFileSync(credsFile, creds(userJwt, user))
    // A user the server cannot trace to its operator: signed by an account it was never told of.
    const stranger = createAccount()
    const strangerFile = join(dir, 'stranger.creds')
    writeFileSync(strangerFile, creds(jwt(stranger, user, { type: 'user', version: 2, pub: {}, sub: {}, subs: -1, data: -1, payload: -1 }), user))
    const { url } = await start(['-c', conf])
    expect(await join_({ servers: [url], auth: { credsFile } })).toEqual(['n1'])
    await expect(join_({ servers: [url], auth: { credsFile: strangerFile } })).rejects.toThrow(/authorization/i)
  })

  it.skipIf(opensslMissing !== undefined)(`TLS with the server's CA and a client certificate: joins; is refused without the CA, or without the certificate where the server asks for one${opensslMissing ? ` (${opensslMissing})` : ''}`, async () => {
    const files = certificates(dir)
    const { url } = await start(['--tls', '--tlscert', files.serverCert, '--tlskey', files.serverKey, '--tlsverify', '--tlscacert', files.ca])
    // By name, as a NATS server's certificate names it (nats.js checks an address against "localhost").
    const servers = [url.replace('nats://127.0.0.1', 'tls://localhost')]
    expect(await join_({ servers, tls: { caFile: files.ca, certFile: files.clientCert, keyFile: files.clientKey } })).toEqual(['n1'])
    // Node's own CAs do not know the server's.
    await expect(join_({ servers, tls: {} })).rejects.toThrow(/certificate/)
    // The server refuses the handshake once the client has ended it: the attempt is given up at its timeout.
    await expect(join_({ servers, tls: { caFile: files.ca } })).rejects.toThrow(/timeout/)
  }, 30_000)

  it('tls:// to a server that offers no TLS is refused, never spoken to in the clear', async () => {
    const { url } = await start([])
    await expect(join_({ servers: [url.replace('nats://', 'tls://')], tls: {} })).rejects.toThrow(/tls/i)
  })

  it('several servers: a node joins while some of them are down', async () => {
    const { url } = await start([])
    const { freePort } = await import('../support/nats-server.js')
    const down = [`nats://127.0.0.1:${await freePort()}`, `nats://127.0.0.1:${await freePort()}`]
    // nats.js tries them in a random order: three joins reach a server that is down first all but 1 time in 27.
    for (let k = 0; k < 3; k++) expect(await join_({ servers: [...down, url] })).toEqual(['n1'])
  })

  it('credentials that expire while it runs: the connection ends for good, and the engine says why', async () => {
    const { operatorConf, account } = operatorSetup(dir)
    const user = createUser()
    const credsFile = join(dir, 'expiring.creds')
    writeFileSync(credsFile, creds(jwt(account, user, { type: 'user', version: 2, pub: {}, sub: {}, subs: -1, data: -1, payload: -1 }, Math.floor(Date.now() / 1000) + 2), user))
    const { url } = await start(['-c', operatorConf])
    const { connectNats } = await import('../../src/host/cluster/nats.js')
    const engine = await connectNats({ servers: [url], auth: { credsFile } }, 'n1')
    try {
      await engine.membership.join()
      expect(await engine.ended).toMatch(/expired|authori[sz]ation/i)
    } finally {
      await engine.close()
    }
  }, 20_000)
})

/** What the account may use: everything, JetStream included (an account without storage limits has none). */
const ACCOUNT_LIMITS = { subs: -1, data: -1, payload: -1, imports: -1, exports: -1, wildcards: true, conn: -1, leaf: -1, mem_storage: -1, disk_storage: -1, streams: -1, consumer: -1 }

const base64url = (bytes: Uint8Array | string) => Buffer.from(bytes).toString('base64url')

/**
 * A server config that trusts a new operator, with its system account (JetStream in operator mode needs
 * one) and `account`, whose users may use JetStream.
 */
function operatorSetup(dir: string): { operatorConf: string; account: KeyPair } {
  const operator = createOperator()
  const system = createAccount()
  const account = createAccount()
  const operatorConf = join(dir, `operator-${randomUUID()}.conf`)
  const accountJwt = (key: KeyPair, limits: object) => jwt(operator, key, { type: 'account', version: 2, limits })
  writeFileSync(
    operatorConf,
    [
      `operator: ${jwt(operator, operator, { type: 'operator', version: 2, system_account: system.getPublicKey() })}`,
      `system_account: ${system.getPublicKey()}`,
      'resolver: MEMORY',
      `resolver_preload: { ${system.getPublicKey()}: ${accountJwt(system, { subs: -1, data: -1, payload: -1, conn: -1 })}, ${account.getPublicKey()}: ${accountJwt(account, ACCOUNT_LIMITS)} }`,
      '',
    ].join('\n'),
  )
  return { operatorConf, account }
}

/** A NATS JWT (ed25519-nkey): `subject`'s claims, signed by `issuer`; `exp`: when it expires (seconds since the epoch). */
function jwt(issuer: KeyPair, subject: KeyPair, nats: Record<string, unknown>, exp?: number): string {
  const header = base64url(JSON.stringify({ typ: 'JWT', alg: 'ed25519-nkey' }))
  const claims = base64url(JSON.stringify({ jti: randomUUID(), iat: Math.floor(Date.now() / 1000), ...(exp !== undefined ? { exp } : {}), iss: issuer.getPublicKey(), name: String(nats.type), sub: subject.getPublicKey(), nats }))
  return `${header}.${claims}.${base64url(issuer.sign(new TextEncoder().encode(`${header}.${claims}`)))}`
}

/** A creds file as `nsc` writes one: the user's JWT and its seed. */
function creds(userJwt: string, user: KeyPair): string {
  const seed = new TextDecoder().decode(user.getSeed())
  return `-----BEGIN NATS USER JWT-----\n${userJwt}\n------END NATS USER JWT------\n\n-----BEGIN USER NKEY SEED-----\n${seed}\n------END USER NKEY SEED------\n`
}

/** A CA, a server certificate for localhost and a client certificate, both signed by it (openssl). */
function certificates(dir: string) {
  const path = (name: string) => join(dir, name)
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' })
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes']
  openssl('req', '-x509', ...ec, '-keyout', path('ca.key'), '-out', path('ca.pem'), '-days', '1', '-subj', '/CN=threadhost test CA')
  writeFileSync(path('server.ext'), 'subjectAltName=DNS:localhost\n')
  writeFileSync(path('client.ext'), 'extendedKeyUsage=clientAuth\n')
  for (const [name, subject] of [['server', '/CN=localhost'], ['client', '/CN=n1']] as const) {
    openssl('req', ...ec, '-keyout', path(`${name}.key`), '-out', path(`${name}.csr`), '-subj', subject)
    openssl('x509', '-req', '-in', path(`${name}.csr`), '-CA', path('ca.pem'), '-CAkey', path('ca.key'), '-CAcreateserial', '-out', path(`${name}.pem`), '-days', '1', '-extfile', path(`${name}.ext`))
  }
  return { ca: path('ca.pem'), serverCert: path('server.pem'), serverKey: path('server.key'), clientCert: path('client.pem'), clientKey: path('client.key') }
}

/** Command-line and environment configuration, checked before anything starts. */
import { randomBytes } from 'node:crypto'
import { accessSync, constants, existsSync, statSync } from 'node:fs'
import { homedir, hostname } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import type { NatsAccess } from '../host/cluster/nats-link.js'
// Only the policy file's schema and loader: they import no pi, so a bad file is refused before anything heavy loads.
import { DEFAULT_TOOL_POLICY, loadToolPolicy, ToolPolicyError, type ToolPolicy } from '../runtime/tool-policy.js'

export interface Config {
  port: number
  host: string
  dataDir: string
  /** The user's pi agent dir (`--agent-dir`, else `$PI_CODING_AGENT_DIR`, else `~/.pi/agent`, as pi resolves it). */
  agentDir: string
  /** Allowed workspace roots; a thread's cwd lies inside one. The first is the default. */
  workspaces: string[]
  /** Project trust for every workspace: decided here, or `ask` in the thread as pi would. */
  trustProjects: 'yes' | 'no' | 'ask'
  /** Unset: pi's configured default when it has credentials, else `demo`. */
  model?: string
  idleMs: number
  demoDelayMs: number
  token?: string
  /** The token was generated because `--host` is beyond loopback and none was given: print it once. */
  tokenGenerated?: boolean
  /** `--tools-policy FILE` laid over the defaults: which tool calls run, ask first, or are refused. */
  toolPolicy: ToolPolicy
  inspector: boolean
  /** The structured log's level (`--log-level`). */
  logLevel: LoggerLevel
  clientDir: string
  /**
   * `--cluster nats://HOST:PORT`: a node of a cluster on NATS JetStream (docs/flows/cluster.md); unset:
   * one process, as always. `url`: as given (it holds no secret); `access`: the servers, TLS and credentials.
   */
  cluster?: { url: string; access: NatsAccess; nodeName: string; nodeUrl?: string }
}

export const usage = `threadhost — host pi agent threads that many tabs follow at once

  npm start -- [options]

  --port N            port to listen on (default 4317, or $PORT; 0 picks a free one)
  --host H            address to bind (default 127.0.0.1); beyond loopback a token is required
  --data-dir DIR      where threads and sessions are kept (default ./.threadhost)
  --agent-dir DIR     your pi agent dir: auth, models, settings, extensions, skills, prompts, MCP
                      (default $PI_CODING_AGENT_DIR, else ~/.pi/agent)
  --workspace DIR     a directory threads may work in (repeatable; default: the current directory)
  --trust-projects P  yes, no or ask (default): whether a workspace's .pi resources load; ask puts
                      pi's trust question in the thread unless pi already has a decision
  --model M           the default model for new threads: demo (offline) or <provider>/<model-id>
                      (default: pi's configured default when it has credentials, else demo)
  --idle-ms N         dispose a thread's runtime after N ms without a run (default 600000)
  --demo-delay-ms N   the demo model's delay between streamed words (default 20)
  --token T           bearer token required on every /api route (or $THREADHOST_TOKEN): at least
                      16 characters, no blanks. Binding beyond loopback without one generates one
                      and prints it once
  --tools-policy FILE
                      JSON: allow, ask or deny per tool, and ask or deny outside the workspace
                      (README: Tool permissions), e.g.
                      {"tools":{"bash":"allow","*":"ask"},"outsideWorkspace":"deny"}
  --inspector on|off  the machine inspector (default on when bound to loopback)
  --log-level L       trace, debug, info (default), warn, error, fatal or silent: the JSON log on
                      stdout, one line per request at info
  --cluster URL[,URL…]
                      join a cluster on NATS JetStream (nats://HOST:PORT, or tls://HOST:PORT to
                      require TLS): every node serves every thread; all nodes share --data-dir and the
                      workspaces on one mount (README: Cluster). Credentials and TLS files come from the
                      NATS tools' variables: NATS_CREDS, NATS_NKEY, NATS_TOKEN, or NATS_USER and
                      NATS_PASSWORD; NATS_CA, NATS_CERT and NATS_KEY
  --node-name NAME    this node's name in the cluster (default: the host name)
  --node-url URL      where the other nodes reach this one over HTTP (default: http://HOST:PORT when
                      --host is one address); commands for threads it owns then come straight here
`

export class ConfigError extends Error {}

/** What `--log-level` takes: pino's levels, and `silent`. */
const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const
export type LoggerLevel = (typeof LOG_LEVELS)[number]

const MIN_TOKEN_CHARS = 16
const TOKEN = new RegExp(`^\\S{${MIN_TOKEN_CHARS},}$`)

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/

export function parseConfig(argv: string[], env: NodeJS.ProcessEnv = process.env): Config {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'data-dir': { type: 'string' },
      'agent-dir': { type: 'string' },
      workspace: { type: 'string', multiple: true },
      'trust-projects': { type: 'string' },
      model: { type: 'string' },
      'idle-ms': { type: 'string' },
      'demo-delay-ms': { type: 'string' },
      token: { type: 'string' },
      'tools-policy': { type: 'string' },
      inspector: { type: 'string' },
      'log-level': { type: 'string' },
      cluster: { type: 'string' },
      'node-name': { type: 'string' },
      'node-url': { type: 'string' },
      help: { type: 'boolean' },
    },
    strict: true,
  })
  if (values.help) throw new ConfigError(usage)
  const host = values.host ?? '127.0.0.1'
  let token = values.token ?? (env.THREADHOST_TOKEN || undefined)
  if (token !== undefined && !TOKEN.test(token)) {
    throw new ConfigError(
      `${values.token !== undefined ? '--token' : 'THREADHOST_TOKEN'} must be at least ${MIN_TOKEN_CHARS} characters with no blanks ` +
        `(it guards an agent that can run commands); for example ${randomBytes(24).toString('base64url')}`,
    )
  }
  // Beyond loopback a token is required: the safe path is the easy one, so one is made (and printed once).
  const tokenGenerated = !LOOPBACK.test(host) && token === undefined
  if (tokenGenerated) token = randomBytes(24).toString('base64url')
  // The inspector shows every thread's machines and events: on by default only on loopback.
  const inspector = values.inspector ?? (LOOPBACK.test(host) ? 'on' : 'off')
  const trustProjects = values['trust-projects'] ?? 'ask'
  if (trustProjects !== 'yes' && trustProjects !== 'no' && trustProjects !== 'ask') {
    throw new ConfigError(`--trust-projects takes yes, no or ask, not ${trustProjects}`)
  }
  if (inspector !== 'on' && inspector !== 'off') throw new ConfigError(`--inspector takes on or off, not ${inspector}`)
  // THREADHOST_DEBUG, the older switch for the host's debug lines, still means debug.
  const logLevel = values['log-level'] ?? (env.THREADHOST_DEBUG ? 'debug' : 'info')
  if (values['node-name'] !== undefined && values.cluster === undefined) throw new ConfigError('--node-name names a node of a cluster: give --cluster too')
  const access = values.cluster === undefined ? undefined : natsAccess(values.cluster, env)
  if (values['node-url'] !== undefined && values.cluster === undefined) throw new ConfigError('--node-url is where the other nodes of a cluster reach this one: give --cluster too')
  if (values['node-url'] !== undefined && !/^https?:\/\/[^\s/?#]+\/?$/.test(values['node-url'])) throw new ConfigError(`--node-url takes http://HOST:PORT, not ${values['node-url']}`)
  const nodeName = values['node-name'] ?? hostname()
  if (!/^[\w.-]{1,64}$/.test(nodeName)) throw new ConfigError(`--node-name takes 1 to 64 letters, digits, '.', '_' or '-', not ${nodeName}`)
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) throw new ConfigError(`--log-level takes one of ${LOG_LEVELS.join(', ')}, not ${logLevel}`)
  return {
    port: integer('--port', values.port ?? env.PORT ?? '4317', 0, 65535),
    host,
    dataDir: resolve(values['data-dir'] ?? '.threadhost'),
    agentDir: resolve(values['agent-dir'] ?? env.PI_CODING_AGENT_DIR ?? join(homedir(), '.pi', 'agent')),
    workspaces: directories('--workspace', values.workspace ?? [process.cwd()]),
    trustProjects,
    ...(values.model !== undefined ? { model: values.model } : {}),
    idleMs: integer('--idle-ms', values['idle-ms'] ?? '600000', 1, 2 ** 31 - 1),
    demoDelayMs: integer('--demo-delay-ms', values['demo-delay-ms'] ?? '20', 0, 60_000),
    token,
    ...(tokenGenerated ? { tokenGenerated } : {}),
    toolPolicy: toolPolicy(values['tools-policy']),
    inspector: inspector === 'on',
    logLevel: logLevel as LoggerLevel,
    clientDir: resolve(import.meta.dirname, '../../dist/client'),
    ...(values.cluster !== undefined && access ? { cluster: { url: values.cluster, access, nodeName, ...(values['node-url'] !== undefined ? { nodeUrl: values['node-url'].replace(/\/$/, '') } : {}) } } : {}),
  }
}

function toolPolicy(file: string | undefined): ToolPolicy {
  if (file === undefined) return DEFAULT_TOOL_POLICY
  try {
    return loadToolPolicy(resolve(file))
  } catch (error) {
    if (error instanceof ToolPolicyError) throw new ConfigError(`--tools-policy ${error.message}`)
    throw error
  }
}

/**
 * `--cluster`'s servers, and how to reach them from the NATS tools' own environment variables (the
 * `nats` CLI reads the same). Credentials never come in the URL: a command line is seen by every
 * process on the machine.
 */
function natsAccess(spec: string, env: NodeJS.ProcessEnv): NatsAccess {
  const servers = spec.split(',').map((server) => server.trim())
  for (const server of servers) {
    // Whatever its shape, an entry with an `@` is never repeated whole: what comes before it may be a password.
    const shown = server.replace(/^.*@/, '…@')
    if (server.includes('@')) throw new ConfigError(`--cluster ${shown}: give NATS credentials in NATS_USER and NATS_PASSWORD, NATS_TOKEN, NATS_NKEY or NATS_CREDS, not in the URL`)
    if (!/^(nats|tls):\/\/[^\s/,]+$/.test(server)) throw new ConfigError(`--cluster takes nats://HOST:PORT (several: comma-separated), not ${shown}`)
  }
  const given = (name: string) => env[name] || undefined
  const file = (name: string) => {
    const raw = given(name)
    if (raw === undefined) return undefined
    // As the nats CLI reads them: a leading ~ is the home dir (no shell expands it in an env file).
    const path = resolve(raw.replace(/^~(?=$|\/)/, homedir()))
    try {
      accessSync(path, constants.R_OK)
      if (!statSync(path).isFile()) throw new Error('not a file')
    } catch {
      throw new ConfigError(`${name} ${raw}: not a file this process can read`)
    }
    return path
  }
  const ways = ['NATS_CREDS', 'NATS_NKEY', 'NATS_TOKEN', 'NATS_USER'].filter((name) => given(name) !== undefined)
  if (ways.length > 1) throw new ConfigError(`${ways.join(' and ')}: give one way to sign in to NATS`)
  if (given('NATS_PASSWORD') !== undefined && given('NATS_USER') === undefined) throw new ConfigError('NATS_PASSWORD is the password of NATS_USER: give NATS_USER too')
  const [credsFile, nkeyFile, token, user] = [file('NATS_CREDS'), file('NATS_NKEY'), given('NATS_TOKEN'), given('NATS_USER')]
  const auth: NatsAccess['auth'] =
    credsFile !== undefined ? { credsFile } : nkeyFile !== undefined ? { nkeyFile } : token !== undefined ? { token } : user !== undefined ? { user, pass: given('NATS_PASSWORD') ?? '' } : undefined
  const [caFile, certFile, keyFile] = [file('NATS_CA'), file('NATS_CERT'), file('NATS_KEY')]
  if ((certFile === undefined) !== (keyFile === undefined)) throw new ConfigError('NATS_CERT and NATS_KEY are a client certificate and its key: give both')
  const tlsFiles = { ...(caFile ? { caFile } : {}), ...(certFile ? { certFile } : {}), ...(keyFile ? { keyFile } : {}) }
  const tls = servers.some((server) => server.startsWith('tls://')) || Object.keys(tlsFiles).length > 0 ? tlsFiles : undefined
  return { servers, ...(tls ? { tls } : {}), ...(auth ? { auth } : {}) }
}

function directories(name: string, raw: string[]): string[] {
  return raw.map((dir) => {
    const path = resolve(dir)
    if (!existsSync(path) || !statSync(path).isDirectory()) throw new ConfigError(`${name} ${dir}: not a directory`)
    return path
  })
}

function integer(name: string, raw: string, min: number, max: number): number {
  const n = Number(raw)
  if (!Number.isInteger(n) || n < min || n > max) throw new ConfigError(`${name} takes an integer from ${min} to ${max}, not ${raw}`)
  return n
}

/**
 * The models threadhost can run: the user's pi model runtime (their `auth.json`, `models.json` and
 * provider keys in the environment, read by pi's own `ModelRuntime`) plus the offline `demo`.
 *
 * One per process, shared by every session, so an OAuth refresh written by one thread is the
 * credential the next one uses. Names on threadhost's API are `demo` or `<provider>/<model-id>`.
 */
import { join } from 'node:path'
import type { Api, Model, Provider } from '@earendil-works/pi-ai'
import { ModelRuntime, SettingsManager } from '@earendil-works/pi-coding-agent'
import type { ModelInfo } from '../schemas/index.js'
import type { ModelCatalog, ModelCheck } from './port.js'
import { createDemoProvider, DEMO_MODEL, DEMO_PROVIDER } from './demo-model.js'

/**
 * Makes `agentDir` the agent dir of this whole process. Most of pi takes it as an option, but some
 * parts only read `PI_CODING_AGENT_DIR` at call time — the MCP extension's `mcp.json`, its log and
 * OAuth store among them — so threadhost, which serves one agent dir per process, sets it once here.
 */
export function usePiAgentDir(agentDir: string): void {
  process.env.PI_CODING_AGENT_DIR = agentDir
}

export interface PiModelsOptions {
  agentDir: string
  /** The demo model's pause between streamed chunks (ms). */
  demoDelayMs?: number
}

export class PiModels implements ModelCatalog {
  private constructor(
    readonly runtime: ModelRuntime,
    private readonly demo: Model<Api>,
  ) {}

  static async create(options: PiModelsOptions): Promise<PiModels> {
    usePiAgentDir(options.agentDir)
    const runtime = await ModelRuntime.create({
      authPath: join(options.agentDir, 'auth.json'),
      modelsPath: join(options.agentDir, 'models.json'),
      // Catalog refreshes over the network are pi's interactive business; a host starts from what is on disk.
      allowModelNetwork: false,
    })
    const demo = createDemoProvider({ delayMs: options.demoDelayMs ?? 20 })
    runtime.registerNativeProvider(demo.provider)
    return new PiModels(runtime, demo.model as Model<Api>)
  }

  /** Adds a provider (tests register pi-ai's faux provider to script exact replies). */
  register(provider: Provider): void {
    this.runtime.registerNativeProvider(provider)
  }

  /** pi's configuration error for `models.json`, if it has one (shown at start, never fatal). */
  configError(): string | undefined {
    return this.runtime.getError()
  }

  async list(): Promise<ModelInfo[]> {
    const available = await this.runtime.getAvailable()
    return [this.demo, ...available.filter((m) => m.provider !== DEMO_PROVIDER)].map((m) => this.info(m))
  }

  async check(name: string): Promise<ModelCheck> {
    const model = this.find(name)
    if (!model) return { ok: false, reason: `Unknown model '${name}': use 'demo' or '<provider>/<model-id>' (GET /api/models lists them).` }
    if (model.provider === DEMO_PROVIDER) return { ok: true, model: this.info(model) }
    const auth = await this.runtime.getAuth(model).catch(() => undefined)
    if (!auth) {
      return {
        ok: false,
        reason: `Model '${name}' has no credentials: log in with pi (/login) or set the provider's API key for '${model.provider}'.`,
      }
    }
    return { ok: true, model: this.info(model) }
  }

  /** pi's model object for a name this catalog accepted. */
  find(name: string): Model<Api> | undefined {
    if (name === DEMO_MODEL) return this.demo
    const slash = name.indexOf('/')
    if (slash <= 0) return undefined
    return this.runtime.getModel(name.slice(0, slash), name.slice(slash + 1))
  }

  /**
   * The default for new threads: pi's own default (settings.json's defaultProvider/defaultModel)
   * when it has credentials, else `demo`.
   */
  async piDefault(agentDir: string, cwd: string): Promise<string> {
    const settings = SettingsManager.create(cwd, agentDir)
    const provider = settings.getDefaultProvider()
    const id = settings.getDefaultModel()
    if (!provider || !id) return DEMO_MODEL
    const name = `${provider}/${id}`
    return (await this.check(name)).ok ? name : DEMO_MODEL
  }

  /** How threadhost's API names pi's model: `demo`, or `<provider>/<model-id>`. */
  nameOf(model: Model<Api>): string {
    return model.provider === DEMO_PROVIDER ? DEMO_MODEL : `${model.provider}/${model.id}`
  }

  private info(model: Model<Api>): ModelInfo {
    return {
      name: this.nameOf(model),
      provider: model.provider,
      id: model.id,
      label: model.name,
      reasoning: model.reasoning,
      contextWindow: model.contextWindow,
      images: model.input.includes('image'),
    }
  }
}

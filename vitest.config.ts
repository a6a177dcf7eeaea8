import { playwright } from '@vitest/browser-playwright'
import { defineConfig } from 'vitest/config'
import { CHROMIUM_ARGS, findChromium } from './test/chromium.js'

// Where Chromium is absent, the browser and e2e projects are replaced by one test that fails saying
// how to install it, so the node project still runs and the failure is not mysterious.

const chromium = findChromium()
const MISSING = 'Chromium not found. Install Debian\'s Chromium: apt-get update && apt-get install -y chromium (or set CHROMIUM_PATH). Never run `npx playwright install`.'
if (!chromium) console.error(`\n[threadhost] ${MISSING}\n[threadhost] The browser and e2e projects will fail until it is installed.\n`)

const missingProject = (name: string) => ({
  test: {
    name,
    include: ['test/ui/chromium-missing.check.ts'],
    environment: 'node' as const,
    env: { THREADHOST_CHROMIUM_MISSING: MISSING },
  },
})

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'node',
          include: ['test/**/*.test.ts'],
          exclude: ['test/ui/**', 'test/e2e/**', 'test/model/**', 'test/cluster/**'],
          environment: 'node',
          testTimeout: 20_000,
          hookTimeout: 20_000,
        },
      },
      // The model-based tests (walks of the thread machine against the real server, restarts, faults):
      // the slowest Node tests, so a project of their own that `--project node` leaves out and
      // `--project model` runs alone. `npm test` runs both.
      {
        test: {
          name: 'model',
          include: ['test/model/**/*.test.ts'],
          environment: 'node',
          testTimeout: 20_000,
          hookTimeout: 20_000,
        },
      },
      // Several threadhost processes on a real nats-server (skipped, saying why, where it is not installed).
      {
        test: {
          name: 'cluster',
          include: ['test/cluster/**/*.test.ts'],
          environment: 'node',
          testTimeout: 60_000,
          hookTimeout: 30_000,
          fileParallelism: false,
        },
      },
      chromium
        ? {
            optimizeDeps: {
              include: [
                'lit',
                'lit/decorators.js',
                'lit/directives/repeat.js',
                'lit/directives/unsafe-html.js',
                'marked',
                'dompurify',
                'xstate',
                '@xstate/store',
                'highlight.js/lib/core',
                'highlight.js/lib/languages/bash',
                'highlight.js/lib/languages/javascript',
                'highlight.js/lib/languages/typescript',
                'highlight.js/lib/languages/json',
                'highlight.js/lib/languages/python',
                'highlight.js/lib/languages/xml',
                'highlight.js/lib/languages/css',
                'highlight.js/lib/languages/yaml',
                'highlight.js/lib/languages/markdown',
                'highlight.js/lib/languages/diff',
                'highlight.js/lib/languages/rust',
                'highlight.js/lib/languages/go',
                'highlight.js/lib/languages/sql',
              ],
            },
            test: {
              name: 'browser',
              include: ['test/ui/**/*.browser.test.ts'],
              setupFiles: ['test/ui/setup.ts'],
              testTimeout: 20_000,
              browser: {
                enabled: true,
                headless: true,
                screenshotFailures: false,
                instances: [{ browser: 'chromium' as const }],
                provider: playwright({ launchOptions: { executablePath: chromium, args: CHROMIUM_ARGS } }),
              },
            },
          }
        : missingProject('browser'),
      chromium
        ? {
            test: {
              name: 'e2e',
              include: ['test/e2e/**/*.e2e.test.ts'],
              environment: 'node' as const,
              globalSetup: ['test/e2e/global-setup.ts'],
              env: { CHROMIUM_PATH: chromium },
              testTimeout: 120_000,
              hookTimeout: 90_000,
              fileParallelism: false,
            },
          }
        : missingProject('e2e'),
    ],
  },
})

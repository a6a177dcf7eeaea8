// Run only when vitest.config.ts finds no Chromium: one clear failure instead of a mysterious one.
import { test } from 'vitest'

test('Chromium is installed for the browser and e2e tests', () => {
  throw new Error(process.env.THREADHOST_CHROMIUM_MISSING ?? 'Chromium not found: apt-get install -y chromium')
})

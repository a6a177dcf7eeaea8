#!/usr/bin/env node
// Compiles the server (src/server/main.ts and everything it imports from src) into one ES module,
// dist/server/main.js, so `npm start` runs JavaScript instead of compiling TypeScript at start-up.
// Packages stay external (imported from node_modules as usual). esbuild comes with tsx and vite.
// `npm run build:server` runs it by hand; `npm start` runs it when src is newer than the build.
import { existsSync, readdirSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

export const root = join(dirname(fileURLToPath(import.meta.url)), '..')
export const serverEntry = join(root, 'dist/server/main.js')

/** The newest modification time of any file under `dir`. */
export function newest(dir) {
  let t = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    t = Math.max(t, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs)
  }
  return t
}

/** Whether dist/server/main.js is missing or older than anything in src (or this script). */
export function serverStale() {
  if (!existsSync(serverEntry)) return true
  const built = statSync(serverEntry).mtimeMs
  return newest(join(root, 'src')) > built || statSync(fileURLToPath(import.meta.url)).mtimeMs > built
}

export async function buildServer() {
  const { build } = await import('esbuild')
  await build({
    entryPoints: [join(root, 'src/server/main.ts')],
    outfile: serverEntry,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    packages: 'external',
    sourcemap: 'linked',
    logLevel: 'warning',
    // config.ts finds dist/client from import.meta.dirname: dist/server is as deep as src/server.
    tsconfig: join(root, 'tsconfig.json'),
  })
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await buildServer()
  console.log(`built ${serverEntry}`)
}

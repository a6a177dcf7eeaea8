#!/usr/bin/env node
// Compiles the server (src/server/main.ts and everything it imports from src) into one ES module,
// dist/server/main.js, so `npm start` runs JavaScript instead of compiling TypeScript at start-up.
// Packages stay external (imported from node_modules as usual). esbuild comes with tsx and vite.
// `npm run build:server` runs it by hand; `npm start` runs it when src is newer than the build.
import { existsSync, readdirSync, rmSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

export const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const outdir = join(root, 'dist/server')
export const serverEntry = join(outdir, 'main.js')

/** The newest modification time of any file under `dir`. */
export function newest(dir) {
  let t = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    t = Math.max(t, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs)
  }
  return t
}

/**
 * Whether dist/server/main.js is missing or older than anything in src (or this script). `sources`:
 * the newest time under src, when the caller has it already.
 */
export function serverStale(sources = newest(join(root, 'src'))) {
  if (!existsSync(serverEntry)) return true
  const built = statSync(serverEntry).mtimeMs
  return sources > built || statSync(fileURLToPath(import.meta.url)).mtimeMs > built
}

export async function buildServer() {
  const { build } = await import('esbuild')
  // The chunks of the build before: names carry a content hash, so a new build leaves the old ones behind.
  for (const name of existsSync(outdir) ? readdirSync(outdir) : []) if (name.startsWith('chunk-')) rmSync(join(outdir, name))
  await build({
    entryPoints: [join(root, 'src/server/main.ts')],
    outdir,
    // What main.ts and serve.ts import dynamically stays a chunk of its own, loaded when it is imported:
    // the flags are checked and a taken port found before the server and pi are loaded, and the NATS
    // client only with --cluster (one file, every import made at start-up, cost ≈ 0.2 s of it).
    splitting: true,
    chunkNames: 'chunk-[hash]',
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

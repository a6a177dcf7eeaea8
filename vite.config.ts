/**
 * The web client bundle: root src/ui (index.html there), output dist/client, which the server
 * serves at `/`. `npm run build` runs `vite build`.
 *
 * Dev: `THREADHOST_API=http://127.0.0.1:PORT npx vite` proxies /api to a running server.
 */
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vite'

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url))

export default defineConfig({
  root: here('./src/ui'),
  base: './',
  build: {
    outDir: here('./dist/client'),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
    // The inspector's elkjs chunk (~1.5 MB) is loaded only on #/inspect; it is big by nature.
    chunkSizeWarningLimit: 2000,
  },
  server: {
    // The API only answers its own origin when it has no token, so the proxy speaks as that origin.
    proxy: process.env.THREADHOST_API
      ? { '/api': { target: process.env.THREADHOST_API, changeOrigin: true, headers: { origin: process.env.THREADHOST_API } } }
      : {},
  },
})

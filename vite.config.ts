/**
 * The web client bundle: root src/ui (index.html there), output dist/client, which the server
 * serves at `/`. `npm run build` runs `vite build`.
 *
 * Dev: `THREADHOST_API=http://127.0.0.1:PORT npx vite` proxies /api to a running server.
 *
 * A build is always a production build. Vite takes NODE_ENV from the environment when it is set,
 * and a build started under the test runner (the e2e global setup) inherits NODE_ENV=test: that
 * made a development bundle (lit's dev mode, its warnings and checks) which `npm start` then served
 * from dist/client. `--mode development` is still there for whoever wants a dev bundle on purpose.
 */
import { fileURLToPath } from 'node:url'
import { defineConfig, type UserConfig } from 'vite'

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url))

export default defineConfig(({ command, mode }) => {
  if (command === 'build' && mode === 'production') process.env.NODE_ENV = 'production'
  return config
})

const config: UserConfig = {
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
}

/** Entry of the browser bundle (vite root: src/ui). */
import './app-shell.js'
import { registerServiceWorker } from './service-worker.js'

registerServiceWorker()

/** Entry of the browser bundle (vite root: src/ui). */
import './app-shell.js'

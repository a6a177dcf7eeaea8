/**
 * The installed app's service worker (src/ui/public/sw.js): it keeps the shell, never API answers,
 * and shows pushed notifications. Registered where the browser has service workers and the page is a
 * secure context (https, or http on localhost); anywhere else the page works as before without it.
 */
export function registerServiceWorker(): void {
  if (!('serviceWorker' in navigator) || !globalThis.isSecureContext) return
  const register = () => {
    navigator.serviceWorker.register('./sw.js').catch((error: unknown) => console.warn('threadhost: no service worker:', error))
  }
  // After the page has loaded: the worker's first fetch of the shell never competes with the page's own.
  if (document.readyState === 'complete') register()
  else addEventListener('load', register, { once: true })
}

/**
 * threadhost's service worker: the app's shell (the page, its scripts, styles and icons) is kept so
 * the installed app opens at once and still opens offline; nothing under /api (or /metrics) is ever
 * intercepted or kept — threads, follows and answers always come from the server. Also shows the
 * notifications the server pushes (src/host/push), unless a tab of the app is in view.
 *
 * Plain JavaScript served as it is (src/ui/public): a worker's script must keep its URL.
 */
const SHELL = 'threadhost-shell-v1'
const PRECACHE = ['./', './manifest.webmanifest', './icons/icon-192.png', './icons/icon-512.png', './icons/icon.svg']
const scope = new URL(self.registration.scope)

self.addEventListener('install', (event) => {
  event.waitUntil(
    caches
      .open(SHELL)
      .then(async (cache) => {
        await cache.addAll(PRECACHE)
        // The page names this build's scripts and styles: keep them too, so the shell opens offline at once.
        const page = await (await cache.match('./')).text()
        const assets = [...page.matchAll(/(?:src|href)="(\.\/assets\/[^"]+)"/g)].map((m) => m[1])
        await cache.addAll(assets)
      })
      .then(() => self.skipWaiting()),
  )
})

self.addEventListener('activate', (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((names) => Promise.all(names.filter((name) => name !== SHELL).map((name) => caches.delete(name))))
      .then(() => self.clients.claim()),
  )
})

/** The server's own answers, which are never the shell's to keep. */
function isServerData(url) {
  const path = url.pathname.slice(scope.pathname.length - 1)
  return path.startsWith('/api/') || path === '/api' || path === '/metrics'
}

self.addEventListener('fetch', (event) => {
  const request = event.request
  const url = new URL(request.url)
  // Not ours to answer: another origin, anything but GET, and every API request (left to the network untouched).
  if (request.method !== 'GET' || url.origin !== scope.origin || !url.pathname.startsWith(scope.pathname) || isServerData(url)) return
  if (request.mode === 'navigate') {
    // The page: the network's when it answers (a new build shows at once), else the kept shell.
    event.respondWith(
      fetch(request)
        .then((response) => {
          if (response.ok) {
            const copy = response.clone()
            void caches.open(SHELL).then((cache) => cache.put('./', copy))
          }
          return response
        })
        .catch(() => caches.match('./').then((kept) => kept ?? Response.error())),
    )
    return
  }
  // Scripts, styles and icons: vite names each build's files by their content, so a kept one is never stale.
  event.respondWith(
    caches.match(request).then(
      (kept) =>
        kept ??
        fetch(request).then((response) => {
          if (response.ok && response.type === 'basic') {
            const copy = response.clone()
            void caches.open(SHELL).then((cache) => cache.put(request, copy))
          }
          return response
        }),
    ),
  )
})

self.addEventListener('push', (event) => {
  let message
  try {
    message = event.data.json()
  } catch {
    return
  }
  event.waitUntil(
    self.clients.matchAll({ type: 'window', includeUncontrolled: true }).then((tabs) => {
      // Someone is looking at the app: the page shows it already.
      if (tabs.some((tab) => tab.visibilityState === 'visible')) return
      return self.registration.showNotification(message.title, {
        body: message.body,
        tag: `${message.kind}:${message.threadId}`,
        icon: './icons/icon-192.png',
        badge: './icons/icon-192.png',
        data: { url: new URL(message.url, scope).href },
      })
    }),
  )
})

self.addEventListener('notificationclick', (event) => {
  event.notification.close()
  const url = event.notification.data?.url ?? scope.href
  event.waitUntil(
    self.clients.matchAll({ type: 'window', includeUncontrolled: true }).then((tabs) => {
      const tab = tabs[0]
      if (tab) return tab.navigate(url).then((t) => (t ?? tab).focus())
      return self.clients.openWindow(url)
    }),
  )
})

/**
 * `<push-toggle>`: the switch at the foot of the thread list that turns notifications on for this browser — when a question waits or
 * a run ends while no tab of the app is in view, the phone (or desktop) shows it. On: ask permission,
 * subscribe the service worker's push manager with the server's VAPID key, hand the subscription to
 * the server (`PUT /api/push/subscription`). Off: the reverse. Hidden where the browser has no Push API
 * (or the page is not a secure context).
 */
import { LitElement, css, html, nothing, svg } from 'lit'
import { customElement, state } from 'lit/decorators.js'
import type { PushSubscriptionBody } from '../schemas/push.js'
import { client, describeError } from './api.js'
import { controls, tokens } from './styles.js'

type State = 'unsupported' | 'off' | 'on' | 'working' | 'denied'

const supported = () =>
  globalThis.isSecureContext && 'serviceWorker' in navigator && 'PushManager' in globalThis && 'Notification' in globalThis

const bytes = (base64url: string) => Uint8Array.from(atob(base64url.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0))

const sameKey = (a: ArrayBuffer, b: Uint8Array) => a.byteLength === b.length && new Uint8Array(a).every((byte, i) => byte === b[i])

/** What the server keeps of a subscription: its JSON form, whose fields the browser always fills. */
const body = (subscription: PushSubscription) => JSON.parse(JSON.stringify(subscription)) as PushSubscriptionBody

@customElement('push-toggle')
export class PushToggle extends LitElement {
  static override styles = [
    tokens,
    controls,
    css`
      /* At the foot of the thread list. */
      :host([hidden]) {
        display: none;
      }
      :host {
        display: block;
        padding: 0.4rem 0.5rem;
        border-top: 1px solid var(--th-border);
      }
      button {
        display: flex;
        align-items: center;
        gap: 0.5rem;
        width: 100%;
        text-align: start;
      }
      button[aria-pressed='true'] svg {
        color: var(--th-accent);
      }
      .hidden {
        position: absolute;
        width: 1px;
        height: 1px;
        overflow: hidden;
        clip: rect(0 0 0 0);
        white-space: nowrap;
      }
    `,
  ]

  @state() private state: State = supported() ? 'off' : 'unsupported'
  @state() private problem = ''

  override connectedCallback(): void {
    super.connectedCallback()
    this.hidden = this.state === 'unsupported'
    if (this.state !== 'unsupported') void this.#sync()
  }

  override render() {
    if (this.state === 'unsupported') return nothing
    const on = this.state === 'on'
    const label = this.state === 'denied' ? 'Notifications are blocked for this site in the browser settings' : 'Notify me when a question waits or a run ends'
    return html`<button
        class="ghost"
        aria-pressed=${on ? 'true' : 'false'}
        title=${this.problem || label}
        ?disabled=${this.state === 'working' || this.state === 'denied'}
        @click=${() => void (on ? this.#off() : this.#on())}
      >
        <svg width="16" height="16" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" aria-hidden="true">
          <path d="M6 8a6 6 0 0 1 12 0c0 7 3 9 3 9H3s3-2 3-9" />
          <path d="M10.3 21a1.94 1.94 0 0 0 3.4 0" />
          ${on ? nothing : svg`<path d="M3 3l18 18" />`}
        </svg>
        Notifications</button
      >${this.problem ? html`<span class="hidden" role="alert">${this.problem}</span>` : nothing}`
  }

  /** This browser's subscription, if any, is the server's too (a data dir made anew forgets them). */
  async #sync(): Promise<void> {
    if (Notification.permission === 'denied') return void (this.state = 'denied')
    const registration = await navigator.serviceWorker.getRegistration()
    const subscription = await registration?.pushManager.getSubscription()
    if (!subscription) return
    try {
      await client.call('subscribePush', { body: body(subscription) })
      this.state = 'on'
    } catch {
      // Unreachable now: the bell says off, and turning it on tries again.
    }
  }

  async #on(): Promise<void> {
    this.state = 'working'
    this.problem = ''
    try {
      if ((await Notification.requestPermission()) !== 'granted') return void (this.state = 'denied')
      const registration = await navigator.serviceWorker.ready
      const { publicKey } = await client.call('pushKey')
      let subscription = await registration.pushManager.getSubscription()
      const key = subscription?.options.applicationServerKey
      // Subscribed with another server's key (a new data dir): that subscription is dead, make a new one.
      if (subscription && key && !sameKey(key, bytes(publicKey))) {
        await subscription.unsubscribe()
        subscription = null
      }
      subscription ??= await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: bytes(publicKey) })
      await client.call('subscribePush', { body: body(subscription) })
      this.state = 'on'
    } catch (error) {
      this.problem = `Notifications could not be turned on: ${describeError(error)}`
      this.state = 'off'
    }
  }

  async #off(): Promise<void> {
    this.state = 'working'
    this.problem = ''
    try {
      const registration = await navigator.serviceWorker.ready
      const subscription = await registration.pushManager.getSubscription()
      if (subscription) {
        await client.call('unsubscribePush', { body: { endpoint: subscription.endpoint } })
        await subscription.unsubscribe()
      }
      this.state = 'off'
    } catch (error) {
      this.problem = `Notifications could not be turned off: ${describeError(error)}`
      this.state = 'on'
    }
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'push-toggle': PushToggle
  }
}

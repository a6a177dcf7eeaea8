/** How <new-thread-view> looks: the choices and the composer, centred while nothing is said yet. */
import { css } from 'lit'
import { tokens, controls } from './styles.js'

export const newThreadStyles = [
  tokens,
  controls,
  css`
    :host {
      display: flex;
      flex-direction: column;
      justify-content: center;
      height: 100%;
      min-height: 0;
      background: var(--th-bg);
    }
    section {
      width: 100%;
      max-width: 46rem;
      margin: 0 auto;
      padding: 1.5rem 1rem;
      box-sizing: border-box;
      display: grid;
      gap: 0.75rem;
    }
    h1 {
      margin: 0;
      font-size: 1.5rem;
    }
    .hint {
      margin: 0;
      color: var(--th-fg-soft);
    }
    .choices {
      display: flex;
      flex-wrap: wrap;
      gap: 0.75rem 1.25rem;
      align-items: center;
      font-size: 0.875rem;
    }
    label {
      display: flex;
      gap: 0.5rem;
      align-items: center;
      color: var(--th-fg-soft);
    }
    select {
      font: inherit;
      max-width: 22rem;
      padding: 0.3rem 0.4rem;
      border-radius: 8px;
      border: 1px solid var(--th-border);
      background: var(--th-bg);
      color: var(--th-fg);
    }
    .where {
      margin: 0;
      color: var(--th-fg-soft);
      overflow-wrap: anywhere;
    }
    composer-box {
      display: block;
    }
    /* On a phone the list is not beside the empty state: the way back to it. */
    .back {
      display: none;
      justify-self: start;
      color: var(--th-accent);
      text-decoration: none;
    }
    @media (max-width: 720px) {
      .back {
        display: inline;
      }
    }
  `,
]

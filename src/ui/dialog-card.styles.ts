/** How <dialog-card> looks. */
import { css } from 'lit'
import { tokens, controls } from './styles.js'
import { questionnaireFormStyles } from './questionnaire-form.styles.js'

export const dialogCardStyles = [
  tokens,
  controls,
  css`
    :host {
      display: block;
    }
    section {
      border: 1px solid var(--th-accent);
      border-radius: var(--th-radius);
      background: var(--th-bg);
      box-shadow: var(--th-shadow);
      padding: 0.9rem 1rem 1rem;
      display: grid;
      gap: 0.75rem;
      animation: in 160ms ease-out;
    }
    @media (prefers-reduced-motion: reduce) {
      section {
        animation: none;
      }
    }
    @keyframes in {
      from {
        opacity: 0;
        transform: translateY(4px);
      }
    }
    header {
      display: flex;
      flex-wrap: wrap;
      align-items: baseline;
      gap: 0.25rem 0.75rem;
      min-width: 0;
    }
    h3 {
      margin: 0;
      font-size: 1rem;
      flex: 1 1 10rem;
      min-width: 0;
      /* Permission questions carry the command or an edit preview on lines of their own. */
      white-space: pre-wrap;
      overflow-wrap: anywhere;
    }
    .meta {
      font-size: 0.75rem;
      color: var(--th-fg-soft);
      overflow-wrap: anywhere;
      min-width: 0;
    }
    .countdown {
      white-space: nowrap;
      font-variant-numeric: tabular-nums;
      color: var(--th-warn);
    }
    p.message {
      margin: 0;
      white-space: pre-wrap;
      color: var(--th-fg-soft);
    }
    .actions {
      display: flex;
      flex-wrap: wrap;
      gap: 0.5rem;
      align-items: center;
    }
    .actions .spacer {
      flex: 1;
    }
    .options {
      display: flex;
      flex-wrap: wrap;
      gap: 0.5rem;
    }
    .options button {
      border-color: var(--th-accent);
      color: var(--th-accent);
    }
    input[type='text'],
    textarea {
      width: 100%;
    }
    textarea {
      min-height: 7rem;
      resize: vertical;
      font-family: var(--th-mono);
      font-size: 0.875rem;
    }
    .ask-cancel {
      display: flex;
      flex-wrap: wrap;
      align-items: center;
      gap: 0.5rem;
      padding: 0.5rem 0.7rem;
      border-radius: 8px;
      background: var(--th-warn-soft);
      color: var(--th-fg);
      font-size: 0.875rem;
    }
    .ask-cancel span {
      flex: 1 1 12rem;
    }
    .refusal {
      color: var(--th-danger);
      background: var(--th-danger-soft);
      border-radius: 8px;
      padding: 0.45rem 0.7rem;
      font-size: 0.875rem;
    }
  `,
  questionnaireFormStyles,
]

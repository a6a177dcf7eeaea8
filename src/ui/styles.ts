/** Shared design tokens and small pieces of style, adopted by every component's shadow root. */
import { css } from 'lit'

export const tokens = css`
  :host {
    --th-font: system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif;
    --th-mono: ui-monospace, SFMono-Regular, Menlo, Consolas, 'Liberation Mono', monospace;
    --th-bg: #ffffff;
    --th-bg-soft: #f6f7f9;
    --th-bg-sunk: #eef0f3;
    --th-fg: #1b1f24;
    --th-fg-soft: #5b6470;
    --th-border: #dfe3e8;
    --th-accent: #4f46e5;
    --th-accent-fg: #ffffff;
    --th-accent-soft: #eef0ff;
    --th-user-bg: #4f46e5;
    --th-user-fg: #ffffff;
    --th-ok: #166534;
    --th-warn: #b45309;
    --th-danger: #c2253a;
    --th-danger-soft: #fdecee;
    --th-warn-soft: #fff6e5;
    --th-ok-soft: #e9f7ee;
    --th-radius: 12px;
    --th-shadow: 0 1px 2px rgb(16 24 40 / 6%), 0 4px 12px rgb(16 24 40 / 6%);
    font-family: var(--th-font);
    color: var(--th-fg);
  }
  @media (prefers-color-scheme: dark) {
    :host {
      --th-bg: #15171c;
      --th-bg-soft: #1c1f26;
      --th-bg-sunk: #23272f;
      --th-fg: #e6e8ec;
      --th-fg-soft: #9aa3af;
      --th-border: #2e333d;
      --th-accent: #8b83ff;
      --th-accent-fg: #0f1020;
      --th-accent-soft: #26254a;
      --th-user-bg: #3b36a8;
      --th-user-fg: #f3f3ff;
      --th-ok: #4ade80;
      --th-warn: #fbbf24;
      --th-danger: #f87171;
      --th-danger-soft: #3a1d22;
      --th-warn-soft: #3a2f16;
      --th-ok-soft: #16301f;
      --th-shadow: 0 1px 2px rgb(0 0 0 / 30%), 0 4px 14px rgb(0 0 0 / 25%);
    }
  }
`

export const controls = css`
  button {
    font: inherit;
    font-size: 0.875rem;
    border-radius: 8px;
    border: 1px solid var(--th-border);
    background: var(--th-bg);
    color: var(--th-fg);
    padding: 0.4rem 0.8rem;
    cursor: pointer;
    transition: background 120ms, border-color 120ms;
  }
  /* Asked for less motion, a colour change is instant (and a picture is never taken mid-fade). */
  @media (prefers-reduced-motion: reduce) {
    button {
      transition: none;
    }
  }
  button:hover:not(:disabled) {
    background: var(--th-bg-sunk);
  }
  button:disabled {
    opacity: 0.5;
    cursor: default;
  }
  button.primary {
    background: var(--th-accent);
    border-color: var(--th-accent);
    color: var(--th-accent-fg);
  }
  button.primary:hover:not(:disabled) {
    filter: brightness(1.08);
    background: var(--th-accent);
  }
  button.danger {
    color: var(--th-danger);
  }
  button.danger.solid {
    background: var(--th-danger);
    border-color: var(--th-danger);
    color: #fff;
  }
  button.ghost {
    border-color: transparent;
    background: transparent;
  }
  button:focus-visible,
  input:focus-visible,
  textarea:focus-visible {
    outline: 2px solid var(--th-accent);
    outline-offset: 1px;
  }
  input[type='text'],
  textarea {
    font: inherit;
    color: var(--th-fg);
    background: var(--th-bg);
    border: 1px solid var(--th-border);
    border-radius: 8px;
    padding: 0.5rem 0.65rem;
    box-sizing: border-box;
  }
  .sr-only {
    position: absolute;
    width: 1px;
    height: 1px;
    overflow: hidden;
    clip: rect(0 0 0 0);
    white-space: nowrap;
  }
`

/** highlight.js's classes in the page's colours (light and dark), readable on --th-bg-sunk and --th-bg. */
export const codeTheme = css`
  :host {
    --th-code-keyword: #b3122a;
    --th-code-string: #0a3069;
    --th-code-comment: #4b535d;
    --th-code-number: #0550ae;
    --th-code-title: #6639ba;
    --th-code-builtin: #8a3300;
  }
  @media (prefers-color-scheme: dark) {
    :host {
      --th-code-keyword: #ff7b72;
      --th-code-string: #a5d6ff;
      --th-code-comment: #a0a8b3;
      --th-code-number: #79c0ff;
      --th-code-title: #d2a8ff;
      --th-code-builtin: #ffa657;
    }
  }
  .hljs-keyword,
  .hljs-selector-tag,
  .hljs-meta .hljs-keyword,
  .hljs-doctag {
    color: var(--th-code-keyword);
  }
  .hljs-string,
  .hljs-regexp,
  .hljs-meta .hljs-string {
    color: var(--th-code-string);
  }
  .hljs-comment,
  .hljs-quote {
    color: var(--th-code-comment);
    font-style: italic;
  }
  .hljs-number,
  .hljs-literal,
  .hljs-attr,
  .hljs-attribute,
  .hljs-variable,
  .hljs-template-variable,
  .hljs-selector-attr,
  .hljs-selector-class,
  .hljs-selector-id {
    color: var(--th-code-number);
  }
  .hljs-title,
  .hljs-section,
  .hljs-name {
    color: var(--th-code-title);
  }
  .hljs-built_in,
  .hljs-type,
  .hljs-symbol,
  .hljs-meta {
    color: var(--th-code-builtin);
  }
  .hljs-addition {
    color: var(--th-ok);
  }
  .hljs-deletion {
    color: var(--th-danger);
  }
  .hljs-emphasis {
    font-style: italic;
  }
  .hljs-strong {
    font-weight: 700;
  }
`

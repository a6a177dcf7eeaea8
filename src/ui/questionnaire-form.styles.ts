/**
 * How <questionnaire-form> looks. It renders into the card's own tree (see questionnaire-form.ts),
 * so these rules are part of the card's styles.
 */
import { css } from 'lit'

export const questionnaireFormStyles = css`
  questionnaire-form {
    display: grid;
    gap: 1rem;
  }
  fieldset {
    border: 0;
    margin: 0;
    padding: 0;
    display: grid;
    gap: 0.4rem;
  }
  legend,
  .q-label {
    font-weight: 600;
    font-size: 0.9rem;
    padding: 0;
    margin-bottom: 0.35rem;
  }
  .chip {
    font-size: 0.7rem;
    font-weight: 600;
    text-transform: uppercase;
    letter-spacing: 0.04em;
    color: var(--th-accent);
    background: var(--th-accent-soft);
    padding: 0.1rem 0.45rem;
    border-radius: 4px;
    margin-right: 0.4rem;
  }
  label.choice {
    display: flex;
    gap: 0.55rem;
    align-items: flex-start;
    padding: 0.45rem 0.6rem;
    border: 1px solid var(--th-border);
    border-radius: 8px;
    cursor: pointer;
  }
  label.choice:has(input:checked) {
    border-color: var(--th-accent);
    background: var(--th-accent-soft);
  }
  label.choice small {
    display: block;
    color: var(--th-fg-soft);
  }
`

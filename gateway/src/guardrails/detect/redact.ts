import type { Finding } from './types.ts';

/** Detectors whose findings judge the whole text (too long, looks like an injection): nothing to mask. */
export const VERDICT_DETECTORS: ReadonlySet<Finding['detector']> = new Set([
  'size',
  'promptInjection',
  'webhook',
]);

export const isMaskable = (f: Finding): boolean => !VERDICT_DETECTORS.has(f.detector) && f.end > f.start;

const byPosition = (a: Finding, b: Finding): number => a.start - b.start || b.end - a.end;

/**
 * Replaces each finding's span with `[LABEL]`. Overlapping findings become one placeholder, labelled
 * by the one that starts first (the longest when two start together); touching ones stay separate.
 * Verdict findings (size, prompt injection) mask nothing.
 */
export function redact(text: string, findings: readonly Finding[]): string {
  const spans = findings.filter(isMaskable).sort(byPosition);
  if (spans.length === 0) return text;
  let out = '';
  let at = 0;
  let i = 0;
  while (i < spans.length) {
    const first = spans[i]!;
    let end = first.end;
    i++;
    while (i < spans.length && spans[i]!.start < end) {
      end = Math.max(end, spans[i]!.end);
      i++;
    }
    out += `${text.slice(at, first.start)}[${first.label}]`;
    at = end;
  }
  return out + text.slice(at);
}

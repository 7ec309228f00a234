import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { outboundFetch } from '../outbound/fetch.ts';
import { signatureHeaders } from '../webhooks/sign.ts';
import type { Direction, WebhookRule } from './resolve.ts';

/**
 * The one contract of an external check. The gateway POSTs `{direction, text, metadata}` (signed
 * like the project's webhooks when the rule has a secret) and reads back a verdict:
 * `{action: "allow" | "block" | "redact", redactions?: [{start, end, label}]}`, offsets in UTF-16
 * code units of `text`. A receiver that is down, slower than the rule's timeout or answers
 * anything else has failed the check: a fail-closed rule then blocks, a fail-open one lets the
 * text through; either way the answer says so.
 */
export const webhookVerdict = z.object({
  action: z.enum(['allow', 'block', 'redact']),
  redactions: z
    .array(
      z.object({
        start: z.number().int().min(0),
        end: z.number().int().min(0),
        label: z.string().regex(/^[A-Z][A-Z0-9_]{0,31}$/),
      }),
    )
    .max(1000)
    .optional(),
});
export type WebhookVerdict = z.infer<typeof webhookVerdict>;

export type WebhookOutcome =
  | { ok: true; verdict: WebhookVerdict }
  | { ok: false; why: 'unreachable' | 'timeout' | 'status' | 'garbage' };

export interface WebhookMetadata {
  project: string;
  workflow: string | null;
  key_id: string | undefined;
  request_log_id: string;
}

export async function callWebhook(
  rule: WebhookRule,
  direction: Direction,
  text: string,
  metadata: WebhookMetadata,
  opts: { secrets: readonly string[] | undefined; allowPrivateNetworks: boolean; now: () => number },
): Promise<WebhookOutcome> {
  const body = JSON.stringify({ rule: rule.rule, direction, text, metadata });
  const headers = opts.secrets?.length
    ? signatureHeaders(opts.secrets, `gr_${randomUUID()}`, Math.floor(opts.now() / 1000), body)
    : { 'content-type': 'application/json' };
  let res: Awaited<ReturnType<typeof outboundFetch>>;
  try {
    res = await outboundFetch(
      rule.url,
      { method: 'POST', headers, body, timeoutMs: rule.timeoutMs },
      { allowPrivateNetworks: opts.allowPrivateNetworks },
    );
  } catch (err) {
    const name = err instanceof Error ? err.name : '';
    return { ok: false, why: name === 'TimeoutError' || name === 'AbortError' ? 'timeout' : 'unreachable' };
  }
  if (res.status < 200 || res.status >= 300) return { ok: false, why: 'status' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(res.bodySnippet);
  } catch {
    return { ok: false, why: 'garbage' };
  }
  const verdict = webhookVerdict.safeParse(parsed);
  if (!verdict.success) return { ok: false, why: 'garbage' };
  const bad = verdict.data.redactions?.some((r) => r.end <= r.start || r.end > text.length);
  return bad ? { ok: false, why: 'garbage' } : { ok: true, verdict: verdict.data };
}

/** The text with the verdict's redactions replaced by `[LABEL]` (overlaps merged, allowed values kept). */
export function applyRedactions(text: string, verdict: WebhookVerdict, allow: readonly string[]): string {
  const spans = [...(verdict.redactions ?? [])]
    .filter((r) => !allow.includes(text.slice(r.start, r.end)))
    .sort((a, b) => a.start - b.start);
  let out = '';
  let at = 0;
  for (const r of spans) {
    if (r.end <= at) continue;
    out += `${text.slice(at, Math.max(at, r.start))}[${r.label}]`;
    at = r.end;
  }
  return out + text.slice(at);
}

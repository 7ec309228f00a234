/** The operations pages' project: caps, rate limits, a rotating key, a webhook; and small helpers. */
import { WEBHOOK_SECRET } from '../async/harness.ts';
import { baseConfig, NS, PROJECT, secret, workflow } from '../harness/manifests.ts';
import { spendCap } from '../spend/manifests.ts';

export const OPS_KEY = 'sy_live_OperationsPagesKey0123456789abcdef';
export const OLD_OPS_KEY = 'sy_live_OperationsPagesOldKey0123456789ab';
/** Within the simulator's 40 echoed characters: answers and webhook payloads carry it back. */
export const HOSTILE = '<img src=x onerror="window.__pwned=1">';
const GRACE_END = new Date(Date.now() + 3_600_000).toISOString();

export function manifests(simUrl: string, hookUrl: string): object[] {
  return [
    ...baseConfig(simUrl).map((o) =>
      o.kind === 'Project' && o.metadata.name === PROJECT
        ? {
            ...o,
            spec: {
              rateLimit: { requestsPerMinute: 6000 },
              webhooks: [{ url: hookUrl, secretRef: { name: 'hook-secret', key: 'secret' } }],
              outboundFetch: { allowPrivateNetworks: true },
            },
          }
        : o,
    ),
    secret('hook-secret', { secret: WEBHOOK_SECRET }),
    // A key in its rotation's grace period: the new key and the previous one both work.
    secret('ops-key', { apiKey: OPS_KEY, previousApiKey: OLD_OPS_KEY, previousValidUntil: GRACE_END }),
    {
      apiVersion: 'switchyard.dev/v1alpha1',
      kind: 'ApiKey',
      metadata: { name: 'ops', namespace: NS },
      spec: {
        projectRef: { name: PROJECT },
        scopes: ['ai', 'console'],
        secretRef: { name: 'ops-key', key: 'apiKey' },
        rateLimit: { requestsPerMinute: 3000, tokensPerMinute: 900000 },
      },
    },
    workflow('chat', { provider: 'oai', model: 'gpt-4o-mini' }),
    workflow('other', { provider: 'claude', model: 'claude-haiku-4-5' }),
    spendCap('project-daily', { period: 'daily', limitUsd: '5' }),
    spendCap('chat-primary', { period: 'hourly', limitUsd: '0.00005', workflow: 'chat' }),
  ];
}

export const headers = { 'content-type': 'application/json', authorization: `Bearer ${OPS_KEY}` };
export async function until<T>(probe: () => Promise<T | undefined>, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

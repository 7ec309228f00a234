import type { Cluster, Redis } from 'ioredis';
import {
  microsToUsd,
  periodWindow,
  type Snapshot,
  SPEND_KEYS,
  type SpendState,
  spendState,
  usdToMicros,
  WEBHOOK_STATE_KEYS,
} from '#contract';

export interface CapSpend {
  spentUsd: string;
  state: SpendState;
  resetAt: string;
}

/**
 * Reads what gateways recorded for each spend cap of the snapshot (integer micro-dollars under the
 * contract's keys) and turns it into SpendCap status fields. Keyed by cap id `<namespace>/<name>`.
 */
export async function readCapSpend(
  redis: Redis | Cluster,
  snapshot: Snapshot,
  now: Date,
): Promise<Map<string, CapSpend>> {
  const entries: { id: string; key: string; limit: number; resetAt: string }[] = [];
  for (const project of Object.values(snapshot.projects)) {
    for (const cap of project.spendCaps) {
      const w = periodWindow(cap.period, now);
      const key =
        cap.scope === 'workflow'
          ? SPEND_KEYS.slot(project.id, cap.workflow ?? '', cap.slot ?? 'primary', cap.period, w.start)
          : SPEND_KEYS.project(project.id, cap.period, w.start);
      entries.push({ id: cap.id, key, limit: usdToMicros(cap.limitUsd), resetAt: w.end.toISOString() });
    }
  }
  const out = new Map<string, CapSpend>();
  if (!entries.length) return out;
  // One GET per key, all in flight at once: keys of different projects live in different hash slots,
  // and on Redis Cluster a pipeline may not span nodes (ioredis refuses it).
  const results = await Promise.all(entries.map((e) => redis.get(e.key)));
  entries.forEach((e, i) => {
    const raw = results[i];
    const micros = Math.max(0, Number.parseInt(String(raw ?? '0'), 10) || 0);
    out.set(e.id, { spentUsd: microsToUsd(micros), state: spendState(micros, e.limit), resetAt: e.resetAt });
  });
  return out;
}

export interface WebhookHealth {
  disabledEndpoints: string[];
  deadLetters: number;
}

/**
 * Reads what gateways recorded about each project's webhook deliveries: endpoints a receiver
 * disabled with 410 and dead letters waiting for replay. Keyed by project id; only projects with
 * webhooks configured are read.
 */
export async function readWebhookHealth(
  redis: Redis | Cluster,
  snapshot: Snapshot,
): Promise<Map<string, WebhookHealth>> {
  const ids = Object.values(snapshot.projects)
    .filter((p) => p.webhooks.length > 0)
    .map((p) => p.id);
  // Each project's keys share its hash slot; projects may live on different cluster nodes.
  const read = await Promise.all(
    ids.map((id) =>
      Promise.all([
        redis.hkeys(WEBHOOK_STATE_KEYS.disabled(id)),
        redis.zcard(WEBHOOK_STATE_KEYS.deadIndex(id)),
      ]),
    ),
  );
  return new Map(
    ids.map((id, i) => {
      const [disabled, dead] = read[i]!;
      return [id, { disabledEndpoints: disabled.sort().slice(0, 64), deadLetters: dead }];
    }),
  );
}

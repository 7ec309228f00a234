import { useState } from 'preact/hooks';
import { ApiError, api } from './api.ts';
import { type Attempt, Attempts } from './attempts.tsx';
import { backupsOf, type WorkflowView } from './pages/Workflows.tsx';
import { href, type Route, replaceRoute } from './route.ts';
import { Badge, Fields, text } from './ui.tsx';

/** At most three answers side by side. */
const MAX = 3;

interface Target {
  label: string;
  workflow: string;
  /** Pinned to this slot of the workflow (0 the primary): no failover, no response cache. */
  slot?: number;
}

interface Outcome {
  target: Target;
  answer?: {
    data: unknown;
    error?: { message: string };
    meta: {
      status: string;
      used_provider: string | null;
      used_model: string | null;
      duration_ms: number;
      usage: Record<string, number>;
      attempts: Attempt[];
      cache?: string;
      request_log_id: string;
    };
    playground: { cost_usd: string | null };
  };
  error?: string;
}

const answerText = (data: unknown): string => {
  const c = (data as { choices?: { message?: { content?: unknown } }[] } | null)?.choices?.[0]?.message
    ?.content;
  return typeof c === 'string' ? c : JSON.stringify(data, null, 2);
};

/**
 * What `compare` in the playground's URL asks for: `slots` (each slot of the chosen workflow,
 * pinned), or up to two more workflow names beside the chosen one.
 */
export function targetsOf(workflow: string, compare: string, list: WorkflowView[]): Target[] {
  if (!workflow) return [];
  if (compare === 'slots') {
    const w = list.find((x) => x.name === workflow);
    if (!w) return [];
    const slots = [{ provider: w.provider, model: w.model }, ...backupsOf(w)];
    return slots.slice(0, MAX).map((s, i) => ({
      label: `${i === 0 ? 'primary' : `backup ${i}`}: ${s.provider}/${s.model}`,
      workflow,
      slot: i,
    }));
  }
  const names = [workflow, ...compare.split(',').filter((n) => n && n !== workflow)];
  return [...new Set(names)].slice(0, MAX).map((n) => ({ label: n, workflow: n }));
}

/** Compare: the same input on up to three workflows, or on each slot of one workflow, side by side. */
export function Compare({
  route,
  list,
  body,
}: {
  route: Route;
  list: WorkflowView[];
  /** The request's type-specific fields, as the playground's form has them now. */
  body: () => Record<string, unknown>;
}) {
  const q = route.query;
  const workflow = q.get('workflow') ?? '';
  const compare = q.get('compare') ?? '';
  const targets = targetsOf(workflow, compare, list);
  const [busy, setBusy] = useState(false);
  const [outcomes, setOutcomes] = useState<Outcome[]>([]);
  const others = compare === 'slots' ? [] : compare.split(',').filter(Boolean);
  const set = (value: string | undefined) =>
    replaceRoute(href(['playground'], { ...Object.fromEntries(q), compare: value }));
  const pick = (i: number, name: string) => {
    const next = [others[0] ?? '', others[1] ?? ''];
    next[i] = name;
    set(next.filter(Boolean).join(',') || undefined);
  };
  const run = () => {
    setBusy(true);
    Promise.all(
      targets.map((t) =>
        api<Outcome['answer']>(`console/api/playground${t.slot === undefined ? '' : `?slot=${t.slot}`}`, {
          method: 'POST',
          body: { workflow: t.workflow, ...body() },
        }).then(
          (answer): Outcome => ({ target: t, answer }),
          (err: Error): Outcome => ({
            target: t,
            error: err instanceof ApiError ? `${err.message} (${err.code})` : err.message,
          }),
        ),
      ),
    )
      .then(setOutcomes)
      .finally(() => setBusy(false));
  };
  const type = list.find((w) => w.name === workflow)?.request_type;
  // The same input fits only workflows of the same request type.
  const candidates = list.filter(
    (w) => w.name !== workflow && typeof w.event_name !== 'string' && w.request_type === type,
  );
  return (
    <section aria-labelledby="compare-h">
      <h2 id="compare-h">Compare</h2>
      <p>
        The same input on up to three workflows, or on each slot of this workflow (pinned: no failover, no
        cache).
      </p>
      <div class="row">
        <label class="inline">
          <input
            type="checkbox"
            name="compare-slots"
            checked={compare === 'slots'}
            onChange={(e) => set((e.target as HTMLInputElement).checked ? 'slots' : undefined)}
          />
          Each of its slots
        </label>
        {compare !== 'slots' &&
          [0, 1].map((i) => (
            <label key={i}>
              Compare with{' '}
              <select
                name={`compare-${i}`}
                value={others[i] ?? ''}
                onChange={(e) => pick(i, (e.target as HTMLSelectElement).value)}
              >
                <option value="">none</option>
                {candidates.map((w) => (
                  <option key={w.name} value={w.name}>
                    {w.name}
                  </option>
                ))}
              </select>
            </label>
          ))}
        <button type="button" onClick={run} disabled={busy || targets.length < 2}>
          Compare
        </button>
        {busy && <span aria-live="polite">Comparing…</span>}
      </div>
      {outcomes.length > 0 && (
        <div class="compare">
          {outcomes.map((o, i) => (
            <section
              key={`${i}-${o.target.label}`}
              aria-label={`Compared: ${o.target.label}`}
              class="compared"
            >
              <h3>
                {o.target.label} {o.answer && <Badge value={o.answer.meta.status} />}
              </h3>
              {o.error && <p class="error">{o.error}</p>}
              {o.answer && (
                <>
                  {o.answer.error ? (
                    <p class="error">{o.answer.error.message}</p>
                  ) : (
                    <pre class="body answer">{answerText(o.answer.data)}</pre>
                  )}
                  <Fields
                    rows={[
                      [
                        'used',
                        o.answer.meta.used_provider
                          ? `${o.answer.meta.used_provider} / ${text(o.answer.meta.used_model)}`
                          : null,
                      ],
                      ['duration_ms', o.answer.meta.duration_ms],
                      ['usage', o.answer.meta.usage],
                      ['cost_usd', o.answer.playground.cost_usd],
                      ['cache', o.answer.meta.cache ?? 'not used'],
                      ['request_log_id', o.answer.meta.request_log_id],
                    ]}
                  />
                  <Attempts attempts={o.answer.meta.attempts} />
                </>
              )}
            </section>
          ))}
        </div>
      )}
    </section>
  );
}

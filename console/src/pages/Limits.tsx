import { api } from '../api.ts';
import { Choice, FilterForm, queryOf, valuesOf } from '../filters.tsx';
import { useLoad } from '../load.ts';
import type { Route } from '../route.ts';
import { Badge, Heading, Pending, text } from '../ui.tsx';

interface CapView {
  id: string;
  resource: { kind: string; namespace: string; name: string };
  scope: 'project' | 'workflow';
  workflow: string | null;
  slot: string | null;
  period: string;
  limit_usd: string;
  spent_usd: string;
  used_percent: number;
  state: string;
  threshold_percent: number | null;
  period_start: string;
  reset_at: string;
  leases: { leased_usd: string; holders: number };
}

interface RateView {
  owner: 'project' | 'api_key';
  id: string;
  requests_per_minute: number | null;
  tokens_per_minute: number | null;
}

interface LimitsView {
  data: CapView[];
  rate_limits: RateView[];
}

const FILTERS = ['scope', 'workflow', 'period', 'state'] as const;

/** How much of the cap is spent, drawn with SVG attributes (no inline style under the CSP). */
function Meter({ percent }: { percent: number }) {
  return (
    <svg class="meter" width="100" height="8" aria-hidden="true">
      <rect class="meter-track" width="100%" height="8" />
      <rect
        class={`meter-fill meter-${percent >= 100 ? 'over' : 'under'}`}
        width={`${Math.min(100, percent)}%`}
        height="8"
      />
    </svg>
  );
}

export function Limits({ route }: { route: Route }) {
  const query = queryOf(route, FILTERS);
  const loaded = useLoad(query, () => api<LimitsView>(`console/api/limits?${query}`));
  const f = valuesOf(route, FILTERS);
  return (
    <main id="main">
      <Heading>Spend and limits</Heading>
      <FilterForm page="limits" names={FILTERS}>
        <Choice label="Scope" name="scope" value={f.scope} options={['project', 'workflow']} />
        <label>
          Workflow <input name="workflow" value={f.workflow ?? ''} />
        </label>
        <Choice
          label="Period"
          name="period"
          value={f.period}
          options={['hourly', 'daily', 'weekly', 'monthly']}
        />
        <Choice
          label="State"
          name="state"
          value={f.state}
          options={['ok', 'warning', 'critical', 'exceeded']}
        />
      </FilterForm>
      <Pending loaded={loaded}>
        {(v) => (
          <>
            <h2>Spend caps</h2>
            {v.data.length === 0 ? (
              <p>No spend cap matches.</p>
            ) : (
              <table>
                <caption>
                  Declared limit and period (SpendCap) beside what runtime state has counted this period
                </caption>
                <thead>
                  <tr>
                    <th scope="col">SpendCap</th>
                    <th scope="col">Applies to</th>
                    <th scope="col">Period</th>
                    <th scope="col">Spent / limit (USD)</th>
                    <th scope="col">Used</th>
                    <th scope="col">State</th>
                    <th scope="col">Thresholds crossed</th>
                    <th scope="col">Resets at</th>
                    <th scope="col">Leased (pods)</th>
                  </tr>
                </thead>
                <tbody>
                  {v.data.map((c) => (
                    <tr key={c.id}>
                      <td>{c.id}</td>
                      <td>{c.scope === 'project' ? 'project' : `${text(c.workflow)} · ${text(c.slot)}`}</td>
                      <td>{c.period}</td>
                      <td>
                        {c.spent_usd} / {c.limit_usd}
                      </td>
                      <td class="nowrap">
                        <Meter percent={c.used_percent} /> {c.used_percent}%
                      </td>
                      <td>
                        <Badge value={c.state} />
                      </td>
                      <td>{c.threshold_percent ? `${c.threshold_percent}%` : 'none'}</td>
                      <td>{c.reset_at}</td>
                      <td>
                        {c.leases.leased_usd} ({c.leases.holders})
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
            <h2>Rate limits</h2>
            {v.rate_limits.length === 0 ? (
              <p>Neither the project nor its keys declare a rate limit.</p>
            ) : (
              <table>
                <caption>Declared on the Project and on ApiKeys (rateLimit)</caption>
                <thead>
                  <tr>
                    <th scope="col">Declared on</th>
                    <th scope="col">Requests a minute</th>
                    <th scope="col">Tokens a minute</th>
                  </tr>
                </thead>
                <tbody>
                  {v.rate_limits.map((r) => (
                    <tr key={`${r.owner}:${r.id}`}>
                      <td>
                        {r.owner === 'project' ? 'Project' : 'ApiKey'} {r.id}
                      </td>
                      <td>{text(r.requests_per_minute)}</td>
                      <td>{text(r.tokens_per_minute)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </>
        )}
      </Pending>
    </main>
  );
}

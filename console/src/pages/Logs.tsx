import { api } from '../api.ts';
import type { Attempt } from '../attempts.tsx';
import { useLoad } from '../load.ts';
import { href, type Route } from '../route.ts';
import { Badge, Heading, Pending, text } from '../ui.tsx';

export interface LogEntry {
  request_log_id: string;
  type: string;
  time: string;
  workflow: string | null;
  status: string;
  outcome: string;
  http_status: number;
  used_provider: string | null;
  used_model: string | null;
  attempts: Attempt[];
  duration_ms: number;
  cost_usd: string | null;
  [field: string]: unknown;
}

export interface LogPage {
  data: LogEntry[];
  next_cursor: string | null;
}

/** The filters the request-log API has; each is a URL parameter of the page and of the API call. */
export const FILTERS = [
  'workflow',
  'status',
  'type',
  'session_id',
  'channel_id',
  'from',
  'to',
  'limit',
] as const;
const TYPES = ['request', 'webhook_attempt', 'callback', 'session_summary', 'budget_threshold'];

/** A request the console's playground sent (its entry's `details.source`). */
const fromConsole = (e: LogEntry): boolean =>
  (e.details as { source?: unknown } | undefined)?.source === 'console';

/** The permalink of one entry: its id, and its time so one query finds it. */
export const entryHref = (e: LogEntry): string =>
  href(['logs', e.request_log_id], { t: String(Date.parse(e.time)) });

export function Logs({ route }: { route: Route }) {
  const q = route.query;
  const params = new URLSearchParams();
  for (const k of [...FILTERS, 'cursor']) {
    const v = q.get(k);
    if (v) params.set(k, v);
  }
  if (!params.has('limit')) params.set('limit', '50');
  const query = params.toString();
  const loaded = useLoad(query, () => api<LogPage>(`v1/request-logs?${query}`));
  const filters = Object.fromEntries(FILTERS.map((k) => [k, q.get(k) ?? undefined]));

  const apply = (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.target as HTMLFormElement);
    const next: Record<string, string> = {};
    for (const k of FILTERS) {
      const v = String(form.get(k) ?? '').trim();
      if (v) next[k] = v;
    }
    window.location.hash = href(['logs'], next);
  };

  return (
    <main id="main">
      <Heading>Request logs</Heading>
      <form class="filters" onSubmit={apply} aria-label="Filters">
        <label>
          Workflow <input name="workflow" value={filters.workflow ?? ''} />
        </label>
        <label>
          Status
          <select name="status" value={filters.status ?? ''}>
            <option value="">any</option>
            <option value="success">success</option>
            <option value="error">error</option>
          </select>
        </label>
        <label>
          Type
          <select name="type" value={filters.type ?? ''}>
            <option value="">any</option>
            {TYPES.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </label>
        <label>
          Session <input name="session_id" value={filters.session_id ?? ''} />
        </label>
        <label>
          Channel <input name="channel_id" value={filters.channel_id ?? ''} />
        </label>
        <label>
          From <input name="from" placeholder="2026-11-29T10:00:00Z" value={filters.from ?? ''} />
        </label>
        <label>
          To <input name="to" placeholder="2026-11-29T11:00:00Z" value={filters.to ?? ''} />
        </label>
        <label>
          Per page <input name="limit" type="number" min={1} max={500} value={filters.limit ?? ''} />
        </label>
        <button type="submit">Apply</button>
      </form>
      <Pending loaded={loaded}>
        {(page) => (
          <>
            {page.data.length === 0 ? (
              <p>No entries match.</p>
            ) : (
              <table>
                <thead>
                  <tr>
                    <th scope="col">Time</th>
                    <th scope="col">Type</th>
                    <th scope="col">Workflow</th>
                    <th scope="col">Status</th>
                    <th scope="col">HTTP</th>
                    <th scope="col">Model</th>
                    <th scope="col">Attempts</th>
                    <th scope="col">Duration</th>
                    <th scope="col">Cost (USD)</th>
                  </tr>
                </thead>
                <tbody>
                  {page.data.map((e) => (
                    <tr key={e.request_log_id}>
                      <td>
                        <a href={entryHref(e)}>{e.time}</a>
                      </td>
                      <td>
                        {e.type}
                        {fromConsole(e) && <span class="source"> · console</span>}
                      </td>
                      <td>{text(e.workflow)}</td>
                      <td>
                        <Badge value={e.status} /> {e.outcome}
                      </td>
                      <td>{e.http_status}</td>
                      <td>{text(e.used_model)}</td>
                      <td>{e.attempts.length}</td>
                      <td>{Math.round(e.duration_ms)} ms</td>
                      <td>{text(e.cost_usd)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
            <nav class="pager" aria-label="Pages">
              {q.get('cursor') && <a href={href(['logs'], filters)}>First page</a>}
              {page.next_cursor && (
                <a href={href(['logs'], { ...filters, cursor: page.next_cursor })} rel="next">
                  Older entries
                </a>
              )}
            </nav>
          </>
        )}
      </Pending>
    </main>
  );
}

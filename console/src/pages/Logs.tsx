import { api } from '../api.ts';
import { useLoad } from '../load.ts';
import { entryHref, type LogEntry, type LogPage } from '../log-entry.ts';
import { href, type Route } from '../route.ts';
import { Badge, Heading, Pending, text } from '../ui.tsx';
import { LiveTail } from './LiveTail.tsx';

export { entryHref, type LogEntry, type LogPage };

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
/** The filters a live tail takes (a time range or page size means nothing to it). */
const TAIL_FILTERS = ['workflow', 'status', 'type', 'session_id', 'channel_id'] as const;
const TYPES = ['request', 'webhook_attempt', 'callback', 'session_summary', 'budget_threshold'];

/** A request the console's playground sent (its entry's `details.source`). */
const fromConsole = (e: LogEntry): boolean =>
  (e.details as { source?: unknown } | undefined)?.source === 'console';

export function Logs({ route }: { route: Route }) {
  const q = route.query;
  const params = new URLSearchParams();
  for (const k of [...FILTERS, 'cursor']) {
    const v = q.get(k);
    if (v) params.set(k, v);
  }
  if (!params.has('limit')) params.set('limit', '50');
  const query = params.toString();
  const live = q.get('live') === '1';
  const loaded = useLoad(live ? 'live' : query, () =>
    live ? Promise.resolve({ data: [], next_cursor: null }) : api<LogPage>(`v1/request-logs?${query}`),
  );
  const filters = Object.fromEntries(FILTERS.map((k) => [k, q.get(k) ?? undefined]));
  const tailQuery = new URLSearchParams();
  for (const k of TAIL_FILTERS) if (filters[k]) tailQuery.set(k, filters[k]);

  const apply = (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.target as HTMLFormElement);
    const next: Record<string, string> = {};
    for (const k of FILTERS) {
      const v = String(form.get(k) ?? '').trim();
      if (v) next[k] = v;
    }
    if (live) next.live = '1';
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
      <p>
        {live ? (
          <a href={href(['logs'], filters)}>Stop the live tail</a>
        ) : (
          <a href={href(['logs'], { ...filters, live: '1' })}>Live tail</a>
        )}
      </p>
      {live ? (
        <LiveTail query={tailQuery.toString()} />
      ) : (
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
      )}
    </main>
  );
}

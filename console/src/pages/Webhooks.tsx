import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { FilterForm, valuesOf } from '../filters.tsx';
import { useLoad } from '../load.ts';
import type { Route } from '../route.ts';
import { Badge, Heading, Pending, text } from '../ui.tsx';
import { entryHref, type LogEntry, type LogPage } from './Logs.tsx';

interface Endpoint {
  url: string;
  events: string[];
  secret_rotating: boolean;
}

interface DeadLetter {
  id: string;
  url: string;
  event: string;
  body: string;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  dead_at: string;
  replays: number;
}

interface WebhooksView {
  endpoints: Endpoint[];
  letters: DeadLetter[];
  disabled: string[];
  deliveries: LogEntry[];
}

const FILTERS = ['since'] as const;
/** Webhook attempts read in one call: the table shows the newest 20, each dead letter its own among them. */
const ATTEMPTS_READ = 200;

/** A dead letter's payload, pretty when it is JSON; always text. */
const pretty = (body: string): string => {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
};

const detail = (e: LogEntry, k: string): unknown => (e.details as Record<string, unknown> | undefined)?.[k];

/** A dead letter's attempts among the recent ones, oldest first (they share its webhook-id). */
function LetterAttempts({ id, attempts }: { id: string; attempts: LogEntry[] }) {
  const own = attempts.filter((e) => detail(e, 'webhook_id') === id).reverse();
  if (own.length === 0)
    return <div class="reason">Its attempts are older than the last {ATTEMPTS_READ}.</div>;
  return (
    <ol class="letter-attempts" aria-label={`Attempts of ${id}`}>
      {own.map((e) => (
        <li key={e.request_log_id}>
          <a href={entryHref(e)}>{e.time}</a> attempt {text(detail(e, 'attempt'))}
          {detail(e, 'replay') ? ` (replay ${text(detail(e, 'replay'))})` : ''}:{' '}
          <Badge value={String(detail(e, 'result') ?? e.outcome)} /> HTTP {e.http_status}
          {e.error_code && <span class="reason"> · {text(e.error_code)}</span>}
        </li>
      ))}
    </ol>
  );
}

export function Webhooks({ route }: { route: Route }) {
  const f = valuesOf(route, FILTERS);
  const [round, setRound] = useState(0);
  const [notice, setNotice] = useState<string | undefined>();
  const since = f.since ?? '0';
  const loaded = useLoad(`${since}#${round}`, async (): Promise<WebhooksView> => {
    const s = encodeURIComponent(since);
    const [hooks, dead, deliveries] = await Promise.all([
      api<{ data: Endpoint[] }>('console/api/webhooks'),
      api<{ data: DeadLetter[]; disabled_endpoints: string[] }>(
        `v1/webhooks/dead-letters?since=${s}&limit=100`,
      ),
      api<LogPage>(`v1/request-logs?type=webhook_attempt&limit=${ATTEMPTS_READ}`),
    ]);
    return {
      endpoints: hooks.data,
      letters: dead.data,
      disabled: dead.disabled_endpoints,
      deliveries: deliveries.data,
    };
  });

  const replay = async (path: string, body?: unknown) => {
    try {
      const r = await api<{ replayed: number }>(path, { method: 'POST', ...(body ? { body } : {}) });
      setNotice(`Replayed ${r.replayed} dead letter${r.replayed === 1 ? '' : 's'}.`);
    } catch (err) {
      setNotice((err as Error).message);
    }
    setRound((n) => n + 1);
  };

  return (
    <main id="main">
      <Heading>Webhooks</Heading>
      <p role="status" aria-live="polite">
        {notice}
      </p>
      <Pending loaded={loaded}>
        {(v) => (
          <>
            <h2>Endpoints</h2>
            {v.endpoints.length === 0 ? (
              <p>The project declares no webhook (Project spec.webhooks).</p>
            ) : (
              <table>
                <caption>Declared on the Project (spec.webhooks); secrets are never shown</caption>
                <thead>
                  <tr>
                    <th scope="col">URL</th>
                    <th scope="col">Events</th>
                    <th scope="col">Secret</th>
                    <th scope="col">State</th>
                  </tr>
                </thead>
                <tbody>
                  {v.endpoints.map((e) => (
                    <tr key={e.url}>
                      <td class="clip">{e.url}</td>
                      <td>{e.events.join(', ')}</td>
                      <td>{e.secret_rotating ? 'rotating (two secrets)' : 'one secret'}</td>
                      <td>
                        <Badge value={v.disabled.includes(e.url) ? 'disabled' : 'enabled'} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
            <h2>Dead letters</h2>
            <FilterForm page="webhooks" names={FILTERS}>
              <label>
                Dead since <input name="since" placeholder="2026-11-29T10:00:00Z" value={f.since ?? ''} />
              </label>
            </FilterForm>
            {v.letters.length === 0 ? (
              <p>No dead letter.</p>
            ) : (
              <>
                <p>
                  <button
                    type="button"
                    onClick={() =>
                      replay('v1/webhooks/dead-letters/replay', {
                        since: /^\d+$/.test(since) ? Number(since) : since,
                      })
                    }
                  >
                    Replay all {v.letters.length}
                  </button>
                </p>
                <ol class="letters">
                  {v.letters.map((d) => (
                    <li key={d.id}>
                      <strong>{d.event}</strong> <code>{d.id}</code> to <span class="url">{d.url}</span>
                      <div>
                        dead at {d.dead_at} after {d.attempts} attempt{d.attempts === 1 ? '' : 's'}; last
                        status {text(d.last_status)}; replays {d.replays}
                      </div>
                      <div class="reason">{text(d.last_error)}</div>
                      <LetterAttempts id={d.id} attempts={v.deliveries} />
                      <details>
                        <summary>Payload</summary>
                        <pre class="body">{pretty(d.body)}</pre>
                      </details>
                      <button
                        type="button"
                        aria-label={`Replay ${d.id}`}
                        onClick={() => replay(`v1/webhooks/dead-letters/${encodeURIComponent(d.id)}/replay`)}
                      >
                        Replay
                      </button>
                    </li>
                  ))}
                </ol>
              </>
            )}
            <h2>Recent deliveries</h2>
            {v.deliveries.length === 0 ? (
              <p>No delivery attempt yet.</p>
            ) : (
              <table>
                <caption>The last 20 attempts (request-log entries of type webhook_attempt)</caption>
                <thead>
                  <tr>
                    <th scope="col">Time</th>
                    <th scope="col">Event</th>
                    <th scope="col">Webhook id</th>
                    <th scope="col">Attempt</th>
                    <th scope="col">Result</th>
                    <th scope="col">HTTP</th>
                    <th scope="col">Duration</th>
                  </tr>
                </thead>
                <tbody>
                  {v.deliveries.slice(0, 20).map((e) => (
                    <tr key={e.request_log_id}>
                      <td>
                        <a href={entryHref(e)}>{e.time}</a>
                      </td>
                      <td>{text(detail(e, 'event'))}</td>
                      <td>
                        <code>{text(detail(e, 'webhook_id'))}</code>
                      </td>
                      <td>
                        {text(detail(e, 'attempt'))}
                        {detail(e, 'replay') ? ' (replay)' : ''}
                      </td>
                      <td>
                        <Badge value={String(detail(e, 'result') ?? e.outcome)} />
                      </td>
                      <td>{e.http_status}</td>
                      <td>{Math.round(e.duration_ms)} ms</td>
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

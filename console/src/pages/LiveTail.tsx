import { useEffect, useState } from 'preact/hooks';
import { apiUrl } from '../api.ts';
import { entryHref, type LogEntry } from '../log-entry.ts';
import { Badge, text } from '../ui.tsx';

/** Most entries the tail keeps on the page; older ones drop off the bottom. */
const KEEP = 200;

type TailState = 'connecting' | 'live' | 'paused' | 'unavailable';

/**
 * The request log as it grows, with the list's filters: server-sent events from the gateway, which
 * reads the shared log once a second. A hidden tab closes the stream (nothing is read for it) and
 * opens it again from the last entry it saw when it is shown.
 */
export function LiveTail({ query }: { query: string }) {
  const [entries, setEntries] = useState<LogEntry[]>([]);
  const [state, setState] = useState<TailState>('connecting');

  useEffect(() => {
    let source: EventSource | undefined;
    let since = Date.now();
    const seen = new Set<string>();
    const open = () => {
      source?.close();
      const params = new URLSearchParams(query);
      params.set('since', String(since));
      source = new EventSource(apiUrl(`console/api/logs/tail?${params}`));
      source.addEventListener('open', () => setState('live'));
      source.addEventListener('unavailable', () => setState('unavailable'));
      source.addEventListener('entry', (ev) => {
        const e = JSON.parse((ev as MessageEvent<string>).data) as LogEntry;
        if (seen.has(e.request_log_id)) return;
        seen.add(e.request_log_id);
        since = Math.max(since, Date.parse(e.time));
        setState('live');
        setEntries((list) => [e, ...list].slice(0, KEEP));
      });
      // The gateway ends a tail after a while; carry on from where it was.
      source.addEventListener('end', () => open());
    };
    const visibility = () => {
      if (document.hidden) {
        source?.close();
        source = undefined;
        setState('paused');
      } else open();
    };
    document.addEventListener('visibilitychange', visibility);
    if (document.hidden) setState('paused');
    else open();
    return () => {
      document.removeEventListener('visibilitychange', visibility);
      source?.close();
    };
  }, [query]);

  return (
    <>
      <p role="status" aria-live="polite" class="tail-state">
        {state === 'live'
          ? 'Live: new entries appear at the top.'
          : state === 'paused'
            ? 'Paused while the tab is hidden.'
            : state === 'unavailable'
              ? 'Request logs are unavailable right now; retrying.'
              : 'Connecting…'}
      </p>
      {entries.length === 0 ? (
        <p>No new entry yet.</p>
      ) : (
        <table>
          <caption>Newest first, at most {KEEP}</caption>
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Type</th>
              <th scope="col">Workflow</th>
              <th scope="col">Status</th>
              <th scope="col">HTTP</th>
              <th scope="col">Model</th>
              <th scope="col">Duration</th>
            </tr>
          </thead>
          <tbody>
            {entries.map((e) => (
              <tr key={e.request_log_id}>
                <td>
                  <a href={entryHref(e)}>{e.time}</a>
                </td>
                <td>{e.type}</td>
                <td>{text(e.workflow)}</td>
                <td>
                  <Badge value={e.status} /> {e.outcome}
                </td>
                <td>{e.http_status}</td>
                <td>{text(e.used_model)}</td>
                <td>{Math.round(e.duration_ms)} ms</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

import { api } from '../api.ts';
import { Attempts } from '../attempts.tsx';
import { useLoad } from '../load.ts';
import { href } from '../route.ts';
import { Fields, Heading, Pending } from '../ui.tsx';
import type { LogPage } from './Logs.tsx';
import { playgroundHref } from './Playground.tsx';

const SUMMARY = [
  'time',
  'type',
  'workflow',
  'status',
  'outcome',
  'http_status',
  'error_code',
  'used_provider',
  'used_model',
  'surface',
  'method',
  'path',
  'api_key_id',
  'session_id',
  'channel_id',
  'stream',
  'cache',
  'duration_ms',
  'ttft_ms',
  'usage',
  'cost_usd',
  'trace_id',
  'test_mode',
  'customer_data',
  'details',
];

/**
 * One entry, found by the list API filtered to the instant it finished (the permalink carries
 * it): one query, the same authorization as the list.
 */
export function LogEntryPage({ id, t }: { id: string; t: string | null }) {
  const loaded = useLoad(`${id}@${t}`, async () => {
    if (!t || !/^\d+$/.test(t))
      throw new Error('This link lacks the entry time (t=); open the entry from the list.');
    // A time filter scans a bounded stretch of the log per call and hands back a cursor to go on.
    let cursor: string | null = null;
    for (let pages = 0; pages < 20; pages++) {
      const more: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
      const page: LogPage = await api<LogPage>(`v1/request-logs?from=${t}&to=${t}&limit=500${more}`);
      const entry = page.data.find((e) => e.request_log_id === id);
      if (entry) return entry;
      cursor = page.next_cursor;
      if (!cursor) break;
    }
    throw new Error(`No request-log entry ${id} (it may have been trimmed).`);
  });
  return (
    <main id="main">
      <p>
        <a href={href(['logs'])}>← Request logs</a>
      </p>
      <Heading>Request {id}</Heading>
      <Pending loaded={loaded}>
        {(e) => (
          <>
            {e.workflow && e.type === 'request' && (
              <p>
                <a href={playgroundHref(e)}>Open in playground</a>
              </p>
            )}
            <h2>Attempts</h2>
            <Attempts attempts={e.attempts} />
            <h2>Summary</h2>
            <Fields rows={SUMMARY.filter((k) => e[k] !== undefined).map((k) => [k, e[k]])} />
            <h2>Bodies</h2>
            {e.bodies === undefined ? (
              <p>This project does not store request bodies (requestLogs.bodies).</p>
            ) : (
              <pre class="body">{JSON.stringify(e.bodies, null, 2)}</pre>
            )}
          </>
        )}
      </Pending>
    </main>
  );
}

import { api } from '../api.ts';
import { useLoad } from '../load.ts';
import { href } from '../route.ts';
import { Badge, Fields, Heading, Pending, text } from '../ui.tsx';
import type { LogEntry, LogPage } from './Logs.tsx';

/**
 * The attempts as a waterfall: failover tries slots one after another, so each bar starts where
 * the previous one ended (the gaps between attempts are not recorded). SVG attributes, not inline
 * styles, so the page's CSP holds; hidden from screen readers, which read the list below.
 */
function Waterfall({ attempts }: { attempts: LogEntry['attempts'] }) {
  const total = attempts.reduce((sum, a) => sum + (a.duration_ms ?? 0), 0);
  if (total <= 0) return null;
  let at = 0;
  return (
    <svg class="waterfall" width="100%" height={attempts.length * 18} aria-hidden="true">
      {attempts.map((a, i) => {
        const x = (at / total) * 100;
        const width = Math.max(0.5, ((a.duration_ms ?? 0) / total) * 100);
        at += a.duration_ms ?? 0;
        return (
          <rect
            key={`w${i}`}
            class={`bar bar-${a.status}`}
            x={`${x}%`}
            y={i * 18 + 3}
            width={`${width}%`}
            height={12}
          />
        );
      })}
    </svg>
  );
}

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
            <h2>Attempts</h2>
            {e.attempts.length === 0 ? (
              <p>No upstream attempt (answered by the gateway).</p>
            ) : (
              <>
                <Waterfall attempts={e.attempts} />
                <ol class="attempts">
                  {e.attempts.map((a, i) => (
                    <li key={`a${i}`}>
                      <Badge value={a.status} /> <strong>{a.provider}</strong> / {a.model}
                      {a.duration_ms !== undefined && <> · {Math.round(a.duration_ms)} ms</>}
                      {a.reason && <div class="reason">{text(a.reason.message)}</div>}
                    </li>
                  ))}
                </ol>
              </>
            )}
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

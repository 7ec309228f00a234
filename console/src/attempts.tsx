import { Badge, text } from './ui.tsx';

/** One try of one slot, as `meta.attempts` and a request-log entry carry it. */
export interface Attempt {
  provider: string;
  model: string;
  status: string;
  reason?: { message: string; status?: number; code?: string };
  duration_ms?: number;
}

/**
 * The attempts as a waterfall: failover tries slots one after another, so each bar starts where
 * the previous one ended (the gaps between attempts are not recorded). SVG attributes, not inline
 * styles, so the page's CSP holds; hidden from screen readers, which read the list below.
 */
function Waterfall({ attempts }: { attempts: Attempt[] }) {
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

/** The attempts trail: each slot tried, in order, with its status, reason and time. */
export function Attempts({ attempts }: { attempts: Attempt[] }) {
  if (attempts.length === 0) return <p>No upstream attempt (answered by the gateway).</p>;
  return (
    <>
      <Waterfall attempts={attempts} />
      <ol class="attempts">
        {attempts.map((a, i) => (
          <li key={`a${i}`}>
            <Badge value={a.status} /> <strong>{a.provider}</strong> / {a.model}
            {a.duration_ms !== undefined && <> · {Math.round(a.duration_ms)} ms</>}
            {a.reason && <div class="reason">{text(a.reason.message)}</div>}
          </li>
        ))}
      </ol>
    </>
  );
}

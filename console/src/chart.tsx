/** One line of a chart: a name and a value per period (missing periods are 0). */
export interface Series {
  name: string;
  values: number[];
}

const W = 600;
const H = 140;
const PAD = 4;

/**
 * A small line chart as SVG (no library; attributes, not inline styles, so the CSP holds). One
 * colour class per series, in the order of the legend. The data it draws is in the table beside
 * it, so screen readers get the image's label and the table.
 */
export function LineChart({
  title,
  series,
  periods,
}: {
  title: string;
  series: Series[];
  periods: string[];
}) {
  const max = Math.max(0, ...series.flatMap((s) => s.values));
  const n = periods.length;
  const x = (i: number) => (n <= 1 ? W / 2 : PAD + (i / (n - 1)) * (W - 2 * PAD));
  const y = (v: number) => H - PAD - (max > 0 ? (v / max) * (H - 2 * PAD) : 0);
  return (
    <figure class="chart">
      <figcaption>
        {title} <span class="reason">(max {fmt(max)})</span>
      </figcaption>
      <svg
        viewBox={`0 0 ${W} ${H}`}
        preserveAspectRatio="none"
        role="img"
        aria-label={`${title}, max ${fmt(max)}`}
      >
        <line class="axis" x1={0} y1={H - PAD} x2={W} y2={H - PAD} />
        {series.map((s, k) => (
          <polyline
            key={s.name}
            class={`line s${k % 6}`}
            points={s.values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ')}
          />
        ))}
      </svg>
      <ul class="legend">
        {series.map((s, k) => (
          <li key={s.name}>
            <svg width="10" height="10" aria-hidden="true">
              <rect class={`swatch s${k % 6}`} width="10" height="10" />
            </svg>{' '}
            {s.name || '(direct)'}
          </li>
        ))}
      </ul>
    </figure>
  );
}

export const fmt = (v: number): string =>
  Number.isInteger(v) ? String(v) : v >= 1 ? v.toFixed(2) : v.toPrecision(2);

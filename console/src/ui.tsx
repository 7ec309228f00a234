import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import type { Loaded } from './load.ts';

/** A page's heading; focused when the page opens, so keyboard and screen-reader users land on it. */
export function Heading({ children }: { children: ComponentChildren }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => ref.current?.focus(), []);
  return (
    <h1 ref={ref} tabIndex={-1}>
      {children}
    </h1>
  );
}

export function Pending<T>({
  loaded,
  children,
}: {
  loaded: Loaded<T>;
  children: (data: T) => ComponentChildren;
}) {
  if (loaded.state === 'loading') return <p aria-live="polite">Loading…</p>;
  if (loaded.state === 'error')
    return (
      <p role="alert" class="error">
        {loaded.message}
      </p>
    );
  return <>{children(loaded.data)}</>;
}

/** Any value as text: strings as they are, the rest as JSON. Never markup. */
export const text = (v: unknown): string =>
  v === null || v === undefined ? '—' : typeof v === 'string' ? v : JSON.stringify(v);

export function Fields({ rows }: { rows: [string, unknown][] }) {
  return (
    <dl class="fields">
      {rows.map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>{typeof v === 'object' && v !== null ? <pre>{JSON.stringify(v, null, 2)}</pre> : text(v)}</dd>
        </div>
      ))}
    </dl>
  );
}

export function Badge({ value }: { value: string }) {
  return <span class={`badge badge-${value.replace(/[^a-z_]/g, '')}`}>{value}</span>;
}

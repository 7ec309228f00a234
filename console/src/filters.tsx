import type { ComponentChildren } from 'preact';
import { href, type Route } from './route.ts';

/** The named parameters of the page's URL that are set, as one query string for the API. */
export function queryOf(route: Route, names: readonly string[]): string {
  const params = new URLSearchParams();
  for (const k of names) {
    const v = route.query.get(k);
    if (v) params.set(k, v);
  }
  return params.toString();
}

/** The named parameters of the page's URL (unset ones undefined). */
export const valuesOf = (route: Route, names: readonly string[]): Record<string, string | undefined> =>
  Object.fromEntries(names.map((k) => [k, route.query.get(k) ?? undefined]));

/**
 * A filter form whose fields are named as the URL's parameters: applying it moves to the page's URL
 * with them, so every filtered view is a link.
 */
export function FilterForm({
  page,
  names,
  children,
}: {
  page: string;
  names: readonly string[];
  children: ComponentChildren;
}) {
  const apply = (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.target as HTMLFormElement);
    const next: Record<string, string> = {};
    for (const k of names) {
      const v = String(form.get(k) ?? '').trim();
      if (v) next[k] = v;
    }
    window.location.hash = href([page], next);
  };
  return (
    <form class="filters" onSubmit={apply} aria-label="Filters">
      {children}
      <button type="submit">Apply</button>
    </form>
  );
}

/** A select of fixed values with "any" first. */
export function Choice({
  label,
  name,
  value,
  options,
}: {
  label: string;
  name: string;
  value: string | undefined;
  options: readonly string[];
}) {
  return (
    <label>
      {label}
      <select name={name} value={value ?? ''}>
        <option value="">any</option>
        {options.map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    </label>
  );
}

import { useEffect, useState } from 'preact/hooks';

/** Where the page is: `#/logs/abc?status=error` is path ['logs', 'abc'] and that query. */
export interface Route {
  path: string[];
  query: URLSearchParams;
}

export function currentRoute(): Route {
  const hash = window.location.hash.replace(/^#/, '') || '/workflows';
  const q = hash.indexOf('?');
  const path = (q < 0 ? hash : hash.slice(0, q)).split('/').filter(Boolean).map(decodeURIComponent);
  return { path, query: new URLSearchParams(q < 0 ? '' : hash.slice(q + 1)) };
}

/** A link inside the console: every view is a URL, so every view can be bookmarked and shared. */
export function href(path: string[], query?: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v) params.set(k, v);
  const qs = params.toString();
  return `#/${path.map(encodeURIComponent).join('/')}${qs ? `?${qs}` : ''}`;
}

const CHANGED = 'switchyard:route';

/** Replaces the current URL without a history entry (a spent sign-in link must not stay in it). */
export function replaceRoute(to: string): void {
  window.history.replaceState(null, '', to);
  window.dispatchEvent(new Event(CHANGED));
}

export function useRoute(): Route {
  const [route, setRoute] = useState(currentRoute);
  useEffect(() => {
    const update = () => setRoute(currentRoute());
    window.addEventListener('hashchange', update);
    window.addEventListener(CHANGED, update);
    return () => {
      window.removeEventListener('hashchange', update);
      window.removeEventListener(CHANGED, update);
    };
  }, []);
  return route;
}

/** The gateway's root as this page sees it: the page is `<root>/console/`, whatever prefix a proxy adds. */
const root = new URL('../', window.location.href);

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

export interface Session {
  project_id: string;
  key_id: string;
  csrf_token: string;
  snapshot_version: string | null;
}

let csrf = '';

/** One call to the gateway's API with the session cookie; writes carry the CSRF token. */
export async function api<T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
  const method = init.method ?? 'GET';
  const headers: Record<string, string> = { accept: 'application/json' };
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET') headers['x-csrf-token'] = csrf;
  const res = await fetch(new URL(path, root), {
    method,
    headers,
    credentials: 'same-origin',
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  if (res.status === 204) return undefined as T;
  const data = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (!res.ok) {
    // Native bodies are {error: code, message}; compatible ones {error: {code, message}}.
    const err = data.error;
    const nested = typeof err === 'object' && err !== null ? (err as Record<string, unknown>) : undefined;
    const message = String(data.message ?? nested?.message ?? `HTTP ${res.status}`);
    const code = String(typeof err === 'string' ? err : (nested?.code ?? res.status));
    throw new ApiError(res.status, message, code);
  }
  return data as T;
}

const remember = (s: Session): Session => {
  csrf = s.csrf_token;
  return s;
};

export const loadSession = (): Promise<Session> => api<Session>('console/api/session').then(remember);

export const signIn = (body: { key: string } | { link: string }): Promise<Session> =>
  api<Session>('console/api/session', { method: 'POST', body }).then(remember);

export const signOut = (): Promise<void> => api<void>('console/api/session', { method: 'DELETE' });

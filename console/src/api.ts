/** The gateway's root as this page sees it: the page is `<root>/console/`, whatever prefix a proxy adds. */
const root = new URL('../', window.location.href);

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string,
    /** The request field at fault, when the API names one. */
    readonly param?: string,
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

/** An absolute URL of the gateway's API for `path` (an EventSource needs one). */
export const apiUrl = (path: string): string => new URL(path, root).toString();

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
  return (await bodyOf(res)) as T;
}

/** A JSON answer's body, or the API's error (native and compatible shapes) thrown as an ApiError. */
async function bodyOf(res: Response): Promise<unknown> {
  const data = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (!res.ok) {
    // Native bodies are {error: code, message}; compatible ones {error: {code, message}}.
    const err = data.error;
    const nested = typeof err === 'object' && err !== null ? (err as Record<string, unknown>) : undefined;
    const message = String(data.message ?? nested?.message ?? `HTTP ${res.status}`);
    const code = String(typeof err === 'string' ? err : (nested?.code ?? res.status));
    const param = data.param ?? nested?.param;
    throw new ApiError(res.status, message, code, typeof param === 'string' ? param : undefined);
  }
  return data;
}

/** One server-sent event: its name (`message` when unnamed) and its data as JSON. */
export interface StreamEvent {
  event: string;
  data: unknown;
}

/**
 * A write whose answer may be server-sent events: each event goes to `onEvent` as it arrives (until
 * `[DONE]`); an answer that is JSON instead (a request refused or failed before streaming) is returned.
 */
export async function apiStream(
  path: string,
  body: unknown,
  onEvent: (e: StreamEvent) => void,
): Promise<unknown> {
  const res = await fetch(new URL(path, root), {
    method: 'POST',
    headers: { accept: 'text/event-stream', 'content-type': 'application/json', 'x-csrf-token': csrf },
    credentials: 'same-origin',
    body: JSON.stringify(body),
  });
  if (!res.ok || !res.body || !res.headers.get('content-type')?.startsWith('text/event-stream'))
    return bodyOf(res);
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return undefined;
    buffered += value;
    let end = buffered.indexOf('\n\n');
    while (end >= 0) {
      const block = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      end = buffered.indexOf('\n\n');
      let event = 'message';
      let data = '';
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data += line.slice(5).trim();
      }
      if (data === '[DONE]') return undefined;
      if (data) onEvent({ event, data: JSON.parse(data) });
    }
  }
}

const remember = (s: Session): Session => {
  csrf = s.csrf_token;
  return s;
};

export const loadSession = (): Promise<Session> => api<Session>('console/api/session').then(remember);

export const signIn = (body: { key: string } | { link: string }): Promise<Session> =>
  api<Session>('console/api/session', { method: 'POST', body }).then(remember);

export const signOut = (): Promise<void> => api<void>('console/api/session', { method: 'DELETE' });

import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { KubeConfig, RequestContext } from '@kubernetes/client-node';
import { fetch } from 'undici';

/**
 * A small REST client over the KubeConfig of @kubernetes/client-node: the same authentication and
 * TLS setup (client certificates, tokens, in-cluster service account), but plain JSON in and out,
 * so informers, status patches and the watch stream all go through one place.
 */

export class KubeError extends Error {
  readonly status: number;
  readonly reason: string;
  constructor(status: number, reason: string, message: string) {
    super(message);
    this.status = status;
    this.reason = reason;
  }
}

export type KubeObject = {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    creationTimestamp?: string;
    deletionTimestamp?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: {
      apiVersion: string;
      kind: string;
      name: string;
      uid: string;
      controller?: boolean;
      blockOwnerDeletion?: boolean;
    }[];
    [k: string]: unknown;
  };
  [k: string]: unknown;
};

export interface KubeList {
  metadata: { resourceVersion?: string; continue?: string };
  items: KubeObject[];
}

export interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: KubeObject & { code?: number; reason?: string; message?: string };
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  signal?: AbortSignal;
}

export function loadKubeConfig(kubeconfigPath?: string): KubeConfig {
  const kc = new KubeConfig();
  if (kubeconfigPath) kc.loadFromFile(kubeconfigPath);
  else kc.loadFromDefault();
  return kc;
}

export class KubeClient {
  readonly config: KubeConfig;
  readonly #server: string;
  /**
   * client-node builds a new undici Agent (a new TLS connection) for every request; one shared
   * dispatcher keeps connections alive across status writes and watches.
   */
  #dispatcher: ReturnType<RequestContext['getDispatcher']>;

  constructor(config: KubeConfig) {
    this.config = config;
    const cluster = config.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    this.#server = cluster.server.replace(/\/+$/, '');
  }

  async #prepare(method: string, path: string, opts: RequestOptions) {
    const url = new URL(this.#server + path);
    for (const [k, v] of Object.entries(opts.query ?? {}))
      if (v !== undefined) url.searchParams.set(k, String(v));
    const ctx = new RequestContext(url.toString(), method as never);
    await this.config.applySecurityAuthentication(ctx);
    const headers = ctx.getHeaders() as unknown as Record<string, string>;
    headers.Accept = 'application/json';
    if (opts.body !== undefined) headers['Content-Type'] = opts.contentType ?? 'application/json';
    this.#dispatcher ??= ctx.getDispatcher();
    return { url, headers, dispatcher: this.#dispatcher };
  }

  /** One JSON request; non-2xx answers throw a KubeError carrying the API status and reason. */
  async request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const { url, headers, dispatcher } = await this.#prepare(method, path, opts);
    const res = await fetch(url, {
      method,
      headers,
      ...(dispatcher ? { dispatcher } : {}),
      ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    const text = await res.text();
    if (res.status < 200 || res.status > 299) {
      let reason = 'Unknown';
      let message = text.slice(0, 500);
      try {
        const status = JSON.parse(text) as { reason?: string; message?: string };
        reason = status.reason ?? reason;
        message = status.message ?? message;
      } catch {}
      throw new KubeError(res.status, reason, `${method} ${path}: ${res.status} ${reason}: ${message}`);
    }
    return (text ? JSON.parse(text) : {}) as T;
  }

  /**
   * Opens a watch and feeds every event to `onEvent`; resolves when the server closes the stream,
   * rejects on a connection error or a non-200 answer (a 410 answer rejects with status 410).
   */
  async watch(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    onEvent: (e: WatchEvent) => void,
    signal: AbortSignal,
  ): Promise<void> {
    const { url, headers, dispatcher } = await this.#prepare('GET', path, {
      query: { ...query, watch: true },
    });
    const res = await fetch(url, { method: 'GET', headers, signal, ...(dispatcher ? { dispatcher } : {}) });
    if (res.status !== 200 || !res.body) {
      const text = await res.text().catch(() => '');
      let reason = 'Unknown';
      try {
        reason = (JSON.parse(text) as { reason?: string }).reason ?? reason;
      } catch {}
      throw new KubeError(res.status, reason, `watch ${path}: ${res.status} ${text.slice(0, 300)}`);
    }
    const body = Readable.fromWeb(res.body as never);
    const lines = createInterface({ input: body, crlfDelay: Number.POSITIVE_INFINITY });
    const onAbort = () => {
      lines.close();
      body.destroy();
    };
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      for await (const line of lines) {
        if (!line.trim()) continue;
        let event: WatchEvent;
        try {
          event = JSON.parse(line) as WatchEvent;
        } catch {
          continue;
        }
        onEvent(event);
      }
    } catch (err) {
      if (!signal.aborted) throw err;
    } finally {
      signal.removeEventListener('abort', onAbort);
      body.destroy();
    }
  }
}

export const isNotFound = (err: unknown): boolean => err instanceof KubeError && err.status === 404;
export const isConflict = (err: unknown): boolean => err instanceof KubeError && err.status === 409;
export const isAlreadyExists = (err: unknown): boolean =>
  err instanceof KubeError && err.status === 409 && err.reason === 'AlreadyExists';

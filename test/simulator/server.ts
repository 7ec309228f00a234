/**
 * The simulator's single node:http server and the request pipeline every provider shares:
 *   route → read body → record → credentials → delays/faults → validation → provider handler.
 * Faults come before validation so that a fault rule or a `fail-503` model wins even over a sloppy body.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ClaudeState } from './anthropic/claude-state.ts';
import { anthropicApi } from './anthropic/routes.ts';
import { googleAuthApi } from './auth/google.ts';
import { awsStsApi } from './auth/sts.ts';
import { AuthState } from './auth-state.ts';
import { azureApi } from './azure/routes.ts';
import { bedrockApi } from './bedrock/routes.ts';
import { decodeJson, decodeMultipart, type MultipartBody, readBody, recordableMultipart } from './body.ts';
import { cohereApi } from './cohere/routes.ts';
import { handleControl } from './control.ts';
import type { Exchange, ProviderApi } from './exchange.ts';
import { FaultStore } from './faults.ts';
import { geminiApi } from './gemini/routes.ts';
import { openaiApi } from './openai/routes.ts';
import { Recorder, safeHeaders, safePath } from './recorder.ts';
import { sendError } from './respond.ts';
import type { Simulator, SimulatorOptions } from './types.ts';
import { validate } from './validate.ts';
import { vertexApi } from './vertex/routes.ts';

type Options = Required<Omit<SimulatorOptions, 'apiKey' | 'aws' | 'webIdentity' | 'google'>> & {
  apiKey: string | undefined;
};

interface State {
  opts: Options;
  auth: AuthState;
  claude: ClaudeState;
  faults: FaultStore;
  recorder: Recorder;
  timers: Set<NodeJS.Timeout>;
  baseUrl: string;
}

function pickApi(pathname: string): ProviderApi {
  if (pathname.startsWith('/openai/')) return azureApi;
  if (pathname.startsWith('/model/')) return bedrockApi;
  if (pathname.startsWith('/v1/projects/')) return vertexApi;
  if (pathname.startsWith('/v2/')) return cohereApi;
  if (pathname === '/sts' || pathname.startsWith('/sts/')) return awsStsApi;
  if (pathname === '/token' || pathname.startsWith('/computeMetadata/')) return googleAuthApi;
  if (pathname.startsWith('/v1beta/')) return geminiApi;
  // Gemini's stable surface shares the /v1 prefix with OpenAI; its method suffix tells them apart.
  if (pathname.startsWith('/v1/models/') && pathname.includes(':')) return geminiApi;
  if (pathname === '/v1/messages' || pathname.startsWith('/v1/messages/')) return anthropicApi;
  return openaiApi;
}

export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const state: State = {
    opts: {
      port: options.port ?? 0,
      host: options.host ?? '127.0.0.1',
      apiKey: options.apiKey,
      delayMs: options.delayMs ?? 0,
      streamChunks: options.streamChunks ?? 8,
      chunkIntervalMs: options.chunkIntervalMs ?? 0,
      validate: options.validate ?? true,
    },
    auth: new AuthState({ aws: options.aws, webIdentity: options.webIdentity, google: options.google }),
    claude: new ClaudeState(),
    faults: new FaultStore(),
    recorder: new Recorder(),
    timers: new Set(),
    baseUrl: '',
  };

  const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    handle(state, req, res).catch((err: unknown) => {
      if (!res.headersSent && !res.destroyed) {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`simulator bug: ${err instanceof Error ? err.stack : String(err)}`);
      } else {
        res.destroy();
      }
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(state.opts.port, state.opts.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const host = state.opts.host.includes(':') ? `[${state.opts.host}]` : state.opts.host;
  const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
  state.baseUrl = url;

  return {
    url,
    port,
    addFault: (rule) => state.faults.add(rule),
    clearFaults: () => state.faults.clear(),
    requests: () => state.recorder.list(),
    clearRequests: () => state.recorder.clear(),
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of state.timers) clearTimeout(t);
        state.timers.clear();
        server.close(() => resolve());
        // Hanging and streaming answers would otherwise keep close() waiting forever.
        server.closeAllConnections();
      }),
  };
}

async function handle(state: State, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://simulator');
  const method = req.method ?? 'GET';
  if (url.pathname.startsWith('/_sim/')) {
    await handleControl(req, res, url, { faults: state.faults, recorder: state.recorder });
    return;
  }

  const api = pickApi(url.pathname);
  const route = api.route(method, url);
  const raw = await readBody(req);
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        state.timers.delete(t);
        resolve();
      }, ms);
      state.timers.add(t);
    });
  const ex: Exchange = {
    req,
    res,
    provider: api.name,
    url,
    body: undefined,
    model: route?.model ?? '',
    fault: {},
    streamChunks: state.opts.streamChunks,
    chunkIntervalMs: state.opts.chunkIntervalMs,
    baseUrl: state.baseUrl,
    api,
    sleep,
    auth: state.auth,
    claude: state.claude,
  };

  let decodeError: string | undefined;
  if (route?.body === 'json' || (route === undefined && raw.length > 0)) {
    const decoded = decodeJson(raw);
    if (decoded.ok) ex.body = decoded.body;
    else if (route) decodeError = decoded.error;
  } else if (route?.body === 'form') {
    ex.body = Object.fromEntries(new URLSearchParams(raw.toString('utf8')));
  } else if (route?.body === 'multipart') {
    const decoded = decodeMultipart(raw, req.headers['content-type']);
    if (decoded.ok) ex.body = decoded.body;
    else decodeError = decoded.error;
  }
  state.recorder.add({
    provider: api.name,
    method,
    path: safePath(url),
    headers: safeHeaders(req.headers),
    body: route?.body === 'multipart' && ex.body ? recordableMultipart(ex.body as MultipartBody) : ex.body,
  });

  if (!route) return sendError(ex, api.notFound(method, url.pathname));
  const refused = api.precheck(req, url, state.opts.apiKey, { raw, auth: state.auth });
  if (refused) return sendError(ex, refused);
  if (decodeError !== undefined) return sendError(ex, api.invalidJson(decodeError));

  if (!ex.model) ex.model = modelOf(ex.body);
  const fault = state.faults.resolve(api.name, ex.model, url.pathname);
  ex.fault = fault;
  if (fault.streamChunks !== undefined) ex.streamChunks = fault.streamChunks;
  if (fault.chunkIntervalMs !== undefined) ex.chunkIntervalMs = fault.chunkIntervalMs;

  const delay = state.opts.delayMs + (fault.delayMs ?? 0);
  if (delay > 0) await sleep(delay);
  if (fault.hang) return; // never answered; close() or the client ends it
  if (fault.resetConnection) {
    const socket = req.socket;
    if (typeof socket.resetAndDestroy === 'function') socket.resetAndDestroy();
    else socket.destroy();
    return;
  }
  if (fault.status !== undefined) {
    const reply = api.error(fault.status);
    if (fault.retryAfter !== undefined)
      reply.headers = { ...reply.headers, 'retry-after': String(fault.retryAfter) };
    return sendError(ex, reply);
  }

  if (state.opts.validate && route.schema) {
    const issues = validate(route.schema, ex.body);
    if (issues) return sendError(ex, api.invalidRequest(issues, url));
  }
  await route.handle(ex);
}

function modelOf(body: unknown): string {
  if (body && typeof body === 'object') {
    const b = body as { model?: unknown; fields?: { model?: unknown } };
    if (typeof b.model === 'string') return b.model;
    if (b.fields && typeof b.fields.model === 'string') return b.fields.model;
  }
  return '';
}

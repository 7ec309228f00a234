/**
 * A real OpenTelemetry Collector for the tracing tests: the binary `make otelcol-build` builds from
 * test/otelcol (the collector's OTLP receiver and the contrib file exporter), started on loopback
 * with an OTLP receiver over HTTP and over gRPC and a file exporter; the spans it wrote are read
 * back from the file.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { root, run } from '../charts/tools.ts';

export const OTELCOL = join(root, '.cache/tools/otelcol/otelcol');

let building: Promise<void> | undefined;

/** Builds the collector once (`make otelcol-build`, a no-op when it is up to date). */
export function buildCollector(): Promise<void> {
  building ??= run('make', ['-s', '-C', root, 'otelcol-build'], { timeoutMs: 30 * 60_000 }).then((r) => {
    if (r.code !== 0) throw new Error(`make otelcol-build failed (${r.code}):\n${r.stdout}\n${r.stderr}`);
  });
  return building;
}

/** A span as the file exporter wrote it, flattened; OTLP's int64 strings are numbers here. */
export interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: 'internal' | 'server' | 'client' | 'producer' | 'consumer' | 'unspecified';
  status: { code: 'unset' | 'ok' | 'error'; message?: string };
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, unknown>;
  events: { name: string; attributes: Record<string, unknown> }[];
  links: { traceId: string; spanId: string }[];
  resource: Record<string, unknown>;
  scope: string;
}

type OtlpValue = {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: OtlpValue[] };
};
type OtlpAttr = { key: string; value: OtlpValue };

function decodeValue(v: OtlpValue): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(decodeValue);
  return undefined;
}

const attrs = (list: OtlpAttr[] | undefined): Record<string, unknown> =>
  Object.fromEntries((list ?? []).map((a) => [a.key, decodeValue(a.value)]));

const KINDS = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'] as const;
const STATUS = ['unset', 'ok', 'error'] as const;

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes?: OtlpAttr[];
  events?: { name: string; attributes?: OtlpAttr[] }[];
  links?: { traceId: string; spanId: string }[];
  status?: { code?: number; message?: string };
}
interface OtlpLine {
  resourceSpans: {
    resource?: { attributes?: OtlpAttr[] };
    scopeSpans: { scope?: { name?: string }; spans?: OtlpSpan[] }[];
  }[];
}

export function parseSpans(text: string): ExportedSpan[] {
  const out: ExportedSpan[] = [];
  // The exporter writes through a buffer: a last line without its newline is still being written.
  const lines = text.split('\n');
  lines.pop();
  for (const line of lines) {
    if (!line.trim()) continue;
    const doc = JSON.parse(line) as OtlpLine;
    for (const rs of doc.resourceSpans) {
      const resource = attrs(rs.resource?.attributes);
      for (const ss of rs.scopeSpans)
        for (const s of ss.spans ?? [])
          out.push({
            traceId: s.traceId,
            spanId: s.spanId,
            parentSpanId: s.parentSpanId ?? '',
            name: s.name,
            kind: KINDS[s.kind ?? 0] ?? 'unspecified',
            status: {
              code: STATUS[s.status?.code ?? 0] ?? 'unset',
              ...(s.status?.message ? { message: s.status.message } : {}),
            },
            startNs: BigInt(s.startTimeUnixNano),
            endNs: BigInt(s.endTimeUnixNano),
            attributes: attrs(s.attributes),
            events: (s.events ?? []).map((e) => ({ name: e.name, attributes: attrs(e.attributes) })),
            links: (s.links ?? []).map((l) => ({ traceId: l.traceId, spanId: l.spanId })),
            resource,
            scope: ss.scope?.name ?? '',
          });
    }
  }
  return out;
}

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  return port;
}

export interface Collector {
  /** The OTLP/HTTP base URL, as OTEL_EXPORTER_OTLP_ENDPOINT takes it. */
  endpoint: string;
  /** The OTLP/gRPC receiver's address (plaintext), for OTEL_EXPORTER_OTLP_PROTOCOL=grpc. */
  grpcEndpoint: string;
  spans(): Promise<ExportedSpan[]>;
  /** Polls the file until `pick` returns something (the exporter writes every 100 ms). */
  waitFor<T>(pick: (spans: ExportedSpan[]) => T | undefined, timeoutMs?: number): Promise<T>;
  close(): Promise<void>;
}

export async function startCollector(): Promise<Collector> {
  await buildCollector();
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-otelcol-'));
  const port = await freePort();
  const grpcPort = await freePort();
  const file = join(dir, 'spans.jsonl');
  const config = join(dir, 'config.yaml');
  await writeFile(
    config,
    [
      'receivers:',
      '  otlp:',
      '    protocols:',
      '      http:',
      `        endpoint: 127.0.0.1:${port}`,
      '      grpc:',
      `        endpoint: 127.0.0.1:${grpcPort}`,
      'exporters:',
      '  file:',
      `    path: ${file}`,
      '    flush_interval: 100ms',
      'service:',
      '  telemetry:',
      '    metrics:',
      '      level: none',
      '    logs:',
      '      level: warn',
      '  pipelines:',
      '    traces:',
      '      receivers: [otlp]',
      '      exporters: [file]',
      '',
    ].join('\n'),
  );
  const child: ChildProcess = spawn(OTELCOL, [`--config=file:${config}`], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout?.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (log += d.toString()));
  const endpoint = `http://127.0.0.1:${port}`;
  // Ready once the receiver answers an empty export.
  const end = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the collector exited (${child.exitCode}):\n${log}`);
    const ok = await fetch(`${endpoint}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    }).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > end) throw new Error(`the collector did not start:\n${log}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const spans = async () => parseSpans(await readFile(file, 'utf8').catch(() => ''));
  return {
    endpoint,
    grpcEndpoint: `http://127.0.0.1:${grpcPort}`,
    spans,
    async waitFor(pick, timeoutMs = 10_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const got = pick(await spans());
        if (got !== undefined) return got;
        if (Date.now() > until) throw new Error('the collector did not receive the expected spans in time');
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async close() {
      child.kill('SIGTERM');
      await new Promise((r) => (child.exitCode !== null ? r(undefined) : child.once('exit', r)));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

import { added, byName, f, rows, signed, ttftOverDirect } from './figures.ts';
import { goalTable, SURFACE_GOALS, type SurfaceName } from './goals.ts';
import {
  INTERLEAVED_TARGETS,
  LATENCY_TARGETS,
  roundAddedRatio,
  roundDifference,
  roundRatio,
  ttftOverhead,
} from './interleaved.ts';
import { describeRuntime } from './lib/pod-runtime.ts';
import { median } from './load.ts';
import { type BenchResult, IDLE_PAUSE_MS } from './orchestrator.ts';

/** Markdown report: absolute figures, overhead against the direct floor, ratios and the goals. */

export function ratios(r: BenchResult): { label: string; value: number }[] {
  const rps = (n: string) => byName(r, n)?.s.throughput.maxRps ?? Number.NaN;
  const sat = (n: string) => byName(r, n)?.s.throughput.points[0]?.rps ?? Number.NaN;
  const out: { label: string; value: number }[] = [];
  const cpu = (n: string) => byName(r, n)?.s.cpuPerRequestUs ?? Number.NaN;
  for (const gw of ['gateway compat', 'gateway native']) {
    for (const peer of ['portkey', 'passthrough', gw.replace('gateway', 'gateway stateless')]) {
      out.push({ label: `${gw} / ${peer} (max req/s with p99 < limit)`, value: rps(gw) / rps(peer) });
      out.push({ label: `${gw} / ${peer} (saturated req/s)`, value: sat(gw) / sat(peer) });
    }
    const bare = gw.replace('gateway', 'gateway stateless');
    out.push({
      label: `${gw} / ${bare} (CPU µs per request: the price of state)`,
      value: cpu(gw) / cpu(bare),
    });
  }
  return out.filter((x) => Number.isFinite(x.value) && x.value > 0);
}

/** The interleaved stretch: every window, then the per-round figures the goals take the median of. */
function interleavedRows(r: BenchResult): string[] {
  const x = r.interleaved;
  if (!x) return [];
  const rounds = Array.from({ length: x.rounds }, (_, i) => i);
  const at = (t: string, round: number) => x.windows.find((w) => w.target === t && w.round === round);
  const present = INTERLEAVED_TARGETS.filter((t) => x.windows.some((w) => w.target === t));
  const out = [
    `## Interleaved: the goals that compare targets, in one stretch`,
    '',
    `The targets up at once, each gateway on its own Redis, measured in turn: ${x.rounds} rounds, the order`,
    'reversed every round. A ratio or a difference is taken within each round, from windows seconds',
    'apart, so drift of the machine between the rows above does not enter it; the goals read the median',
    "over the rounds. The gateway's Responses and Messages windows are surfaces of the stateful pod, on",
    'the same workflow as its chat completions (gateway compat).',
    '',
    `Saturated windows of ${x.windowS} s at ${x.connections} connections, each after ${x.rewarmS} s of unrecorded load (${x.warmUpS} s per`,
    'target before the first round). Each cell is req/s, then CPU µs per request (all threads) and the main',
    "thread's µs per request.",
    '',
    `| target | ${rounds.map((i) => `round ${i + 1}`).join(' | ')} | median CPU µs / request |`,
    `|---|${rounds.map(() => '---').join('|')}|---|`,
  ];
  for (const t of present) {
    const cells = rounds.map((i) => {
      const w = at(t, i);
      return w
        ? `${w.rps} · ${f(w.cpuPerRequestUs, 0)} · ${f(w.mainThreadUsPerRequest, 0)}${w.errors ? ` (${w.errors} errors)` : ''}`
        : 'n/a';
    });
    const med = median(x.windows.filter((w) => w.target === t).map((w) => w.cpuPerRequestUs));
    out.push(`| ${t} | ${cells.join(' | ')} | ${f(med, 0)} |`);
  }
  const list = (xs: number[], digits = 2) => xs.map((v) => f(v, digits)).join(', ');
  const ratio = (label: string, a: (typeof present)[number], b: (typeof present)[number], cpu: boolean) => {
    const q = roundRatio(x, a, b, cpu ? (w) => w.cpuPerRequestUs : (w) => w.rps);
    return q.perRound.length
      ? [`- ${label}, per round: ${list(q.perRound)}; median **${f(q.median)}×**`]
      : [];
  };
  out.push(
    '',
    ...ratio(
      'CPU per request, gateway compat / gateway stateless compat',
      'gateway compat',
      'gateway stateless compat',
      true,
    ),
    ...ratio('req/s, gateway compat / passthrough', 'gateway compat', 'passthrough', false),
    ...ratio('req/s, gateway compat / portkey', 'gateway compat', 'portkey', false),
    ...ratio(
      'CPU per request, gateway responses / gateway compat',
      'gateway responses',
      'gateway compat',
      true,
    ),
    ...ratio(
      'CPU per request, gateway messages / gateway compat',
      'gateway messages',
      'gateway compat',
      true,
    ),
    ...ratio('CPU per request, gateway guarded / gateway compat', 'gateway guarded', 'gateway compat', true),
    '',
  );
  if (x.latency?.length) {
    const lat = (t: string, round: number) => x.latency?.find((w) => w.target === t && w.round === round);
    out.push(
      `Windows of ${x.c1WindowS} s at concurrency 1, each after as long unrecorded. Each cell is p50 / p99 (ms).`,
      '',
      `| target | ${rounds.map((i) => `round ${i + 1}`).join(' | ')} |`,
      `|---|${rounds.map(() => '---').join('|')}|`,
    );
    for (const t of LATENCY_TARGETS.filter((t) => x.latency?.some((w) => w.target === t))) {
      const cells = rounds.map((i) => {
        const w = lat(t, i);
        return w ? `${f(w.p50, 3)} / ${f(w.p99, 3)}${w.errors ? ` (${w.errors} errors)` : ''}` : 'n/a';
      });
      out.push(`| ${t} | ${cells.join(' | ')} |`);
    }
    const diff = (label: string, a: (typeof LATENCY_TARGETS)[number], q: 'p50' | 'p99') => {
      const d = roundDifference(x, a, 'direct', q);
      return `- ${label}, per round: ${list(d.perRound, 3)} ms; median **${f(d.median, 3)} ms**`;
    };
    out.push(
      '',
      diff('added p50, gateway compat − direct', 'gateway compat', 'p50'),
      diff('added p99, gateway compat − direct', 'gateway compat', 'p99'),
      diff('added p50, gateway cache hit − direct', 'gateway cache hit', 'p50'),
    );
    for (const name of ['gateway responses', 'gateway messages', 'gateway guarded'] as const) {
      const q = roundAddedRatio(x, name, 'gateway compat', 'p50');
      if (q.perRound.length)
        out.push(
          `- added p50, ${name} / gateway compat (each over direct), per round: ${list(q.perRound)}; median **${f(q.median)}×**`,
        );
    }
    out.push('');
  }
  if (x.streams?.length) {
    const t = ttftOverhead(x);
    const errors = x.streams.reduce((n, s) => n + s.errors, 0);
    out.push(
      `Streams one at a time, ${x.streamsPerRound} per round and target after one unrecorded: time to first token p50 over ${t.streams} streams each,`,
      `gateway compat ${f(t.gateway, 3)} ms, direct ${f(t.direct, 3)} ms; overhead **${f(t.overhead, 3)} ms**${errors ? ` (${errors} streams failed)` : ''}.`,
      ...(Number.isNaN(t.passthrough)
        ? []
        : [
            `The pass-through, streamed the same way: ${f(t.passthrough, 3)} ms, overhead ${f(t.passthroughOverhead, 3)} ms (what the bare hop costs here).`,
          ]),
      '',
    );
  }
  return out;
}

/**
 * The Responses and Messages surfaces against chat completions on the same workflow, from the rows:
 * added latency at concurrency 1 and CPU per request, each as a ratio of the compatible surface's.
 */
function surfaceRows(r: BenchResult): string[] {
  const compat = byName(r, 'gateway compat');
  if (!compat) return [];
  const d0 = r.options.delays[0] ?? 0;
  const base = { p50: added(r, compat.s, d0, 'c1', 'p50'), cpu: compat.s.cpuPerRequestUs };
  const out: string[] = [];
  for (const name of Object.keys(SURFACE_GOALS) as SurfaceName[]) {
    const x = byName(r, name);
    if (!x) continue;
    const p50 = added(r, x.s, d0, 'c1', 'p50');
    const cpu = x.s.cpuPerRequestUs;
    const goal = SURFACE_GOALS[name];
    const ok = (v: number, limit: number) => (Number.isNaN(v) ? '?' : v <= limit ? '✅' : '❌');
    const p50Goal =
      goal.p50 === undefined ? '(reference)' : `${ok(p50 / base.p50, goal.p50)} (≤ ${goal.p50})`;
    out.push(
      `| ${name} | ${f(p50, 3)} | ${f(base.p50, 3)} | ${f(p50 / base.p50)} ${p50Goal} | ${f(cpu, 0)} | ${f(base.cpu, 0)} | ${f(cpu / base.cpu)} ${ok(cpu / base.cpu, goal.cpu)} (≤ ${goal.cpu}) |`,
    );
  }
  if (!out.length) return [];
  return [
    `| surface | added c1 p50 @${d0} (ms) | chat completions | ratio | CPU µs / request | chat completions | ratio |`,
    '|---|---|---|---|---|---|---|',
    ...out,
  ];
}

/** Each target's first surface: its saturated row against the first seconds after a pause. */
function pauseRows(r: BenchResult): string[] {
  const measured = r.targets.filter((t) => t.afterPause && t.surfaces[0]);
  const p = measured[0]?.afterPause;
  if (!p) return [];
  const out = [
    `## After a pause (${p.idleS} s idle, then ${p.burstS} s at ${r.options.highConcurrency} connections, delay ${r.options.delays[0]} ms)`,
    '',
    'Once its rows are done, each target idles and then serves its first surface again: what a burst',
    'meets in a pod that has been idle. The RSS column is the last reading before the pause and the',
    'reading at its end (what the idle process gave back).',
    '',
    '| target | CPU µs / request, saturated row | CPU µs / request after the pause | × | RSS before / after the pause (MB) |',
    '|---|---|---|---|---|',
  ];
  for (const t of measured) {
    const warm = t.surfaces[0]!.cpuPerRequestUs;
    const a = t.afterPause!;
    out.push(
      `| ${t.surfaces[0]!.name} | ${f(warm, 0)} | ${f(a.cpuPerRequestUs, 0)} | ${f(a.cpuPerRequestUs / warm)} | ${f(t.rssMb.after, 0)} / ${f(a.rssMb, 0)} |`,
    );
  }
  out.push('');
  return out;
}

export function markdown(r: BenchResult): string {
  const o = r.options;
  const all = rows(r);
  const direct = byName(r, 'direct');
  const lines: string[] = [];
  lines.push(`# Switchyard benchmark — ${r.startedAt}`, '');
  lines.push(
    `Machine: ${r.machine.cpus} × ${r.machine.model}, ${r.machine.platform}, Node ${r.machine.node}. ` +
      `Load average at start ${r.machine.loadavgStart.map((x) => x.toFixed(2)).join(' / ')}, at end ${r.machine.loadavgEnd.map((x) => x.toFixed(2)).join(' / ')}. ${r.machine.note}`,
    '',
    `Run: ${r.durationS} s; ${o.durationS} s per load point; upstream delays ${o.delays.join(', ')} ms; ` +
      `unrecorded warm-up: every surface of a target at its start (1 s at concurrency 8, ${o.warmUp.targetHighS} s at ${o.highConcurrency}), then each surface again before its rows (${o.warmUp.surfaceHighS} s at ${o.highConcurrency}, ${o.warmUp.c1S} s at 1); ` +
      `concurrency 1 (closed loop, µs-resolution undici client) and ${o.highConcurrency} (autocannon connections, whole-ms histogram); throughput = autocannon, ${o.highConcurrency} connections, ` +
      `bisection over connections for the highest throughput with p99 < ${o.p99LimitMs} ms (delay ${o.delays[0]} ms); ` +
      `streams: ${o.streamChunks} chunks ${o.chunkIntervalMs} ms apart, ${o.streamConcurrency} at once to warm up, then ${o.streams} one at a time (TTFT) then ${o.streams} ${o.streamConcurrency} at a time (gaps)` +
      (o.pause
        ? `; then ${o.pause.idleS} s idle and ${o.pause.burstS} s of the first surface at ${o.highConcurrency}.`
        : '.'),
    '',
  );
  if (o.gatewayRuntime) lines.push(`Gateway pods: ${describeRuntime(o.gatewayRuntime)}.`, '');
  lines.push('## Added latency (target minus direct, same percentile, ms)', '');
  const head = [
    'target',
    ...o.delays.flatMap((d) => [
      `c1 p50 @${d}`,
      `c1 p99 @${d}`,
      `c${o.highConcurrency} p50 @${d}`,
      `c${o.highConcurrency} p99 @${d}`,
    ]),
  ];
  lines.push(`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`);
  for (const x of all) {
    const cells = o.delays.flatMap((d) => {
      if (x.s.name === 'direct') {
        const me = x.s.delays.find((y) => y.delayMs === d);
        return [me?.c1.p50, me?.c1.p99, me?.cHigh.p50, me?.cHigh.p99].map((v) => `(${f(v, 3)})`);
      }
      return [
        signed(added(r, x.s, d, 'c1', 'p50'), 3),
        signed(added(r, x.s, d, 'c1', 'p99'), 3),
        signed(added(r, x.s, d, 'cHigh', 'p50')),
        signed(added(r, x.s, d, 'cHigh', 'p99')),
      ];
    });
    lines.push(`| ${x.s.name} | ${cells.join(' | ')} |`);
  }
  lines.push('', 'The direct row shows the absolute latency of the simulator in parentheses.', '');
  const d0 = o.delays[0];
  const idleDirect = direct?.s.c1Idle;
  if (idleDirect) {
    lines.push(
      `## Added latency after ${IDLE_PAUSE_MS} ms idle (concurrency 1, delay ${d0} ms)`,
      '',
      `The same requests one at a time with ${IDLE_PAUSE_MS} ms between an answer and the next request, as`,
      'before every first token of the one-at-a-time streams: how much slower each path runs after the',
      'target has slept. Added p50 back to back is the first table again.',
      '',
      '| target | added p50 back to back | added p50 after idle | difference |',
      '|---|---|---|---|',
    );
    for (const x of all) {
      const idle = x.s.c1Idle;
      if (!idle) continue;
      if (x.s.name === 'direct') {
        const me = x.s.delays.find((y) => y.delayMs === d0);
        lines.push(
          `| direct | (${f(me?.c1.p50, 3)}) | (${f(idle.p50, 3)}) | ${signed(idle.p50 - (me?.c1.p50 ?? Number.NaN), 3)} |`,
        );
        continue;
      }
      const back = added(r, x.s, d0 ?? 0, 'c1', 'p50');
      const afterIdle = idle.p50 - idleDirect.p50;
      lines.push(
        `| ${x.s.name} | ${signed(back, 3)} | ${signed(afterIdle, 3)} | ${signed(afterIdle - back, 3)} |`,
      );
    }
    lines.push(
      '',
      "The direct row shows the simulator's own p50 in parentheses, and how much idleness adds to it.",
      '',
    );
  }
  lines.push('## Throughput, streaming, memory, start', '');
  lines.push(
    `| target | max req/s (p99 < ${o.p99LimitMs} ms) | p99 / connections there | saturated req/s (c${o.highConcurrency}) | CPU µs / request | main thread µs / request (busy) | TTFT p50 | TTFT overhead p50 | TTFT overhead p50, ${o.streamConcurrency} at a time | gap p99 | gap overhead p99 | RSS idle / peak / after (MB) | start → first 200 (ms) |`,
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  );
  for (const x of all) {
    const main = x.s.mainThread
      ? `${f(x.s.mainThread.usPerRequest, 0)} (${f(x.s.mainThread.busy * 100, 0)} %)`
      : 'n/a';
    const t = x.s.throughput;
    const st = x.s.stream;
    const over = ttftOverDirect(r, x.s.name);
    const sc = x.s.streamConcurrent;
    const overC = direct ? sc.ttft.p50 - direct.s.streamConcurrent.ttft.p50 : Number.NaN;
    const gapOver = direct ? sc.gap.p99 - direct.s.streamConcurrent.gap.p99 : Number.NaN;
    lines.push(
      `| ${x.s.name} | ${Math.round(t.maxRps)} | ${f(t.p99AtMax, 0)} ms / ${t.connectionsAtMax} | ${Math.round(t.points[0]?.rps ?? 0)} | ${f(x.s.cpuPerRequestUs, 0)} | ${main} | ${f(st.ttft.p50)} | ${x.s.name === 'direct' ? '—' : signed(over)} | ${x.s.name === 'direct' ? `(${f(sc.ttft.p50)})` : signed(overC)} | ${f(sc.gap.p99)} | ${x.s.name === 'direct' ? '—' : signed(gapOver)} | ${f(x.rss.idle, 0)} / ${f(x.rss.peak, 0)} / ${f(x.rss.after, 0)} | ${f(x.startupMs, 0)} |`,
    );
  }
  lines.push(
    '',
    "The direct row is the simulator process (its RSS and start time). CPU counts all of a process's threads at its saturated row; the main thread runs the JavaScript, and a main thread well short of 100 % busy there was held back by the machine (load generator and simulator share its cores), not by its own work.",
    '',
  );
  for (const x of all)
    if (x.s.stream.errors)
      lines.push(
        `- ${x.s.name}: ${x.s.stream.errors} of ${o.streams} streams failed: ${x.s.stream.firstError}`,
      );
  lines.push('');
  lines.push(...pauseRows(r));
  lines.push(...interleavedRows(r));
  const rs = ratios(r);
  if (rs.length) {
    lines.push('## Ratios', '');
    for (const x of rs) lines.push(`- ${x.label}: **${x.value.toFixed(2)}×**`);
    lines.push('');
  }
  const g = goalTable(r);
  if (g.length) lines.push('## Goals', '', ...g, '');
  const sr = surfaceRows(r);
  if (sr.length) lines.push('## Responses, Messages and guardrails against chat completions', '', ...sr, '');
  return lines.join('\n');
}

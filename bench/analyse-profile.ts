/**
 * Aggregates a V8 .cpuprofile (node --cpu-prof) by self time: top functions and top files.
 *   node bench/analyse-profile.ts <file.cpuprofile> [--top 30] [--requests N]
 * With --requests (the requests served while profiling), each line also gives µs per request.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '30' }, requests: { type: 'string' } },
});
const file = positionals[0];
if (!file) throw new Error('usage: analyse-profile.ts <file.cpuprofile>');
const prof = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const top = Number(values.top);

const byId = new Map(prof.nodes.map((n) => [n.id, n]));
const selfUs = new Map<number, number>();
prof.samples.forEach((id, i) => {
  selfUs.set(id, (selfUs.get(id) ?? 0) + (prof.timeDeltas[i] ?? 0));
});
const total = [...selfUs.values()].reduce((a, b) => a + b, 0);

const short = (url: string) =>
  url
    .replace(new RegExp(`^file://${resolve(import.meta.dirname, '..')}/(dist/)?`), '')
    .replace(/^file:\/\/.*?node_modules\//, 'node_modules/')
    .replace(/^node:/, 'node:') || '(native)';
const pkg = (url: string) => {
  const s = short(url);
  const m = /^node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(s);
  if (m) return m[1]!;
  if (s.startsWith('node:')) return 'node:internal';
  return s.split('/').slice(0, 3).join('/');
};

const fn = new Map<string, number>();
const files = new Map<string, number>();
const groups = new Map<string, number>();
for (const [id, us] of selfUs) {
  const n = byId.get(id);
  if (!n) continue;
  const cf = n.callFrame;
  const where = short(cf.url);
  const key = `${cf.functionName || '(anonymous)'}  ${where}:${cf.lineNumber + 1}`;
  fn.set(key, (fn.get(key) ?? 0) + us);
  files.set(where, (files.get(where) ?? 0) + us);
  // V8's own entries ((idle), (garbage collector), (program)) apart from native code of functions.
  const group = cf.url ? pkg(cf.url) : cf.functionName.startsWith('(') ? cf.functionName : '(native)';
  groups.set(group, (groups.get(group) ?? 0) + us);
}
const requests = values.requests ? Number(values.requests) : undefined;
const print = (title: string, m: Map<string, number>) => {
  process.stdout.write(`\n## ${title}\n`);
  for (const [k, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    const perRequest = requests ? `${(us / requests).toFixed(1).padStart(7)} µs/req  ` : '';
    process.stdout.write(
      `${((us / total) * 100).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(6)} ms  ${perRequest}${k}\n`,
    );
  }
};
process.stdout.write(`profile ${file}: ${(total / 1e6).toFixed(2)} s sampled\n`);
print('self time by package / folder', groups);
print('self time by file', files);
print('self time by function', fn);

import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

// Prints what each test folder cost (the seconds its tests ran, as vitest's JSON report times each
// file: without the setup hooks that start servers, so the sum is below the wall time) and then the
// plain closing line CI reads ("N passed, N failed").
interface Report {
  numPassedTests?: number;
  numFailedTests?: number;
  numPendingTests?: number;
  numTodoTests?: number;
  startTime?: number;
  testResults?: { name: string; startTime?: number; endTime?: number }[];
}
const path = process.argv[2] ?? '.cache/vitest-report.json';
let report: Report;
try {
  report = JSON.parse(readFileSync(path, 'utf8')) as Report;
} catch {
  console.log('0 passed, 1 failed');
  console.error(`no test report at ${path}: the test run did not finish`);
  process.exit(1);
}

const byFolder = new Map<string, { seconds: number; files: number }>();
let last = report.startTime ?? 0;
for (const file of report.testResults ?? []) {
  const folder = relative(process.cwd(), file.name).split('/').slice(0, 2).join('/');
  const seconds = ((file.endTime ?? 0) - (file.startTime ?? 0)) / 1000;
  const f = byFolder.get(folder) ?? { seconds: 0, files: 0 };
  byFolder.set(folder, { seconds: f.seconds + Math.max(0, seconds), files: f.files + 1 });
  last = Math.max(last, file.endTime ?? 0);
}
if (byFolder.size > 0) {
  const rows = [...byFolder].sort((a, b) => b[1].seconds - a[1].seconds);
  const wall = report.startTime ? ((last - report.startTime) / 1000).toFixed(0) : '?';
  console.log(`test time by folder (seconds the tests ran, setup hooks not counted; wall ${wall} s):`);
  for (const [folder, f] of rows)
    console.log(`  ${folder.padEnd(24)} ${f.seconds.toFixed(1).padStart(7)} s  ${f.files} files`);
}

const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
console.log(
  `${report.numPassedTests ?? 0} passed, ${report.numFailedTests ?? 0} failed${skipped ? `, ${skipped} skipped` : ''}`,
);

import { readFileSync } from 'node:fs';

// Prints the plain closing line CI reads ("N passed, N failed") from vitest's JSON report.
interface Report {
  numPassedTests?: number;
  numFailedTests?: number;
  numPendingTests?: number;
  numTodoTests?: number;
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
const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
console.log(
  `${report.numPassedTests ?? 0} passed, ${report.numFailedTests ?? 0} failed${skipped ? `, ${skipped} skipped` : ''}`,
);

// Runs the whole vitest suite and ends with one plain summary line ("tests: N passed, N failed")
// that CI systems read regardless of the runner's own formatting.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';

const report = 'test-results/vitest.json';
mkdirSync('test-results', { recursive: true });
const run = spawnSync(
  'vitest',
  ['run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...process.argv.slice(2)],
  { stdio: 'inherit', shell: false },
);
let summary = 'tests: 0 passed, 0 failed';
try {
  const json = JSON.parse(readFileSync(report, 'utf8'));
  const skipped = json.numPendingTests + json.numTodoTests;
  summary = `tests: ${json.numPassedTests} passed, ${json.numFailedTests} failed` + (skipped ? `, ${skipped} skipped` : '');
  if (json.numTotalTests === 0) summary = 'tests: 0 passed, 1 failed (no test ran)';
} catch {
  summary = 'tests: 0 passed, 1 failed (no report was written)';
}
console.log(summary);
process.exit(run.status ?? 1);

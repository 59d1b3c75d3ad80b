// Lists the benchmarks, or runs one: `pnpm bench ingest` runs `pnpm bench:ingest`.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const scripts = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).scripts;
const benches = Object.keys(scripts).filter((name) => name.startsWith('bench:')).map((name) => name.slice(6));
const [name, ...args] = process.argv.slice(2);
if (!name || !benches.includes(name)) {
  console.log(`usage: pnpm bench <name> [args]\nbenchmarks: ${benches.join(', ')}\nresults are recorded in docs/benchmarks.md`);
  process.exit(name ? 2 : 0);
}
const run = spawnSync('pnpm', ['--silent', `bench:${name}`, ...args], { stdio: 'inherit' });
process.exit(run.status ?? 1);

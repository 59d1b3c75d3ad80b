#!/usr/bin/env node
// Runs the TypeScript CLI through tsx (the project has no build step).
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli.ts');
try {
  process.exit(await main(process.argv.slice(2)));
} catch (error) {
  console.error(`hivegate-agent: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}

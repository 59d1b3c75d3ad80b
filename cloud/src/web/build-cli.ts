import { buildWebApp, ensureWebBuild, WEB_DIST } from './build.ts';

/** `build:web` builds the web app; `--if-stale` (used before start) skips the work when the build is current. */
async function main() {
  const started = Date.now();
  if (process.argv.includes('--if-stale')) {
    const outcome = await ensureWebBuild();
    if (outcome === 'current') return;
  } else {
    await buildWebApp({ logLevel: 'info' });
  }
  console.log(`web app built into ${WEB_DIST} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

main().catch((err: unknown) => {
  console.error(`building the web app failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});

import { sharedViteConfig, WEB_ROOT } from './build.ts';

/**
 * `dev:web`: Vite's development server for working on the app (instant reloads), passing API and media paths
 * through to a running cloud (HIVEGATE_URL, default http://127.0.0.1:8600). Production serving is routes.ts.
 */
async function main() {
  const target = process.env.HIVEGATE_URL ?? `http://127.0.0.1:${process.env.PORT ?? 8600}`;
  const { createServer } = await import('vite');
  const passThrough = Object.fromEntries(['/api', '/iot', '/entrance', '/media', '/health'].map((prefix) => [prefix, { target, changeOrigin: false }]));
  const server = await createServer({
    ...sharedViteConfig(WEB_ROOT),
    server: { host: '127.0.0.1', port: Number(process.env.WEB_DEV_PORT ?? 5173), proxy: { '/graphql': { target, ws: true }, ...passThrough } },
  });
  await server.listen();
  server.printUrls();
  console.log(`  API and media from ${target}`);
}

main().catch((err: unknown) => {
  console.error(`the web development server failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});

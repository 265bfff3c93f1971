import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = path.dirname(fileURLToPath(import.meta.url));

// The app is built into dist/web, served by Vigil at the base URL (src/transport/webApp.ts):
// hashed files under /assets, index.html never cached. No plugin: Vite transforms JSX itself.
export default defineConfig({
  root: here,
  base: '/',
  publicDir: path.join(here, 'public'),
  build: {
    outDir: path.join(here, '../dist/web'),
    emptyOutDir: true,
    assetsDir: 'assets',
    target: 'es2022',
    // No inline scripts or data: URLs the CSP would have to allow.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
    rolldownOptions: {
      // TanStack Query's "use client" markers are for server components, which this app has none of.
      onwarn(warning, warn) { if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning); },
    },
  },
  oxc: { jsx: { runtime: 'automatic' } },
  // `vite --config web/vite.config.mts`: the app with hot reload, its API calls sent to a running Vigil.
  server: { proxy: { '/api': process.env.VIGIL_URL ?? 'http://127.0.0.1:8080' } },
});

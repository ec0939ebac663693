// The dashboard is served by `meridian serve` at / with its assets under
// /assets/; everything is bundled so nothing loads from another host.
import { defineConfig } from 'vite';

export default defineConfig({
  base: '/',
  build: {
    assetsInlineLimit: 0,
    sourcemap: false,
    reportCompressedSize: false,
  },
  test: {
    environment: 'happy-dom',
    include: ['test/**/*.test.js'],
  },
});

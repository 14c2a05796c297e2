// The renderer build: relative asset paths (base './') so the same bundle loads
// from the loopback host and from file:// inside Electron.
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

export default defineConfig(({ command }) => {
  // A build is always the production bundle. Vite takes NODE_ENV from the environment when it is set, and a
  // build started from a test runner (NODE_ENV=test) would otherwise ship React's development build, with its
  // dev-only JSX runtime and checks: several times slower to render the task list.
  if (command === 'build') process.env.NODE_ENV = 'production';
  return {
    root: 'renderer',
    base: './',
    plugins: [react()],
    build: {
      outDir: '../dist-renderer',
      emptyOutDir: true,
      // Electron 40 and current browsers: no legacy transforms needed.
      target: 'es2022',
      chunkSizeWarningLimit: 1500,
    },
  };
});

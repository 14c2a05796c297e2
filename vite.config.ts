// The renderer build: relative asset paths (base './') so the same bundle loads
// from the loopback host and from file:// inside Electron.
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

export default defineConfig({
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
});

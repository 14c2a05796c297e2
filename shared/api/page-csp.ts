/**
 * The Content-Security-Policy of the renderer's page, whichever host serves
 * it (the desktop app's own scheme or the loopback web host): nothing but the
 * page's own origin, no inline script.
 */
export const PAGE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  // CodeMirror injects its theme as <style> elements.
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

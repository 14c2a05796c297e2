/**
 * The renderer's origin in the desktop app: `waystation://app/`.
 *
 * A privileged custom scheme instead of file:// gives the page a real origin,
 * so navigation, IPC senders and the CSP can be checked against exactly it,
 * and no other local file can pose as the app.
 */

export const APP_SCHEME = 'waystation';
export const APP_HOST = 'app';
export const APP_ENTRY_URL = `${APP_SCHEME}://${APP_HOST}/index.html`;

/** True for URLs of the app's own pages (scheme and host compared exactly). */
export function isAppUrl(url: string): boolean {
  try {
    const u = new URL(url);
    return u.protocol === `${APP_SCHEME}:` && u.host === APP_HOST;
  } catch {
    return false;
  }
}

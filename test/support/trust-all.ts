/**
 * A trust gate that trusts every directory: for tests of a host's actions on
 * directories the test itself wrote. Trust itself is tested with the real
 * trust store (test/electron/runtime/directory-trust.test.ts).
 */
import type { TrustGate } from '../../electron/runtime/directory-trust.js';

export const trustAll: TrustGate = {
  isTrusted: async () => true,
  trust: async () => {},
};

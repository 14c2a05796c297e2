// Types of lint/layer-order.js, for the tests that import it.
import type { Rule } from 'eslint';

export declare const ELECTRON_FLOORS: string[];
export declare const COMPOSITION_ROOTS: Record<string, string[]>;
export declare const layerOrder: Rule.RuleModule;

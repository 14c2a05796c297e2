/**
 * The floors of electron/, lowest first, as a lint rule: a module may import
 * from its own floor and those below it, never from one above. A cycle
 * between two folders means code sits on the wrong floor: move it down, or
 * inject it (as the runtime is handed its built-in agents).
 *
 * Resolved paths are compared, not import strings, so `../../store/x.js` from
 * electron/cli/commands/ is seen as electron/store like any other.
 */
import path from 'node:path';

/** The floors, lowest first; docs/ARCHITECTURE.md says what each holds. */
export const ELECTRON_FLOORS = ['store', 'sources', 'verify', 'llm', 'runtime', 'agents', 'host', 'cli', 'main'];

/**
 * Modules that put the floors together, and so may reach above their own:
 * each entry is a file and the floors it may import besides those below it.
 */
export const COMPOSITION_ROOTS = {
  // The worker process's entry point provides the built-in agents to the runtime it runs.
  'electron/runtime/worker-main.ts': ['agents'],
  // The library's entry point exports the built-in agents (and so provides them).
  'electron/runtime/index.ts': ['agents'],
};

/** The floor of a repository-relative path under electron/, or null. */
function floorOf(rel) {
  const parts = rel.split(/[\\/]/);
  return parts[0] === 'electron' && parts.length > 2 ? parts[1] : null;
}

/** @type {import('eslint').Rule.RuleModule} */
export const layerOrder = {
  meta: {
    type: 'problem',
    docs: { description: 'keep imports between the folders of electron/ in their declared order' },
    messages: {
      upward:
        '{{from}} is on floor "{{fromFloor}}" and may not import from "{{toFloor}}", which sits above it (electron/, lowest first: {{order}}). Move the code it needs down, or inject it.',
      unknown:
        'electron/{{floor}}/ is not one of the declared floors ({{order}}); add it to lint/layer-order.js at the floor it belongs on.',
    },
    schema: [],
  },
  create(context) {
    const cwd = context.cwd ?? process.cwd();
    const file = path.relative(cwd, context.filename).split(path.sep).join('/');
    const fromFloor = floorOf(file);
    if (!fromFloor) return {};
    const order = ELECTRON_FLOORS.join(' < ');
    const check = (node, source) => {
      if (typeof source !== 'string' || !source.startsWith('.')) return;
      const target = path
        .relative(cwd, path.resolve(path.dirname(context.filename), source))
        .split(path.sep)
        .join('/');
      const toFloor = floorOf(target);
      if (!toFloor || toFloor === fromFloor) return;
      const from = ELECTRON_FLOORS.indexOf(fromFloor);
      const to = ELECTRON_FLOORS.indexOf(toFloor);
      if (from < 0 || to < 0) {
        context.report({ node, messageId: 'unknown', data: { floor: from < 0 ? fromFloor : toFloor, order } });
        return;
      }
      if (to > from && !(COMPOSITION_ROOTS[file] ?? []).includes(toFloor)) {
        context.report({ node, messageId: 'upward', data: { from: file, fromFloor, toFloor, order } });
      }
    };
    return {
      ImportDeclaration: (node) => check(node, node.source.value),
      ExportNamedDeclaration: (node) => node.source && check(node, node.source.value),
      ExportAllDeclaration: (node) => check(node, node.source.value),
      ImportExpression: (node) => node.source.type === 'Literal' && check(node, node.source.value),
    };
  },
};

// Tests drive the runtime directly, as an entry point does: the built-in agents are provided first (see runtime/built-in-agents.ts).
import '../../electron/agents/registry.js';

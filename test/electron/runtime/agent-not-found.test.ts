/**
 * Whether an agent name can start from a directory, when its configuration says so without any module loaded
 * (agentNotFound), and the "there is no agent" message with the name nearest the one asked for.
 */
import { describe, expect, it } from 'vitest';
import { agentNotFound, noAgentMessage, type AgentsConfigRead } from '../../../electron/runtime/agent-catalog.js';
import '../../../electron/agents/registry.js';

const config = (over: Partial<AgentsConfigRead> = {}): AgentsConfigRead => ({
  file: '/dir/waystation.config.json',
  present: true,
  entries: [],
  commands: [],
  problem: null,
  ...over,
});

describe('agentNotFound', () => {
  it('finds nothing to say of a built-in, a named entry or a command', () => {
    expect(agentNotFound('checkpoint-demo', config({ present: false }))).toBeNull();
    expect(agentNotFound('reporter', config({ entries: [{ module: './reporter.ts', name: 'reporter' }] }))).toBeNull();
    expect(agentNotFound('py-tool', config({ commands: [{ name: 'py-tool', command: ['python3', 'tool.py'] }] }))).toBeNull();
  });

  it('cannot tell while an entry leaves its name to its module', () => {
    expect(agentNotFound('anything', config({ entries: [{ module: './agent.ts' }] }))).toBeNull();
  });

  it('says a name is no agent, with the nearest one, the built-ins and what is registered', () => {
    const said = agentNotFound(
      'reportr',
      config({
        entries: [{ module: './reporter.ts', name: 'reporter' }],
        commands: [{ name: 'py-tool', command: ['python3', 'tool.py'] }],
      }),
    );
    expect(said).toBe(
      'there is no agent "reportr" (did you mean "reporter"?): the built-in agents are checkpoint-demo, md-summarizer, ' +
        'and waystation.config.json registers py-tool, reporter. Nothing was written.',
    );
    expect(agentNotFound('weather', config({ present: false }))).toBe(
      'there is no agent "weather": the built-in agents are checkpoint-demo, md-summarizer; register others in waystation.config.json. Nothing was written.',
    );
  });

  it('says what is wrong with a configuration that cannot be used', () => {
    expect(agentNotFound('reporter', config({ problem: 'waystation.config.json is not JSON' }))).toBe(
      '"reporter" is not a built-in agent (checkpoint-demo, md-summarizer), and waystation.config.json is not JSON',
    );
  });
});

it('noAgentMessage adds why the entries loaded to look for the name did not give it', () => {
  expect(noAgentMessage('x', config({ entries: [{ module: './a.ts' }] }), ['./a.ts exports agent "y"'])).toBe(
    'there is no agent "x": the built-in agents are checkpoint-demo, md-summarizer, and waystation.config.json registers ./a.ts (./a.ts exports agent "y"). Nothing was written.',
  );
});

import { describe, expect, it } from 'vitest';
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { JsonPlusSerializer } from '@langchain/langgraph-checkpoint';
import { decodeJsonText } from '../../../../electron/sources/langgraph/json-serde.js';

/** What LangGraph's own JavaScript serializer writes for a value. */
async function written(value: unknown): Promise<string> {
  const [type, bytes] = await new JsonPlusSerializer().dumpsTyped(value);
  expect(type).toBe('json');
  return new TextDecoder().decode(bytes);
}

describe('decodeJsonText: the json serde with LangChain constructor envelopes', () => {
  it('turns each lc:1 constructor envelope into a value labelled with its id, its kwargs as fields', async () => {
    const text = await written({ messages: [new HumanMessage({ content: 'hi', id: 'h1' })] });
    expect(text).toContain('"lc":1');
    expect(decodeJsonText(text)).toEqual({
      messages: [{ $type: 'langchain_core.messages.HumanMessage', content: 'hi', id: 'h1', additional_kwargs: {}, response_metadata: {} }],
    });
  });

  it('keeps tool calls and tool results as data', async () => {
    const text = await written([
      new AIMessage({ content: '', id: 'a', tool_calls: [{ id: 'c1', name: 'search', args: { q: 'x' }, type: 'tool_call' }] }),
      new ToolMessage({ content: 'found', tool_call_id: 'c1', name: 'search' }),
    ]);
    const [ai, tool] = decodeJsonText(text) as Record<string, unknown>[];
    expect(ai.$type).toBe('langchain_core.messages.AIMessage');
    expect(ai.tool_calls).toEqual([{ id: 'c1', name: 'search', args: { q: 'x' }, type: 'tool_call' }]);
    expect([tool.$type, tool.tool_call_id, tool.content]).toEqual(['langchain_core.messages.ToolMessage', 'c1', 'found']);
  });

  it("reads LangGraph's lc:2 records for Set, Map, RegExp, Error, Uint8Array and undefined as data", async () => {
    const text = await written({
      s: new Set([1, 2]),
      m: new Map([['k', 1]]),
      r: /a+/gi,
      e: new Error('boom'),
      b: Uint8Array.from([104, 105]),
      u: [undefined],
    });
    expect(decodeJsonText(text)).toEqual({
      s: { $type: 'Set', $value: [1, 2] },
      m: { $type: 'Map', $entries: [['k', 1]] },
      r: { $type: 'RegExp', source: 'a+', flags: 'gi' },
      e: { $type: 'Error', $value: 'boom' },
      b: { $type: 'bytes', length: 2, base64: 'aGk=' },
      u: [null],
    });
  });

  it('never resolves a secret: only the name of the secret is kept', () => {
    expect(decodeJsonText('{"key":{"lc":1,"type":"secret","id":["OPENAI_API_KEY"]}}')).toEqual({
      key: { $type: 'secret', name: 'OPENAI_API_KEY' },
    });
  });

  it("keeps Python's lc:2 constructor records (module, class, args, kwargs) as labelled data, never importing them", () => {
    const text = '{"lc":2,"type":"constructor","id":["os","system"],"method":null,"args":["rm -rf /"],"kwargs":{}}';
    expect(decodeJsonText(text)).toEqual({ $type: 'os.system', $args: ['rm -rf /'] });
  });

  it('leaves objects that only look a little like envelopes alone', () => {
    expect(decodeJsonText('{"lc":1,"type":"constructor","id":"not-a-list"}')).toEqual({ lc: 1, type: 'constructor', id: 'not-a-list' });
  });
});

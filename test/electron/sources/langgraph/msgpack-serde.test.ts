import { describe, expect, it } from 'vitest';
import { ExtData } from '@msgpack/msgpack';
import { decodeMsgpack } from '../../../../electron/sources/langgraph/msgpack-serde.js';
import {
  aiMessage,
  datetime,
  deltaSnapshot,
  humanMessage,
  interruptValue,
  keywords,
  numpy,
  pack,
  positional,
  pydanticV1,
  single,
  toolMessage,
} from '../../../support/python-msgpack.js';

const decode = (value: unknown) => decodeMsgpack(pack(value));

describe('decodeMsgpack: Python JsonPlusSerializer values into inert labelled data', () => {
  it('keeps plain msgpack as it is', () => {
    expect(decode({ a: 1, b: [true, null, 'x', 1.5], c: { d: -3 } })).toEqual({ a: 1, b: [true, null, 'x', 1.5], c: { d: -3 } });
  });

  it('labels a Pydantic v2 HumanMessage with its module and class and keeps every field of its model_dump', () => {
    expect(decode(humanMessage('hello', 'm1'))).toEqual({
      $type: 'langchain_core.messages.human.HumanMessage',
      content: 'hello',
      additional_kwargs: {},
      response_metadata: {},
      type: 'human',
      name: null,
      id: 'm1',
      example: false,
    });
  });

  it('keeps an AIMessage tool call and its usage field by field', () => {
    const v = decode(
      aiMessage('', 'a1', [{ name: 'search', args: { q: 'x' }, id: 'c1' }], { input_tokens: 12, output_tokens: 3 }),
    ) as Record<string, unknown>;
    expect(v.$type).toBe('langchain_core.messages.ai.AIMessage');
    expect(v.tool_calls).toEqual([{ name: 'search', args: { q: 'x' }, id: 'c1', type: 'tool_call' }]);
    expect(v.usage_metadata).toEqual({ input_tokens: 12, output_tokens: 3, total_tokens: 15 });
    const t = decode(toolMessage('42', 't1', 'c1', 'search')) as Record<string, unknown>;
    expect([t.$type, t.tool_call_id, t.name, t.content]).toEqual(['langchain_core.messages.tool.ToolMessage', 'c1', 'search', '42']);
  });

  it('turns the one-argument constructors into a labelled $value: UUID as its dashed form, Decimal, set, Enum', () => {
    expect(decode(single('uuid', 'UUID', '0123456789abcdef0123456789abcdef'))).toEqual({
      $type: 'uuid.UUID',
      $value: '01234567-89ab-cdef-0123-456789abcdef',
    });
    expect(decode(single('decimal', 'Decimal', '3.14'))).toEqual({ $type: 'decimal.Decimal', $value: '3.14' });
    expect(decode(single('builtins', 'set', [1, 2]))).toEqual({ $type: 'builtins.set', $value: [1, 2] });
    expect(decode(single('app.models', 'Color', 'red'))).toEqual({ $type: 'app.models.Color', $value: 'red' });
  });

  it('reads datetimes (a method call in Python) as their ISO text, and dates and timedeltas as their parts', () => {
    expect(decode(datetime('2024-05-04T06:32:42.235444+00:00'))).toEqual({
      $type: 'datetime.datetime',
      $value: '2024-05-04T06:32:42.235444+00:00',
    });
    expect(decode(positional('datetime', 'date', [2024, 5, 4]))).toEqual({ $type: 'datetime.date', $value: '2024-05-04' });
    expect(decode(positional('datetime', 'timedelta', [1, 30, 5]))).toEqual({
      $type: 'datetime.timedelta',
      days: 1,
      seconds: 30,
      microseconds: 5,
    });
  });

  it('keeps positional arguments in $args, and spells out Send and compiled patterns', () => {
    expect(decode(positional('pathlib', 'PosixPath', ['/', 'tmp', 'x']))).toEqual({ $type: 'pathlib.PosixPath', $args: ['/', 'tmp', 'x'] });
    expect(decode(positional('langgraph.types', 'Send', ['worker', { n: 1 }]))).toEqual({
      $type: 'langgraph.types.Send',
      node: 'worker',
      arg: { n: 1 },
    });
    expect(decode(positional('re', 'compile', ['a+b', 2]))).toEqual({ $type: 're.Pattern', pattern: 'a+b', flags: 2 });
  });

  it('reads dataclasses, namedtuples and Pydantic v1 models as their fields, and an Interrupt as value and id', () => {
    expect(decode(keywords('app.state', 'Ticket', { id: 7, tags: ['a'] }))).toEqual({ $type: 'app.state.Ticket', id: 7, tags: ['a'] });
    expect(decode(pydanticV1('app.v1', 'Old', { x: 1 }))).toEqual({ $type: 'app.v1.Old', x: 1 });
    expect(decode([interruptValue({ question: 'ok?' }, 'i-1')])).toEqual([
      { $type: 'langgraph.types.Interrupt', value: { question: 'ok?' }, id: 'i-1' },
    ]);
  });

  it('nests: a message inside a dataclass inside a list', () => {
    const v = decode([keywords('app', 'Box', { inner: humanMessage('hi', 'h') })]) as { inner: { $type: string; content: string } }[];
    expect(v[0].inner.$type).toBe('langchain_core.messages.human.HumanMessage');
    expect(v[0].inner.content).toBe('hi');
  });

  it('describes NumPy arrays and raw bytes without interpreting them, and unwraps delta snapshots', () => {
    const bytes = Uint8Array.from([1, 0, 0, 0, 2, 0, 0, 0]);
    expect(decode(numpy('<i4', [2], 'C', bytes))).toEqual({
      $type: 'numpy.ndarray',
      dtype: '<i4',
      shape: [2],
      order: 'C',
      data: { $type: 'bytes', length: 8, base64: Buffer.from(bytes).toString('base64') },
    });
    expect(decode(Uint8Array.from([104, 105]))).toEqual({ $type: 'bytes', length: 2, base64: 'aGk=' });
    expect(decode(deltaSnapshot(['a', 'b']))).toEqual(['a', 'b']);
  });

  it('keeps integers beyond 2^53 as text, and takes non-string map keys as strings', () => {
    expect(decode({ big: 2n ** 64n - 1n })).toEqual({ big: { $type: 'int', $value: '18446744073709551615' } });
    expect(decodeMsgpack(Uint8Array.from([0x81, 0x01, 0xa1, 0x78]))).toEqual({ 1: 'x' });
  });

  it('marks an extension code LangGraph does not define, and one whose payload is of the wrong shape, and goes on', () => {
    expect(decode({ a: new ExtData(42, Uint8Array.from([1, 2, 3])), b: 1 })).toEqual({
      a: { $type: 'msgpack.ext', code: 42, length: 3, unknown: true },
      b: 1,
    });
    const bad = decode({ a: new ExtData(5, pack('not a tuple')), b: 2 }) as Record<string, unknown>;
    expect(bad.b).toBe(2);
    expect(bad.a).toEqual({ $undecodable: expect.stringContaining('extension 5') });
  });

  it('refuses a map key __proto__ (the msgpack decoder does) for that value alone, and pollutes no prototype', () => {
    const v = decode({ evil: keywords('app', 'Evil', { ['__proto__']: { polluted: true } }), ok: 1 }) as Record<string, unknown>;
    expect(v.ok).toBe(1);
    expect(v.evil).toEqual({ $undecodable: expect.stringContaining('__proto__') });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

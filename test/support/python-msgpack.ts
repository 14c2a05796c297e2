/**
 * Bytes in the format of LangGraph's Python JsonPlusSerializer, built by
 * hand from its documented encoding (langgraph/checkpoint/serde/jsonplus.py,
 * `_msgpack_default`): each non-msgpack value is an extension whose payload
 * is the msgpack of `(module, name, data[, method])`. Python's `langgraph`
 * cannot be installed here, so these stand in for what it writes, value for
 * value.
 */
import { encode, ExtData } from '@msgpack/msgpack';

export const pack = (value: unknown): Uint8Array => encode(value, { useBigInt64: true });

const ext = (code: number, tuple: unknown[]) => new ExtData(code, pack(tuple));

/** Code 0: a constructor of one argument (UUID as hex, Decimal as text, set as a tuple, Enum as its value, ...). */
export const single = (module: string, name: string, arg: unknown) => ext(0, [module, name, arg]);
/** Code 1: a constructor of positional arguments (Path parts, date, timedelta, re.compile, Send, timezone). */
export const positional = (module: string, name: string, args: unknown[]) => ext(1, [module, name, args]);
/** Code 2: a constructor of keyword arguments (dataclasses, namedtuples, datetime.time, Item). */
export const keywords = (module: string, name: string, kwargs: Record<string, unknown>) => ext(2, [module, name, kwargs]);
/** Code 3: a method of one argument: `datetime.fromisoformat`. */
export const datetime = (iso: string) => ext(3, ['datetime', 'datetime', iso, 'fromisoformat']);
/** Code 4: a Pydantic v1 model, as `.dict()`. */
export const pydanticV1 = (module: string, name: string, fields: Record<string, unknown>) => ext(4, [module, name, fields]);
/** Code 5: a Pydantic v2 model, as `.model_dump()` (LangChain's messages are these). */
export const pydanticV2 = (module: string, name: string, fields: Record<string, unknown>) =>
  ext(5, [module, name, fields, 'model_validate_json']);
/** Code 6: a NumPy array. */
export const numpy = (dtype: string, shape: number[], order: 'C' | 'F', data: Uint8Array) => ext(6, [dtype, shape, order, data]);
/** Code 7: a delta channel's snapshot. */
export const deltaSnapshot = (value: unknown) => new ExtData(7, pack(value));

/** The model_dump of LangChain's messages, with the fields Pydantic writes for each. */
const base = (type: string, content: unknown, id: string, extra: Record<string, unknown> = {}) => ({
  content,
  additional_kwargs: {},
  response_metadata: {},
  type,
  name: null,
  id,
  ...extra,
});

export const humanMessage = (content: string, id: string) =>
  pydanticV2('langchain_core.messages.human', 'HumanMessage', base('human', content, id, { example: false }));

export const aiMessage = (
  content: unknown,
  id: string,
  toolCalls: { name: string; args: Record<string, unknown>; id: string }[] = [],
  usage?: { input_tokens: number; output_tokens: number },
) =>
  pydanticV2(
    'langchain_core.messages.ai',
    'AIMessage',
    base('ai', content, id, {
      example: false,
      tool_calls: toolCalls.map((c) => ({ ...c, type: 'tool_call' })),
      invalid_tool_calls: [],
      usage_metadata: usage ? { ...usage, total_tokens: usage.input_tokens + usage.output_tokens } : null,
    }),
  );

export const toolMessage = (content: string, id: string, toolCallId: string, name: string) =>
  pydanticV2(
    'langchain_core.messages.tool',
    'ToolMessage',
    base('tool', content, id, { name, tool_call_id: toolCallId, artifact: null, status: 'success' }),
  );

/** langgraph.types.Interrupt, a dataclass: code 2 with its fields. */
export const interruptValue = (value: unknown, id: string) => keywords('langgraph.types', 'Interrupt', { value, id });

/** A Python channel version: `"<32-digit counter>.<16-digit random>"`, as get_next_version writes it. */
export const pyVersion = (n: number) => `${String(n).padStart(32, '0')}.${'0.1234567890123'.padEnd(16, '4')}`;

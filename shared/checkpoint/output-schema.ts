/**
 * A small JSON Schema subset for step outputs.
 *
 * A human edit of a step's result is checked against the step's
 * `output_schema` twice: in the renderer as the user types, and by the host
 * before it writes a version. Both sides import this one module so they can
 * never disagree about what is valid. Supported keywords: type (string or
 * list), enum, const, properties, required, additionalProperties (boolean or
 * schema), items, minItems, maxItems, minLength, maxLength, pattern, minimum,
 * maximum, exclusiveMinimum, exclusiveMaximum, anyOf, oneOf, allOf, not, and
 * format "uri" (the one format asserted). Unknown keywords are ignored, as
 * JSON Schema itself prescribes.
 */

type Schema = Record<string, unknown>;

const MAX_ERRORS = 50;

/**
 * Validate `value` against a JSON Schema subset.
 *
 * Returns readable errors (`$.items[2].name: expected string, got number`),
 * an empty list when the value is valid. A missing or non-object schema
 * accepts everything, since a step without `output_schema` takes any value.
 */
export function validateAgainstSchema(schema: unknown, value: unknown): string[] {
  const errors: string[] = [];
  if (isObject(schema)) check(schema, value, '$', errors);
  return errors.slice(0, MAX_ERRORS);
}

function check(schema: Schema, value: unknown, path: string, errors: string[]): void {
  if (errors.length >= MAX_ERRORS) return;

  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type.map(String) : [String(schema.type)];
    if (!types.some((t) => matchesType(t, value))) {
      errors.push(`${path}: expected ${types.join(' or ')}, got ${typeOf(value)}`);
      // Every other keyword would only repeat the type mismatch in other words.
      return;
    }
  }

  if (Array.isArray(schema.enum) && !schema.enum.some((e) => deepEqual(e, value))) {
    errors.push(`${path}: must be one of ${schema.enum.map((e) => JSON.stringify(e)).join(', ')}`);
  }
  if ('const' in schema && !deepEqual(schema.const, value)) {
    errors.push(`${path}: must be ${JSON.stringify(schema.const)}`);
  }

  if (typeof value === 'string') checkString(schema, value, path, errors);
  if (typeof value === 'number') checkNumber(schema, value, path, errors);
  if (Array.isArray(value)) checkArray(schema, value, path, errors);
  if (isObject(value)) checkObject(schema, value, path, errors);

  checkCombinators(schema, value, path, errors);
}

function checkString(schema: Schema, value: string, path: string, errors: string[]): void {
  // Length counts code points, as the JSON Schema spec does, so an emoji is one character.
  const length = [...value].length;
  if (typeof schema.minLength === 'number' && length < schema.minLength) {
    errors.push(`${path}: must be at least ${schema.minLength} character${schema.minLength === 1 ? '' : 's'} long`);
  }
  if (typeof schema.maxLength === 'number' && length > schema.maxLength) {
    errors.push(`${path}: must be at most ${schema.maxLength} characters long`);
  }
  if (typeof schema.pattern === 'string') {
    let re: RegExp | null = null;
    try {
      re = new RegExp(schema.pattern, 'u');
    } catch {
      errors.push(`${path}: the schema's pattern ${JSON.stringify(schema.pattern)} is not a valid regular expression`);
    }
    if (re && !re.test(value)) errors.push(`${path}: must match the pattern ${schema.pattern}`);
  }
  // The one format asserted: an agent's URL option (zod's url(), which is what `new URL` parses) is said wrong as it
  // is typed, not by the host after Start. Other formats stay annotations, as JSON Schema leaves them.
  if (schema.format === 'uri' && !parsesAsUrl(value)) errors.push(`${path}: must be a URL (such as https://example.com/path)`);
}

function parsesAsUrl(text: string): boolean {
  try {
    new URL(text);
    return true;
  } catch {
    return false;
  }
}

function checkNumber(schema: Schema, value: number, path: string, errors: string[]): void {
  if (typeof schema.minimum === 'number' && value < schema.minimum) errors.push(`${path}: must be ≥ ${schema.minimum}`);
  if (typeof schema.maximum === 'number' && value > schema.maximum) errors.push(`${path}: must be ≤ ${schema.maximum}`);
  if (typeof schema.exclusiveMinimum === 'number' && value <= schema.exclusiveMinimum) {
    errors.push(`${path}: must be > ${schema.exclusiveMinimum}`);
  }
  if (typeof schema.exclusiveMaximum === 'number' && value >= schema.exclusiveMaximum) {
    errors.push(`${path}: must be < ${schema.exclusiveMaximum}`);
  }
}

function checkArray(schema: Schema, value: unknown[], path: string, errors: string[]): void {
  if (typeof schema.minItems === 'number' && value.length < schema.minItems) {
    errors.push(`${path}: must have at least ${schema.minItems} item${schema.minItems === 1 ? '' : 's'}`);
  }
  if (typeof schema.maxItems === 'number' && value.length > schema.maxItems) {
    errors.push(`${path}: must have at most ${schema.maxItems} items`);
  }
  if (isObject(schema.items)) {
    const items = schema.items;
    value.forEach((item, i) => check(items, item, `${path}[${i}]`, errors));
  }
}

function checkObject(schema: Schema, value: Record<string, unknown>, path: string, errors: string[]): void {
  const properties = isObject(schema.properties) ? schema.properties : {};
  if (Array.isArray(schema.required)) {
    for (const key of schema.required) {
      if (typeof key === 'string' && !(key in value)) errors.push(`${path}: missing required property "${key}"`);
    }
  }
  for (const [key, child] of Object.entries(value)) {
    const childPath = /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
    const propSchema = properties[key];
    if (isObject(propSchema)) {
      check(propSchema, child, childPath, errors);
    } else if (schema.additionalProperties === false) {
      errors.push(`${path}: unexpected property "${key}"`);
    } else if (isObject(schema.additionalProperties)) {
      check(schema.additionalProperties, child, childPath, errors);
    }
  }
}

function checkCombinators(schema: Schema, value: unknown, path: string, errors: string[]): void {
  const branchErrors = (s: unknown): string[] => {
    const found: string[] = [];
    if (isObject(s)) check(s, value, path, found);
    return found;
  };
  if (Array.isArray(schema.allOf)) {
    for (const sub of schema.allOf) if (isObject(sub)) check(sub, value, path, errors);
  }
  if (Array.isArray(schema.anyOf) && schema.anyOf.length > 0) {
    const results = schema.anyOf.map(branchErrors);
    if (!results.some((r) => r.length === 0)) {
      errors.push(`${path}: does not match any allowed shape (${results.map((r) => r[0]).join(' | ')})`);
    }
  }
  if (Array.isArray(schema.oneOf) && schema.oneOf.length > 0) {
    const matching = schema.oneOf.filter((s) => branchErrors(s).length === 0).length;
    if (matching !== 1) errors.push(`${path}: must match exactly one allowed shape, matches ${matching}`);
  }
  if (isObject(schema.not) && branchErrors(schema.not).length === 0) {
    errors.push(`${path}: must not match the excluded shape`);
  }
}

function matchesType(type: string, value: unknown): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'null':
      return value === null;
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isObject(value);
    default:
      // An unknown type name cannot be satisfied; saying so beats silently accepting.
      return false;
  }
}

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number' && Number.isInteger(value)) return 'integer';
  return typeof value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  const ka = Object.keys(a as object);
  const kb = Object.keys(b as object);
  return ka.length === kb.length && ka.every((k) => deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

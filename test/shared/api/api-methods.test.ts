import { describe, expect, it } from 'vitest';
import { apiMethods } from '../../../shared/api/api-methods.js';
import { apiInputs } from '../../../shared/api/contract.js';

describe('the API method names', () => {
  it('name every method the contract has a schema for, once each, in the contract’s order', () => {
    // The page builds its client from these alone: a method missing here would be missing from the page.
    expect([...apiMethods]).toEqual(Object.keys(apiInputs));
  });
});

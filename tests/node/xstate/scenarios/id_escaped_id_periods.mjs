// XState's id.test.ts, "should work with IDs that have escaped periods" (issue 22's machine 1):
// '#foo\\.bar' is the id 'foo.bar' (stateWithDot); '#foo.bar' is the id 'foo', then its child
// 'bar', although a state has the id 'foo.bar'. Its twin id_escaped_id_periods_unescaped sends
// 'unescaped' first.
import { createMachine } from 'xstate';

export const machine = createMachine({
  initial: 'start',
  states: {
    start: { on: { escaped: '#foo\\.bar', unescaped: '#foo.bar' } },
    stateWithDot: { id: 'foo.bar' },
    foo: { id: 'foo', initial: 'bar', states: { bar: {} } },
  },
});

export const events = [{ type: 'escaped' }, { type: 'unescaped' }];
export const can = [{ type: 'escaped' }, { type: 'unescaped' }];
export const matches = ['stateWithDot', { foo: 'bar' }];

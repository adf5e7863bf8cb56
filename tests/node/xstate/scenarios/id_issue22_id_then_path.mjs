// Issue 22's first machine: with x: {id: 'foo.bar'} and foo: {id: 'foo', ...}, the target
// '#foo.bar' is the id 'foo' then its child 'bar' ({foo: 'bar'}), never the state x.
import { createMachine } from 'xstate';

export const machine = createMachine({
  id: 'm',
  initial: 'start',
  states: {
    start: { on: { GO: '#foo.bar', X: '#foo\\.bar' } },
    x: { id: 'foo.bar', on: { BACK: 'start' } },
    foo: { id: 'foo', initial: 'a', states: { a: {}, bar: {} }, on: { BACK: 'start' } },
  },
});

export const events = [{ type: 'GO' }, { type: 'BACK' }, { type: 'X' }, { type: 'BACK' }, { type: 'GO' }];
export const can = [{ type: 'GO' }, { type: 'X' }];
export const matches = [{ foo: 'bar' }, 'x'];

// The machine of id_escaped_key_periods; from the start, 'unescaped' (target 'foo.bar') goes to
// the child bar of foo: {foo: 'bar'}.
export { machine, can, matches } from './id_escaped_key_periods.mjs';

export const events = [{ type: 'unescaped' }, { type: 'escaped' }];

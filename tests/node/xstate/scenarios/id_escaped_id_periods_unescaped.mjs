// The machine of id_escaped_id_periods; from the start, 'unescaped' ('#foo.bar') goes to the child
// bar of the state with id 'foo': {foo: 'bar'}, not to the state whose id is 'foo.bar'.
export { machine, can, matches } from './id_escaped_id_periods.mjs';

export const events = [{ type: 'unescaped' }, { type: 'escaped' }];

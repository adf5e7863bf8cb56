// Values whose canonical JSON is easy to get wrong: integral floats, 0.1+0.2, exponents, -0,
// large integers, unicode (non-BMP) strings and keys JCS sorts by UTF-16 code units.
import { setup, assign } from 'xstate';

export const machine = setup({}).createMachine({
  id: 'nums',
  context: {
    third: 1 / 3,
    sum: 0.1 + 0.2,
    big: 1e21,
    small: 5e-7,
    maxSafe: 9007199254740991,
    negZero: -0,
    text: 'café ☕ 😀 \u2028 "quoted" \\ tab\t',
    keys: { z: 1, é: 2, '\ufb01': 3, '😀': 4, A: 5, '': 6 },
  },
  initial: 'a',
  states: {
    a: {
      on: {
        CALC: {
          actions: assign({
            half: ({ event }) => event.n / 2,
            whole: ({ event }) => (event.n * 3) / 3,
            scaled: ({ context }) => context.sum * 1e10,
            tiny: ({ context }) => context.small / 1e10,
          }),
        },
        ECHO: { actions: assign({ echo: ({ event }) => event.payload }) },
      },
    },
  },
});

export const events = [
  { type: 'CALC', n: 7 },
  { type: 'CALC', n: 6 },
  { type: 'ECHO', payload: { 'ß': [1.5, -2, 1e-7, 123456789012], '\u00e9t\u00e9': 'été', '\ud83d\ude00x': null } },
];
export const can = [{ type: 'CALC', n: 1 }];
export const matches = ['a'];

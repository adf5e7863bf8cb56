// An agent-like loop: idle -> thinking (invoke) -> deciding (guards on context) -> acting
// (invoke) -> thinking ... -> idle, with error and cancel paths, stale completions, a history
// list in context capped at 20, a final `failed` state with machine output, events after done.
import { setup, assign, fromPromise } from 'xstate';

const remember = (entry) =>
  assign({ history: ({ context, event }) => [...context.history, entry(context, event)].slice(-20) });

export const machine = setup({
  actors: {
    think: fromPromise(async ({ input }) => ({ final: true, text: input.question })),
    act: fromPromise(async ({ input }) => ({ observation: input.name })),
  },
  guards: {
    isFinal: ({ context }) => context.lastThought?.final === true,
    wantsTool: ({ context }) => typeof context.lastThought?.tool === 'object' && context.lastThought.tool !== null,
    tooManyErrors: ({ context }, params) => context.errors >= params.max,
  },
  actions: { notifyUser: () => {} },
}).createMachine({
  id: 'agent',
  context: ({ input }) => ({
    question: null,
    turn: 0,
    errors: 0,
    answers: 0,
    lastThought: null,
    history: [],
    model: input.model,
  }),
  initial: 'idle',
  states: {
    idle: {
      on: {
        ASK: {
          target: 'thinking',
          actions: [assign({ question: ({ event }) => event.question, turn: 0 }), remember((c, e) => `ask:${e.question}`)],
        },
      },
    },
    thinking: {
      tags: ['busy'],
      invoke: {
        id: 'llm',
        src: 'think',
        input: ({ context }) => ({ question: context.question, turn: context.turn, model: context.model }),
        onDone: { target: 'deciding', actions: [assign({ lastThought: ({ event }) => event.output }), remember(() => 'thought')] },
        onError: [
          { guard: { type: 'tooManyErrors', params: { max: 5 } }, target: 'failed', actions: remember(() => 'gave up') },
          { target: 'idle', actions: [assign({ errors: ({ context }) => context.errors + 1 }), remember((c, e) => `llm error:${e.error}`)] },
        ],
      },
      on: { CANCEL: { target: 'idle', actions: remember(() => 'cancel thinking') } },
    },
    deciding: {
      always: [
        { guard: 'isFinal', target: 'idle', actions: [assign({ answers: ({ context }) => context.answers + 1 }), 'notifyUser', remember(() => 'answer')] },
        { guard: 'wantsTool', target: 'acting' },
        { target: 'thinking', actions: [assign({ turn: ({ context }) => context.turn + 1 }), remember(() => 'rethink')] },
      ],
    },
    acting: {
      tags: ['busy', 'tool'],
      invoke: {
        id: 'tool',
        src: 'act',
        input: ({ context }) => context.lastThought.tool,
        onDone: { target: 'thinking', actions: [assign({ turn: ({ context }) => context.turn + 1 }), remember((c, e) => `obs:${e.output.observation}`)] },
        onError: { target: 'thinking', actions: [assign({ errors: ({ context }) => context.errors + 1 }), remember(() => 'tool error')] },
      },
      on: { CANCEL: { target: 'idle', actions: remember(() => 'cancel acting') } },
    },
    failed: { type: 'final' },
  },
  output: ({ context }) => ({ answers: context.answers, errors: context.errors, last: context.history.at(-1) }),
});

export const input = { model: 'scripted-1' };

const llmDone = (output) => ({ type: 'xstate.done.actor.llm', output });
const toolDone = (output) => ({ type: 'xstate.done.actor.tool', output });
const rounds = [];
for (let i = 0; i < 16; i += 1) {
  rounds.push({ type: 'ASK', question: `q${i}` });
  switch (i % 4) {
    case 0:
      rounds.push(llmDone({ tool: { name: `search${i}`, args: { k: i } } }));
      rounds.push(toolDone({ observation: `found${i}` }));
      rounds.push(llmDone({ final: false }));
      rounds.push(llmDone({ final: true, text: `a${i}` }));
      break;
    case 1:
      rounds.push({ type: 'xstate.error.actor.llm', error: `rate limit ${i}` });
      rounds.push(llmDone({ final: true, text: 'stale after error' }));
      break;
    case 2:
      rounds.push({ type: 'CANCEL' });
      rounds.push(llmDone({ final: true, text: 'stale after cancel' }));
      break;
    default:
      rounds.push(llmDone({ tool: { name: 'calc', args: { x: i } } }));
      rounds.push({ type: 'xstate.error.actor.tool', error: 'tool broke' });
      rounds.push(llmDone({ tool: { name: 'calc2', args: {} } }));
      rounds.push({ type: 'CANCEL' });
      rounds.push(toolDone({ observation: 'stale tool' }));
  }
}
rounds.push({ type: 'ASK', question: 'after done' });
export const events = rounds;
export const can = [{ type: 'ASK', question: 'probe' }, { type: 'CANCEL' }];
export const matches = ['idle', 'thinking', 'acting', 'failed'];

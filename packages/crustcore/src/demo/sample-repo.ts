/**
 * The demo's sample project: a tiny Node library whose tests fail because of
 * two bugs. Attempt 1 of the scripted backend fixes one, verification catches
 * the other, and attempt 2 uses the diagnosis to fix it.
 */
export const SAMPLE_FILES: Readonly<Record<string, string>> = {
  'package.json': `${JSON.stringify(
    {
      name: 'crustcore-demo-calculator',
      version: '1.0.0',
      private: true,
      type: 'module',
      scripts: { test: 'node --test' },
    },
    null,
    2,
  )}\n`,
  'README.md': '# calculator\n\nA tiny library with a failing test suite, made by `crustcore demo`.\n',
  'src/calc.js': [
    '// Arithmetic helpers.',
    'export function add(a, b) {',
    '  return a - b;',
    '}',
    '',
    'export function multiply(a, b) {',
    '  return a + b;',
    '}',
    '',
  ].join('\n'),
  'test/calc.test.js': [
    "import assert from 'node:assert/strict';",
    "import { test } from 'node:test';",
    "import { add, multiply } from '../src/calc.js';",
    '',
    "test('adds two numbers', () => {",
    '  assert.equal(add(2, 3), 5);',
    '});',
    '',
    "test('multiplies two numbers', () => {",
    '  assert.equal(multiply(4, 5), 20);',
    '});',
    '',
  ].join('\n'),
};

/** What each scripted attempt does to `src/calc.js`: find → replace. */
export const SCRIPTED_EDITS: readonly { readonly summary: string; readonly find: string; readonly replace: string }[] =
  [
    { summary: 'fix add(): it subtracted instead of adding', find: '  return a - b;', replace: '  return a + b;' },
    {
      summary: 'fix multiply(): it added instead of multiplying',
      find: 'export function multiply(a, b) {\n  return a + b;',
      replace: 'export function multiply(a, b) {\n  return a * b;',
    },
  ];

/**
 * The pre-router's real caller: RouterProvider picks the role for a request
 * without a role hint from the class of its last input (registry
 * `inputRoles`), and keeps the default role on a miss.
 */
import { describe, expect, it } from 'vitest';
import { decodeRegistry, RouterProvider } from '../src/index.js';
import { fakeProvider, ok } from './fake-provider.js';
import { drain, request, textOf } from './harnesses.js';

const TRACE = `Traceback (most recent call last):
  File "app.py", line 3, in <module>
    main()
ValueError: bad`;

describe('RouterProvider with inputRoles', () => {
  const strong = fakeProvider('strong', ok('strong'));
  const cheap = fakeProvider('cheap', ok('cheap'));
  const python = fakeProvider('python', ok('python'));
  const router = new RouterProvider({
    defaultRole: 'implement',
    routes: {
      implement: [{ provider: strong, model: 'big' }],
      triage: [{ provider: cheap, model: 'small' }],
      py: [{ provider: python, model: 'py' }],
    },
    inputRoles: { 'stack-trace:python': 'py', 'stack-trace': 'triage', sql: 'triage', json: 'absent-role' },
  });
  const asking = (content: string, extra = {}) => request({ messages: [{ role: 'user', content }], ...extra });

  it('routes a classified input to its role, most specific key first', async () => {
    expect(router.roleFor(asking(TRACE))).toBe('py');
    expect(router.roleFor(asking('TypeError: x\n    at run (/srv/app.js:1:2)'))).toBe('triage');
    expect(textOf(await drain(router.stream(asking('SELECT id FROM users;'))))).toBe('cheap');
    expect(cheap.requests.at(-1)!.model).toBe('small');
  });

  it('a miss, a hint or a role the router lacks keeps the usual choice (CONTROL: same input, no inputRoles)', () => {
    expect(router.roleFor(asking('Please fix the failing test.'))).toBe('implement');
    expect(router.roleFor(asking(TRACE, { route: { role: 'implement' } }))).toBe('implement');
    expect(router.roleFor(asking('{"a": 1}'))).toBe('implement');
    const plain = new RouterProvider({
      defaultRole: 'implement',
      routes: { implement: [{ provider: strong, model: 'big' }] },
    });
    expect(plain.roleFor(asking(TRACE))).toBe('implement');
  });

  it('the registry checks inputRoles keys and roles', () => {
    const file = (inputRoles: Record<string, string>) => ({
      version: 1,
      defaultRole: 'implement',
      providers: [{ id: 'p', kind: 'ollama', models: [{ id: 'm', roles: ['implement', 'triage'] }] }],
      inputRoles,
    });
    const good = decodeRegistry(file({ 'stack-trace:go': 'triage', sql: 'triage' }));
    expect(good._tag === 'Right' && good.right.inputRoles).toEqual({ 'stack-trace:go': 'triage', sql: 'triage' });
    const bad = decodeRegistry(file({ 'stack trace': 'triage', sql: 'nobody' }));
    expect(bad._tag === 'Left' && bad.left.problems).toEqual([
      'inputRoles: "stack trace" is not a pre-router class (see docs/model-routing.md)',
      'inputRoles.sql: "nobody" is not the role of any model',
    ]);
  });
});

/**
 * The lazy command table answers help from specs and loads a command's module
 * only to run it; these tests pin that each row loads the command its spec
 * describes (one source for its help), and that crustcore-nano's eager twin of
 * the core table lists the same commands in the same order.
 */
import { describe, expect, it } from 'vitest';
import type { LazyCommand } from '../src/cli/command.js';
import { CORE_COMMANDS } from '../src/commands/core-table.js';
import { CORE_COMMANDS as NANO_CORE_COMMANDS } from '../src/commands/core-table-eager.js';
import { PACK_COMMANDS } from '../src/commands/pack-commands.js';
import { PACK_SPECS } from '../src/commands/pack-specs.js';
import { CORE_SPECS } from '../src/commands/specs.js';
import { commandTable } from '../src/commands/table.js';

const specOf = (c: { name: string; summary: string; usage: string }) => ({
  name: c.name,
  summary: c.summary,
  usage: c.usage,
});

describe('command table', () => {
  it('every row loads the command its spec describes, with exactly that help', async () => {
    const table = await commandTable();
    expect(table.map((c) => c.name)).toEqual([...CORE_COMMANDS, ...PACK_COMMANDS].map((c) => c.name));
    for (const row of table) {
      const command = await row.load();
      expect(specOf(command), row.name).toEqual(specOf(row));
      expect(typeof command.run).toBe('function');
    }
  });

  it('names are unique, and every usage line starts with its own command', async () => {
    const table = await commandTable();
    expect(new Set(table.map((c) => c.name)).size).toBe(table.length);
    for (const row of table) expect(row.usage.startsWith(`crustcore ${row.name}`), row.name).toBe(true);
  });

  it("crustcore-nano's eager core table is the same commands, in the same order, as the lazy one", async () => {
    const load = async (rows: readonly LazyCommand[]) => Promise.all(rows.map((r) => r.load()));
    expect(NANO_CORE_COMMANDS.map(specOf)).toEqual(CORE_COMMANDS.map(specOf));
    // The very same command objects: both tables reach the same modules.
    const [lazy, eager] = await Promise.all([load(CORE_COMMANDS), load(NANO_CORE_COMMANDS)]);
    expect(eager).toHaveLength(lazy.length);
    for (const [i, command] of eager.entries()) expect(command).toBe(lazy[i]);
  });

  it('the spec lists the bin answers help from are the table, in the same order', () => {
    expect(CORE_SPECS.map(specOf)).toEqual(CORE_COMMANDS.map(specOf));
    expect(PACK_SPECS.map(specOf)).toEqual(PACK_COMMANDS.map(specOf));
  });
});

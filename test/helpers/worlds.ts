/** World packages for tests that need other policies than the shipped worlds have. */
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** Copies the shipped worlds into a temp folder, edits world.json files, adds copies of worlds. */
export function worldsCopy(
  edits: Record<string, (world: Record<string, any>) => void>,
  copies: Record<string, { from: string; edit: (world: Record<string, any>) => void }> = {},
): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'mud-worlds-'));
  cpSync(path.resolve('worlds'), dir, { recursive: true });
  for (const [id, { from }] of Object.entries(copies)) cpSync(path.join(dir, from), path.join(dir, id), { recursive: true });
  const all = { ...edits, ...Object.fromEntries(Object.entries(copies).map(([id, c]) => [id, c.edit])) };
  for (const [id, edit] of Object.entries(all)) {
    const file = path.join(dir, id, 'world.json');
    const world = JSON.parse(readFileSync(file, 'utf8')) as Record<string, any>;
    edit(world);
    writeFileSync(file, JSON.stringify(world, null, 2));
  }
  return dir;
}

/** Adds NPCs standing in Heron Yard's wash-house to a copy's Emberwick, each with the script `source` (written as scripts/<file>). */
export function withScriptedNpcs(worlds: string, npcs: Record<string, string>, file: string, source: string): void {
  const zoneFile = path.join(worlds, 'emberwick', 'zones', 'heron_yard.json');
  const zone = JSON.parse(readFileSync(zoneFile, 'utf8')) as { npcs: Record<string, unknown> };
  for (const [id, name] of Object.entries(npcs)) zone.npcs[id] = { id, name, description: 'It keeps to its script.', room: 'wash_house', script: `scripts/${file}` };
  writeFileSync(zoneFile, JSON.stringify(zone));
  writeFileSync(path.join(worlds, 'emberwick', 'scripts', file), source);
}

/**
 * The layers, read from the imports of the tree: the doors (src/http, src/telnet) over the
 * services (src/services), over the repositories (src/db) and integrations (src/integrations),
 * with src/shared below them all; the play client (web/) on the contract's generated types and
 * src/shared alone. Arrows point down only, and no two folders import each other, directly or
 * round a circle.
 */
import { describe, it } from 'mocha';
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve('.');

function tsFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name)));
}

/** Every module a file imports or re-exports (static and dynamic), as paths from the repository root. */
function importsOf(file: string): string[] {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  const specifiers = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)['"]([^'"]+)['"]/g)].map((m) => m[1]!);
  return specifiers.filter((s) => s.startsWith('.')).map((s) => path.relative(ROOT, path.resolve(ROOT, path.dirname(file), s)));
}

/** `[importing file, imported module]` for every import from the `from` folders into `to`. */
function arrows(from: string[], to: string): Array<[string, string]> {
  return from.flatMap((dir) => tsFiles(dir).flatMap((file) => importsOf(file).filter((target) => target.startsWith(`${to}/`)).map((target): [string, string] => [file, target])));
}

/** The folders of `root` that import each other round a circle (each circle once, as its folders). */
function folderCircles(root: string): string[][] {
  const edges = new Map<string, Set<string>>();
  for (const file of tsFiles(root)) {
    for (const target of importsOf(file)) {
      const [from, to] = [path.dirname(file), path.dirname(target)];
      if (from !== to && to.startsWith(`${root}/`)) (edges.get(from) ?? edges.set(from, new Set()).get(from)!).add(to);
    }
  }
  // Tarjan's strongly connected components: every component of more than one folder is a circle.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const circles: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    for (const next of edges.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (stack.includes(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do component.push((member = stack.pop()!));
      while (member !== node);
      if (component.length > 1) circles.push(component.sort());
    }
  };
  for (const node of edges.keys()) if (!index.has(node)) visit(node);
  return circles;
}

describe('layering', () => {
  it('finds imports at all (the scan is not vacuous)', () => {
    expect(arrows(['src/services'], 'src/db').length).to.be.greaterThan(10);
    expect(arrows(['src/telnet'], 'src/services').length).to.be.greaterThan(3);
  });

  it('nothing below the doors imports a door: services, db, integrations and shared know no HTTP and no telnet', () => {
    for (const door of ['src/http', 'src/telnet']) expect(arrows(['src/services', 'src/db', 'src/integrations', 'src/shared'], door), door).to.deep.equal([]);
  });

  it('the doors stand side by side: telnet imports nothing of HTTP, nor HTTP of telnet', () => {
    expect(arrows(['src/telnet'], 'src/http')).to.deep.equal([]);
    expect(arrows(['src/http'], 'src/telnet')).to.deep.equal([]);
  });

  it('the doors reach the repositories only through the services (they may name the row types)', () => {
    const values = ['src/http', 'src/telnet'].flatMap((dir) =>
      tsFiles(dir).flatMap((file) =>
        [...readFileSync(path.join(ROOT, file), 'utf8').matchAll(/^import (?!type )[^;]*?from '([^']+)'/gms)]
          .map((m) => path.relative(ROOT, path.resolve(ROOT, path.dirname(file), m[1]!)))
          .filter((target) => target.startsWith('src/db/repositories/'))
          .map((target) => [file, target]),
      ),
    );
    expect(values).to.deep.equal([]);
  });

  it('integrations import nothing from services: they raise their own errors, which services translate', () => {
    expect(arrows(['src/integrations'], 'src/services')).to.deep.equal([]);
  });

  it('nothing under db imports from services: what both layers need lives below both (src/shared)', () => {
    expect(arrows(['src/db'], 'src/services')).to.deep.equal([]);
  });

  it('src/shared imports nothing from the layers above it', () => {
    for (const layer of ['src/http', 'src/telnet', 'src/services', 'src/db', 'src/integrations']) expect(arrows(['src/shared'], layer), layer).to.deep.equal([]);
  });

  it('the play client uses the contract and src/shared only', () => {
    for (const layer of ['src/http', 'src/telnet', 'src/services', 'src/db', 'src/integrations']) expect(arrows(['web'], layer), layer).to.deep.equal([]);
    expect(arrows(['web'], 'src/shared').length).to.be.greaterThan(0);
  });

  it('migrations import no app code: each carries its own copy of what it needs, so it never changes with today\'s code', () => {
    const migrations = tsFiles('src/db/migrations').filter((file) => path.basename(file) !== 'index.ts');
    expect(migrations.length).to.be.greaterThan(5);
    expect(migrations.flatMap((file) => importsOf(file).map((target) => [file, target]))).to.deep.equal([]);
  });

  it('no folders of src import each other, directly or round a circle', () => {
    expect(folderCircles('src')).to.deep.equal([]);
  });
});

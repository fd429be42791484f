import { describe, it } from 'mocha';
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { SETTINGS } from '../../src/config/config.ts';

describe('README configuration table', () => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

  it('has a row for every configuration key with its variable and default', () => {
    for (const s of SETTINGS) {
      const row = readme.split('\n').find((line) => line.startsWith(`| \`[${s.section}] ${s.key}\` |`));
      expect(row, `[${s.section}] ${s.key}`).to.be.a('string');
      expect(row).to.contain(`\`${s.env}\``);
      expect(row).to.contain(`\`${s.default || '(empty)'}\``);
    }
  });
});

/** Assertions on the contract validator's answers. */
import { expect } from 'chai';
import type { HttpResponse } from './test-server.ts';

/** A 400 from the contract check that names `path` (e.g. `/body/role`) among its errors. */
export function expectContractError(res: HttpResponse, path: string): void {
  expect(res.status, res.text).to.equal(400);
  expect(res.body.detail, res.text).to.match(/^Invalid request: /);
  expect(res.body.errors.map((e: { path: string }) => e.path), res.text).to.include(path);
}

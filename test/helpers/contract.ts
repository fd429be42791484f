/**
 * The contract (openapi.yaml) as tests walk it: its operations by operationId, their example
 * requests, their effective security, and assertions on the contract validator's answers.
 */
import { expect } from 'chai';
import type { HttpResponse } from './test-server.ts';
import { loadContract } from '../../src/http/support/openapi.ts';

/** A 400 from the contract check that names `path` (e.g. `/body/role`) among its errors. */
export function expectContractError(res: HttpResponse, path: string): void {
  expect(res.status, res.text).to.equal(400);
  expect(res.body.detail, res.text).to.match(/^Invalid request: /);
  expect(res.body.errors.map((e: { path: string }) => e.path), res.text).to.include(path);
}

export interface ContractParameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  example?: unknown;
  $ref?: string;
}

export interface ContractMediaType {
  example?: unknown;
  examples?: unknown;
}

/** One entry of a `security` list: scheme name → scopes; `{}` makes authentication optional. */
export type SecurityRequirement = Record<string, string[]>;

export interface ContractOperation {
  operationId: string;
  parameters?: ContractParameter[];
  requestBody?: { content: { 'application/json': ContractMediaType } };
  responses: Record<string, { $ref?: string; content?: Record<string, ContractMediaType> }>;
  security?: SecurityRequirement[];
}

export interface ContractDocument {
  paths: Record<string, Record<string, ContractOperation>>;
  components: {
    parameters: Record<string, ContractParameter>;
    responses: Record<string, { content?: Record<string, ContractMediaType> }>;
  };
  security?: SecurityRequirement[];
}

export interface ContractEntry {
  method: string;
  path: string;
  op: ContractOperation;
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

let document: ContractDocument | undefined;

/** openapi.yaml, parsed once per test process. */
export function contractDocument(): ContractDocument {
  document ??= loadContract().document as unknown as ContractDocument;
  return document;
}

/** Every operation of the contract by operationId, in the order the document lists them. */
export function contractOperations(): Map<string, ContractEntry> {
  const found = new Map<string, ContractEntry>();
  for (const [path, item] of Object.entries(contractDocument().paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (METHODS.has(method)) found.set(op.operationId, { method: method.toUpperCase(), path, op });
    }
  }
  return found;
}

export function resolveParameter(param: ContractParameter): ContractParameter {
  return param.$ref ? contractDocument().components.parameters[param.$ref.split('/').pop()!]! : param;
}

/** The operation's own `security`, else the document's: `[]` means public. */
export function effectiveSecurity(op: ContractOperation): SecurityRequirement[] {
  return op.security ?? contractDocument().security ?? [];
}

/** The success statuses the operation documents (its 2xx responses). */
export function successStatuses(op: ContractOperation): number[] {
  return Object.keys(op.responses).filter((code) => /^2\d\d$/.test(code)).map(Number);
}

/** Whether the operation takes the session in its path (`/status/{session_id}`). */
export function takesSessionInPath(op: ContractOperation): boolean {
  return (op.parameters ?? []).map(resolveParameter).some((p) => p.in === 'path' && p.name === 'session_id');
}

export interface ExampleRequest {
  method: string;
  url: string;
  body: unknown;
  headers: Record<string, string>;
}

/**
 * The request the contract's examples describe: example path and query parameters and body,
 * the session as `Authorization: Bearer` (and in the path where the path takes it; a query
 * `session_id` is left out). `pathSession` puts another id in the path, e.g. an unknown one
 * for a request without a session.
 */
export function exampleRequest(entry: ContractEntry, session: string | undefined, pathSession: string | undefined = session): ExampleRequest {
  const { method, path, op } = entry;
  let url = path;
  const query = new URLSearchParams();
  for (const param of (op.parameters ?? []).map(resolveParameter)) {
    const value = param.name === 'session_id' ? pathSession : param.example;
    if (param.in === 'path') url = url.replace(`{${param.name}}`, encodeURIComponent(String(value)));
    else if (param.in === 'query' && param.name !== 'session_id' && value !== undefined) query.set(param.name, String(value));
  }
  if (query.size > 0) url += `?${query}`;
  const body = op.requestBody?.content['application/json'].example;
  const headers: Record<string, string> = session ? { Authorization: `Bearer ${session}` } : {};
  return { method, url, body, headers };
}

/** Whose session sends an operation; everything else is sent by the superuser. */
export type Actor = 'public' | 'superuser' | 'registered';

/**
 * The order a client would follow, so that each example finds what earlier ones created (the
 * contract examples test sends them so on a fresh install, the denial matrix per role).
 */
export const EXAMPLE_FLOW: ReadonlyArray<[string, Actor?]> = [
  ['getServiceInfo', 'public'],
  ['getHealth', 'public'],
  ['register', 'public'],
  ['login', 'public'],
  // The superuser's first character is character 1, which the examples select and inspect.
  ['createCharacter'],
  ['listCharacters'],
  ['listWorlds'],
  ['selectCharacter'],
  ['runCommand'],
  ['listCommands'],
  ['getStatus'],
  ['getRoomChat'],
  ['pingSession'],
  // Back to the character list, then the character again for the operations after.
  ['deselectCharacter'],
  ['selectCharacter'],
  ['registerGuest', 'public'],
  ['loginDirect', 'public'],
  ['changePassword', 'registered'],
  ['logout', 'registered'],
  ['adminListPlayers'],
  ['adminListConnections'],
  ['adminListPlayerLocations'],
  ['adminListTables'],
  ['adminReadTable'],
  ['adminListSessions'],
  ['adminListChatMessages'],
  ['adminListWorldStatus'],
  ['adminReadSchema'],
  ['adminKickSession'],
  ['adminCreateUser'],
  ['adminSetWorldAccess'],
  ['adminCreateCharacter'],
  ['adminCharacterAxisState'],
  ['adminCharacterAxisEvents'],
  // Character 3 is an account's below the caller: on a fresh install the one login-direct made
  // and plays, in the denial matrix the one adminCreateCharacter made.
  ['adminKickCharacter'],
  ['adminManageUser'],
  ['adminWall'],
  ['adminListReports'],
  ['adminResolveReport'],
  ['adminListAudit'],
  ['labListWorlds'],
  ['labWorldConfig'],
  ['labImagePolicyBundle'],
  ['labCompileImagePrompt'],
  ['labTranslate'],
  ['adminLlmCommand'],
  ['adminLlmClearContext'],
  ['getPolicyCapabilities'],
  ['listPolicies'],
  ['getPolicy'],
  ['validatePolicy'],
  ['upsertPolicyVariant'],
  ['activatePolicy'],
  ['listPolicyActivations'],
  ['publishPolicies'],
  ['getPublishRun'],
  ['importPolicyArtifact'],
  ['getPolicyHashSnapshot'],
  ['generateConditionAxes'],
  ['adminReadLedger'],
  // Building: a cellar under the taproom, an exit down to it, items, then undone again.
  ['listWorldRooms'],
  ['createWorldRoom'],
  ['getWorldRoom'],
  ['updateWorldRoom'],
  ['addWorldExit'],
  ['createWorldItem'],
  ['getWorldItem'],
  ['updateWorldItem'],
  ['deleteWorldItem'],
  ['removeWorldExit'],
  ['deleteWorldRoom'],
  ['revertWorldRoom'],
  // NPCs: Old Tam made, read, scripted and deleted; Maud put back as her package has her.
  ['listWorldNpcs'],
  ['createWorldNpc'],
  ['getWorldNpc'],
  ['updateWorldNpc'],
  ['deleteWorldNpc'],
  ['revertWorldNpc'],
  ['listScriptErrors'],
  ['listWorldChanges'],
  // The same character 3, tombstoned last: nothing after it needs it.
  ['adminManageCharacter'],
  ['adminStopServer'],
];

/**
 * The one HTTP client of the page: openapi-fetch over the types generated from openapi.yaml,
 * so every path, body and answer is the contract's (a contract change that breaks the page
 * fails `npm run typecheck`). The session travels as a bearer token.
 */
import createClient from 'openapi-fetch';
import type { components, paths } from '../generated/openapi.d.ts';

export type Schemas = components['schemas'];

export interface Session {
  id: string;
  username: string;
  role: Schemas['Role'];
  worlds: Schemas['WorldEntry'][];
  /** Set once a character is selected. */
  character?: { name: string; worldId: string };
  /** Shown once after a guest registration, so the player can note the generated username. */
  guestNotice?: string;
}

export const api = createClient<paths>({ baseUrl: location.origin });

const STORAGE_KEY = 'mud-play-session';
let current: Session | null = null;
let onSessionLost: (detail: string) => void = () => {};

api.use({
  onRequest({ request }) {
    if (current) request.headers.set('Authorization', `Bearer ${current.id}`);
    return request;
  },
  onResponse({ request, response }) {
    // 401 to a request that carried the session: it ended (expired, kicked, banned elsewhere).
    if (response.status === 401 && request.headers.has('Authorization')) onSessionLost('Your session has ended. Please log in again.');
    return response;
  },
});

export function whenSessionLost(handler: (detail: string) => void): void {
  onSessionLost = handler;
}

/** The page keeps the session per tab (sessionStorage), so a reload stays in the game. */
export function session(): Session | null {
  if (current) return current;
  const stored = sessionStorage.getItem(STORAGE_KEY);
  if (stored) current = JSON.parse(stored);
  return current;
}

export function saveSession(value: Session | null): void {
  current = value;
  if (value) sessionStorage.setItem(STORAGE_KEY, JSON.stringify(value));
  else sessionStorage.removeItem(STORAGE_KEY);
}

export type Outcome<T> = { ok: true; data: T } | { ok: false; status: number; detail: string };

/** Awaits an openapi-fetch call: the typed body on 2xx, else the answer's `detail` (status 0: no answer). */
export async function call<T>(request: Promise<{ data?: T; error?: { detail: string }; response: Response }>): Promise<Outcome<T>> {
  try {
    const { data, error, response } = await request;
    if (response.ok && data !== undefined) return { ok: true, data };
    return { ok: false, status: response.status, detail: error?.detail ?? `The server answered ${response.status}.` };
  } catch {
    return { ok: false, status: 0, detail: 'The server cannot be reached.' };
  }
}

/** A contract path with its session segment filled in (for EventSource, which is not fetch). */
export function eventsUrl(sessionId: string): string {
  const path: keyof paths = '/events/{session_id}';
  return path.replace('{session_id}', encodeURIComponent(sessionId));
}

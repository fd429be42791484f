/** Moving between the screens, and the account buttons every signed-in screen shows. */
import { api, call, saveSession, type Session } from './api.ts';
import { h } from './dom.ts';
import { openAdmin } from './admin.ts';
import { BUILDER_ROLES, openBuild } from './build.ts';

export interface Screen {
  element: HTMLElement;
  /** Where the keyboard starts on this screen. */
  focus: HTMLElement;
  /** Stops what the screen keeps running (the event stream). */
  dispose?: () => void;
  /** Shows in place that the session ended (the game keeps its log); without it a screen of its own says so. */
  end?: (detail: string) => void;
}

export interface Nav {
  auth(notice?: string): void;
  lobby(): void;
  game(): void;
  /** The session is over (kicked, banned, expired): say why, then offer to log in again. */
  ended(detail: string): void;
  /** Stops the current screen before the session ends on purpose, so its stream's end is not news. */
  release(): void;
}

export const STAFF_ROLES: ReadonlySet<Session['role']> = new Set(['admin', 'superuser']);

export async function logout(nav: Nav): Promise<void> {
  nav.release();
  await call(api.POST('/logout', { body: {} }));
  saveSession(null);
  nav.auth('You have logged out.');
}

/**
 * "Build" (roles that may build, while they play), "Admin" (staff only: players never see
 * them, and the server refuses them anyway) and "Log out".
 */
export function accountButtons(nav: Nav, session: Session): HTMLElement {
  const build = session.character && BUILDER_ROLES.has(session.role) ? h('button', { class: 'ghost', text: 'Build', attrs: { type: 'button', 'aria-haspopup': 'dialog' } }) : null;
  build?.addEventListener('click', () => openBuild(session, build));
  const admin = STAFF_ROLES.has(session.role) ? h('button', { class: 'ghost', text: 'Admin', attrs: { type: 'button', 'aria-haspopup': 'dialog' } }) : null;
  admin?.addEventListener('click', () => openAdmin(session, admin));
  return h('div', { class: 'account' }, build, admin, h('button', { class: 'ghost', text: 'Log out', attrs: { type: 'button' }, onClick: () => void logout(nav) }));
}

/**
 * Roles, their rank, and the role → permission table (the reference server's), in one place.
 * Superusers hold every permission; otherwise nothing is inherited (admins lack create_rooms and
 * create_items).
 */
export const ROLES = ['player', 'worldbuilder', 'admin', 'superuser'] as const;
export type Role = (typeof ROLES)[number];

export const PERMISSIONS = [
  'play_game',
  'chat',
  'edit_world',
  'create_rooms',
  'create_items',
  'create_users',
  'kick_users',
  'ban_users',
  'view_logs',
  'stop_server',
  'manage_users',
  'change_roles',
  'full_access',
  // Not the reference server's: staff announcements (`wall`, POST /admin/wall), docs/decisions.md ("Moderation").
  'announce',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

const GRANTS: Record<Exclude<Role, 'superuser'>, readonly Permission[]> = {
  player: ['play_game', 'chat'],
  worldbuilder: ['play_game', 'chat', 'edit_world', 'create_rooms', 'create_items'],
  admin: ['play_game', 'chat', 'edit_world', 'create_users', 'kick_users', 'ban_users', 'view_logs', 'stop_server', 'announce'],
};

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

/** player 0 < worldbuilder 1 < admin 2 < superuser 3. */
export function rank(role: Role): number {
  return ROLES.indexOf(role);
}

export function hasPermission(role: Role, permission: Permission): boolean {
  return role === 'superuser' || GRANTS[role].includes(permission);
}

/** A user manages only strictly lower-ranked users. */
export function outranks(actor: Role, target: Role): boolean {
  return rank(actor) > rank(target);
}

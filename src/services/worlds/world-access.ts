/**
 * Who may use which world. `decideWorldAccess` is the one rule, the reference server's (a grant,
 * a character in the world or an open world; admins everywhere; docs/decisions.md, "Accounts and
 * sessions"), that login, character listing, creation, selection and direct login all go
 * through, so they can never disagree.
 */
import type { Config } from '../../config/config.ts';
import type { components } from '../../../generated/openapi.d.ts';
import type { CharacterRepository } from '../../db/repositories/character-repository.ts';
import type { WorldPermissionRepository } from '../../db/repositories/world-permission-repository.ts';
import { rank, type Role } from '../../shared/roles.ts';
import type { WorldCatalog } from './world-catalog.ts';
import type { World } from './world-loader.ts';

export type WorldEntry = components['schemas']['WorldEntry'];

export interface WorldPolicy {
  accessMode: 'open' | 'invite';
  namingMode: 'generated' | 'manual';
  slotLimitPerAccount: number;
}

export type AccessReason = WorldEntry['access_reason'];

export interface AccessDecision {
  canAccess: boolean;
  canCreate: boolean;
  reason: AccessReason;
}

export interface WorldAccess {
  world: World;
  policy: WorldPolicy;
  decision: AccessDecision;
  hasGrant: boolean;
  characterCount: number;
}

export interface AccessInput {
  role: Role;
  worldActive: boolean;
  policy: WorldPolicy;
  hasGrant: boolean;
  characterCount: number;
}

/** Precedence: `[world_policy.<id>]` in the config, then world.json, then `[character_creation]`. */
export function resolveWorldPolicy(world: World, config: Config): WorldPolicy {
  const override = config.worldPolicies[world.id] ?? {};
  const defaults = config.characterCreation;
  return {
    accessMode: override.accessMode ?? world.characterPolicy.accessMode ?? defaults.defaultAccessMode,
    namingMode: override.namingMode ?? world.characterPolicy.namingMode ?? defaults.defaultNamingMode,
    slotLimitPerAccount: override.slotLimitPerAccount ?? world.characterPolicy.slotLimitPerAccount ?? defaults.defaultWorldSlotLimit,
  };
}

export function decideWorldAccess({ role, worldActive, policy, hasGrant, characterCount }: AccessInput): AccessDecision {
  if (!worldActive) return { canAccess: false, canCreate: false, reason: 'world_inactive' };
  // Admins and superusers may enter every world; others need a grant, a character there, or an open world.
  const allowed = rank(role) >= rank('admin') || hasGrant || characterCount > 0 || policy.accessMode === 'open';
  if (!allowed) return { canAccess: false, canCreate: false, reason: 'invite_required' };
  if (characterCount >= policy.slotLimitPerAccount) return { canAccess: true, canCreate: false, reason: 'slot_limit_reached' };
  return { canAccess: true, canCreate: true, reason: 'ok' };
}

export class WorldAccessService {
  private readonly worlds: WorldCatalog;
  private readonly characters: CharacterRepository;
  private readonly permissions: WorldPermissionRepository;
  private readonly config: Config;

  constructor(worlds: WorldCatalog, characters: CharacterRepository, permissions: WorldPermissionRepository, config: Config) {
    this.worlds = worlds;
    this.characters = characters;
    this.permissions = permissions;
    this.config = config;
  }

  /** A loaded world and its effective character policy; null when the world is not loaded. */
  worldAndPolicy(worldId: string): { world: World; policy: WorldPolicy } | null {
    const world = this.worlds.get(worldId);
    return world ? { world, policy: resolveWorldPolicy(world, this.config) } : null;
  }

  /** What the account may do in one world; null when the world is not loaded. */
  async forWorld(userId: number, role: Role, worldId: string): Promise<WorldAccess | null> {
    const world = this.worlds.get(worldId);
    if (!world) return null;
    const [characterCount, grants] = await Promise.all([this.characters.countInWorld(userId, worldId), this.permissions.grantedWorlds(userId)]);
    return this.assess(world, role, grants.has(worldId), characterCount);
  }

  private assess(world: World, role: Role, hasGrant: boolean, characterCount: number): WorldAccess {
    const policy = resolveWorldPolicy(world, this.config);
    return { world, policy, hasGrant, characterCount, decision: decideWorldAccess({ role, worldActive: world.active, policy, hasGrant, characterCount }) };
  }

  /** Every active world with what this account may do there, ordered by id. */
  async listForAccount(userId: number, role: Role): Promise<WorldEntry[]> {
    const [counts, grants] = await Promise.all([this.characters.countByWorld(userId), this.permissions.grantedWorlds(userId)]);
    return this.worlds
      .list()
      .filter((w) => w.active)
      .sort((a, b) => a.id.localeCompare(b.id))
      .map((world) => {
        const { policy, decision, hasGrant, characterCount } = this.assess(world, role, grants.has(world.id), counts.get(world.id) ?? 0);
        return {
          id: world.id,
          name: world.name,
          description: world.description,
          can_access: decision.canAccess,
          can_create: decision.canCreate,
          access_mode: policy.accessMode,
          naming_mode: policy.namingMode,
          slot_limit_per_account: policy.slotLimitPerAccount,
          current_character_count: characterCount,
          is_locked: !decision.canAccess,
          is_invite_only: policy.accessMode === 'invite',
          has_permission_grant: hasGrant,
          has_existing_character: characterCount > 0,
          access_reason: decision.reason,
        };
      });
  }
}

/**
 * What chat does beyond storing text: the axis engine (chat between two characters moves their
 * axis scores, with a ledger event) and the OOC → IC translation through the world's language
 * model. Neither may fail the command that speaks: a failure is logged and the text goes out as
 * typed.
 */
import type { Clock } from '../../db/clock.ts';
import { lockKey, type Db } from '../../db/database.ts';
import type { AxisStateRepository } from '../../db/repositories/axis-state-repository.ts';
import type { CharacterRepository } from '../../db/repositories/character-repository.ts';
import type { GameRepository } from '../../db/repositories/game-repository.ts';
import type { Config } from '../../config/config.ts';
import type { Logger } from '../../logging/logger.ts';
import { DELTA_EPSILON, GrammarError, parseGrammar, resolveChat, seedFromIpcHash, type AxisChange, type ChatGrammar } from '../axis/axis-engine.ts';
import { parseSnapshot, type CharacterStateService } from '../characters/character-state.ts';
import type { LedgerService } from '../ledger/ledger-service.ts';
import { effectivePromptTemplate, translationLayer, type Translator } from '../lab/translation.ts';
import { resolveAxisBundle, type AxisBundle } from '../policy/axis-bundle.ts';
import { PyFloat } from '../../shared/canonical-json.ts';
import type { PolicyService } from '../policy/policy-service.ts';
import type { World } from '../worlds/world-loader.ts';
import type { Actor } from './command-table.ts';
import { plainText } from '../../shared/plain-text.ts';

/** What chat needs beyond the game tables. Without it chat is plain text. */
export interface ChatDependencies {
  db: Db;
  policies: PolicyService;
  axisState: AxisStateRepository;
  characters: CharacterRepository;
  state: CharacterStateService;
  ledger: Pick<LedgerService, 'append'>;
  translator: Translator;
  translation: Config['translation'];
  logger: Logger;
}

export type ChatChannel = 'say' | 'yell' | 'whisper';

const MECHANICAL_EVENT = 'chat.mechanical_resolution';
const MECHANICAL_DESCRIPTION = 'Axis mutation produced by a chat interaction.';
/** Temperature of an unseeded translation (a seed forces 0.0). */
const TRANSLATION_TEMPERATURE = 0.7;

export class ChatMechanics {
  private readonly deps: ChatDependencies | null;
  private readonly repo: GameRepository;
  private readonly clock: Clock;
  private readonly worldOf: (player: Actor) => World;
  /** Parsed grammar per axis bundle policy hash (null: invalid, engine off; logged once). */
  private readonly grammars = new Map<string, ChatGrammar | null>();

  constructor(deps: ChatDependencies | null, repo: GameRepository, clock: Clock, worldOf: (player: Actor) => World) {
    this.deps = deps;
    this.repo = repo;
    this.clock = clock;
    this.worldOf = worldOf;
  }


  /** The first other active character in the room, by id; null when the speaker is alone. */
  async roomListener(player: Actor, roomId: string): Promise<number | null> {
    if (!this.deps) return null;
    try {
      if (!this.axisEngineEnabled(this.worldOf(player))) return null;
      const present = await this.repo.activeInRoom(player.worldId, roomId, this.clock());
      const others = present.map((p) => p.id).filter((id) => id !== player.characterId);
      return others.length === 0 ? null : Math.min(...others);
    } catch (err) {
      this.deps.logger.error('Chat listener lookup failed', { world_id: player.worldId, character_id: player.characterId, error: (err as Error).message });
      return null;
    }
  }

  private axisEngineEnabled(world: World): boolean {
    return world.axisEngine !== null && world.axisEngine.enabled === true;
  }

  /** Runs the axis engine (with a listener) and the translation; returns the plain text to store, unescaped. */
  async interact(player: Actor, channel: ChatChannel, text: string, listenerId: number | null): Promise<string> {
    const deps = this.deps;
    if (!deps) return text;
    let ipcHash: string | null = null;
    if (listenerId !== null) {
      try {
        ipcHash = await this.resolveAxes(deps, player, listenerId, channel);
      } catch (err) {
        deps.logger.error('Axis engine chat resolution failed', { world_id: player.worldId, speaker_id: player.characterId, listener_id: listenerId, channel, error: (err as Error).message });
      }
    }
    try {
      // The model's text is as untrusted as the player's.
      return plainText(await this.translate(deps, player, channel, text, ipcHash));
    } catch (err) {
      deps.logger.error('Chat translation failed; using the OOC text', { world_id: player.worldId, character_id: player.characterId, channel, error: (err as Error).message });
      return text;
    }
  }

  /** The bundle's chat grammar, or null (logged once per bundle version) when it does not parse. */
  private grammarOf(deps: ChatDependencies, bundle: AxisBundle): ChatGrammar | null {
    if (this.grammars.has(bundle.policyHash)) return this.grammars.get(bundle.policyHash)!;
    let grammar: ChatGrammar | null = null;
    try {
      grammar = parseGrammar(bundle.content.resolution);
    } catch (err) {
      if (!(err instanceof GrammarError)) throw err;
      deps.logger.warn('Axis engine disabled for world: invalid resolution grammar', { world_id: bundle.worldId, bundle_id: bundle.bundleId, error: err.message });
    }
    this.grammars.set(bundle.policyHash, grammar);
    return grammar;
  }

  /**
   * The reference server's chat resolution, in one transaction: both characters locked in
   * ascending id order, scores read, deltas resolved, one axis event per changed character,
   * scores and snapshots refreshed, and the ledger event appended. Returns the ipc_hash, or null
   * when the engine is off.
   */
  private async resolveAxes(deps: ChatDependencies, player: Actor, listenerId: number, channel: ChatChannel): Promise<string | null> {
    const world = this.worldOf(player);
    if (!this.axisEngineEnabled(world)) return null;
    const bundle = await resolveAxisBundle(deps.policies, world.id);
    const grammar = this.grammarOf(deps, bundle);
    if (!grammar) return null;
    return deps.db.transaction(async (trx) => {
      for (const id of [player.characterId, listenerId].sort((a, b) => a - b)) await lockKey(trx, `character:${id}`);
      const speaker = await deps.characters.findById(player.characterId, trx);
      const listener = await deps.characters.findById(listenerId, trx);
      if (!speaker || !listener || speaker.worldId !== world.id || listener.worldId !== world.id) {
        throw new Error(`Chat characters ${player.characterId}/${listenerId} not found in world '${world.id}'`);
      }
      const scoresOf = async (id: number): Promise<Record<string, number>> => Object.fromEntries((await deps.axisState.scores(id, trx)).map((s) => [s.axisName, s.score]));
      const result = resolveChat({
        worldId: world.id,
        speaker: { id: speaker.id, scores: await scoresOf(speaker.id) },
        listener: { id: listener.id, scores: await scoresOf(listener.id) },
        channel,
        grammar,
      });
      const sides: Array<[typeof speaker, Record<string, AxisChange>, number]> = [
        [speaker, result.speaker, listener.id],
        [listener, result.listener, speaker.id],
      ];
      for (const [character, changes, peerId] of sides) {
        if (Object.keys(changes).length === 0) continue;
        const targets = Object.fromEntries(Object.entries(changes).map(([axis, c]) => [axis, c.newScore]));
        await deps.state.moveToIn(
          trx,
          { id: character.id, worldId: character.worldId, seed: character.stateSeed },
          bundle,
          targets,
          { type: MECHANICAL_EVENT, description: MECHANICAL_DESCRIPTION, metadata: { ipc_hash: result.ipcHash, channel, peer_id: String(peerId) } },
          DELTA_EPSILON,
        );
      }
      const party = (character: typeof speaker, changes: Record<string, AxisChange>) => ({
        character_id: character.id,
        character_name: character.name,
        axis_deltas: Object.fromEntries(Object.entries(changes).map(([axis, c]) => [axis, new PyFloat(c.delta)])),
      });
      await deps.ledger.append(
        {
          worldId: world.id,
          eventType: MECHANICAL_EVENT,
          ipcHash: result.ipcHash,
          meta: {},
          data: {
            channel,
            speaker: party(speaker, result.speaker),
            listener: party(listener, result.listener),
            axis_snapshot_before: Object.fromEntries(
              Object.entries(result.axisSnapshotBefore).map(([id, scores]) => [id, Object.fromEntries(Object.entries(scores).map(([a, v]) => [a, new PyFloat(v)]))]),
            ),
            grammar_version: result.grammarVersion,
          },
        },
        trx,
      );
      return result.ipcHash;
    });
  }

  /**
   * OOC → IC through the world's translation layer with the speaker's axes. Returns the
   * IC text, or the OOC text when translation is off, the character has no axis state, or
   * the model fails; every attempt is written to the ledger.
   */
  private async translate(deps: ChatDependencies, player: Actor, channel: ChatChannel, text: string, ipcHash: string | null): Promise<string> {
    const world = this.worldOf(player);
    const layer = translationLayer(world, deps.translation.ollamaUrl);
    if (!deps.translation.enabled || !layer.enabled) return text;
    const character = await deps.characters.findById(player.characterId);
    const scores = await deps.axisState.scores(player.characterId);
    if (!character || character.worldId !== world.id || scores.length === 0) return text;
    const labels = parseSnapshot(character.currentStateJson)?.axes ?? {};
    const scoreByAxis = new Map(scores.map((s) => [s.axisName, s.score]));
    const names = layer.activeAxes.length > 0 ? layer.activeAxes : scores.map((s) => s.axisName);
    const axes: Record<string, { label: string; score: number }> = {};
    for (const name of names) {
      const score = scoreByAxis.get(name);
      axes[name] = score === undefined ? { label: 'unknown', score: 0.0 } : { label: labels[name]?.label ?? 'unknown', score };
    }
    // The seed can reach 2^64 − 1: it is sent as raw JSON digits, never through a double.
    const seeded = layer.deterministic && ipcHash !== null;
    const seed = seeded ? (JSON.rawJSON(seedFromIpcHash(ipcHash).toString()) as unknown as number) : -1;
    const result = await deps.translator.translate({
      layer: { ...layer, activeAxes: names },
      template: await effectivePromptTemplate(deps.policies, world.id, layer),
      characterName: character.name,
      channel,
      axes,
      oocMessage: text,
      seed,
      temperature: seeded ? 0.0 : TRANSLATION_TEMPERATURE,
    });
    try {
      await deps.ledger.append({
        worldId: world.id,
        eventType: 'chat.translation',
        ipcHash,
        meta: ipcHash === null ? { phase: 'pre_axis_engine' } : {},
        data: {
          status: result.status,
          character_name: character.name,
          channel,
          ooc_input: text,
          ic_output: result.icText,
          axis_snapshot: Object.fromEntries(Object.entries(axes).map(([name, a]) => [name, { score: new PyFloat(a.score), label: a.label }])),
        },
      });
    } catch (err) {
      deps.logger.error('Ledger write of a chat translation failed', { world_id: world.id, character_id: player.characterId, error: (err as Error).message });
    }
    return result.icText ?? text;
  }
}

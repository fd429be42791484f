"""The client flow through the SDK that openapi-python-client generates from openapi.yaml.

Run by `npm run clients` with the generated package `mud_server_client` on PYTHONPATH:

    python test/clients/flow.py http://127.0.0.1:8000

Only the generated `api.*` functions and models are used, the way a client team would, so a
contract change that breaks Python clients fails here. Exits non-zero on the first failure.
"""

from __future__ import annotations

import secrets
import sys
from typing import TypeVar

from mud_server_client import AuthenticatedClient, Client
from mud_server_client.api.accounts import login, logout, register
from mud_server_client.api.characters import create_character, list_characters, select_character
from mud_server_client.api.game import get_room_chat, get_status, run_command
from mud_server_client.models import (
    CharacterList,
    CharacterSelection,
    ChatChannel,
    CommandRequest,
    CommandResult,
    CreateCharacterRequest,
    CreatedCharacter,
    ErrorBody,
    GameStatus,
    LoginRequest,
    LoginResult,
    RegisterRequest,
    Role,
    RoomChat,
    SelectCharacterRequest,
    SuccessMessage,
)
from mud_server_client.types import Response

PASSWORD = "Quiet-Lantern-42"
WORLD = "emberwick"

T = TypeVar("T")


def ok(what: str, response: Response[object], model: type[T]) -> T:
    """Asserts a 200 parsed into the expected model; returns it typed."""
    if response.status_code != 200 or not isinstance(response.parsed, model):
        raise AssertionError(f"{what}: {response.status_code} {response.content!r}")
    print(f"  python: {what} -> {response.status_code}")
    return response.parsed


def check(condition: bool, message: str) -> None:
    if not condition:
        raise AssertionError(message)


def main(base_url: str) -> None:
    # Letters and digits, 14 characters: inside the 2..20 the contract allows.
    username = f"py{secrets.token_hex(6)}"
    public = Client(base_url=base_url, raise_on_unexpected_status=True)

    registered = ok(
        "register",
        register.sync_detailed(
            client=public, body=RegisterRequest(username=username, password=PASSWORD, password_confirm=PASSWORD)
        ),
        SuccessMessage,
    )
    check(registered.success, f"register: {registered.message}")

    session = ok(
        "login",
        login.sync_detailed(client=public, body=LoginRequest(username=username, password=PASSWORD)),
        LoginResult,
    )
    check(session.role == Role.PLAYER, f"login: role {session.role}")
    check(any(w.id == WORLD for w in session.available_worlds), "login: emberwick is not offered")

    # The session as a bearer token, set once: no call below sends session_id itself
    # (except the path parameter of /chat and /status, which the path requires).
    client = AuthenticatedClient(base_url=base_url, token=session.session_id, raise_on_unexpected_status=True)

    empty = ok("list characters", list_characters.sync_detailed(client=client, world_id=WORLD), CharacterList)
    check(empty.characters == [], f"list characters: {empty.characters}")

    created = ok(
        "create character",
        create_character.sync_detailed(client=client, body=CreateCharacterRequest(world_id=WORLD)),
        CreatedCharacter,
    )
    check(created.world_id == WORLD and created.character_name != "", f"create character: {created}")

    listed = ok("list characters", list_characters.sync_detailed(client=client, world_id=WORLD), CharacterList)
    check(
        [(c.id, c.name) for c in listed.characters] == [(created.character_id, created.character_name)],
        f"list characters: {listed.characters}",
    )

    selected = ok(
        "select character",
        select_character.sync_detailed(client=client, body=SelectCharacterRequest(character_id=created.character_id)),
        CharacterSelection,
    )
    check(selected.character_name == created.character_name, f"select: {selected.character_name}")

    look = ok("look", run_command.sync_detailed(client=client, body=CommandRequest(command="look")), CommandResult)
    check(look.success and "[Exits]" in look.message, f"look: {look.message!r}")
    # The room as data: what a client draws without reading the text.
    check(look.room is not None and look.room.id == "lockkeepers_square" and look.room.npcs == [], f"look room: {look.room!r}")

    said = ok(
        "say hello", run_command.sync_detailed(client=client, body=CommandRequest(command="say hello")), CommandResult
    )
    check(said.success, f"say: {said.message!r}")

    chat = ok("chat", get_room_chat.sync_detailed(session.session_id, client=client), RoomChat)
    check(
        any(
            m.sender == created.character_name and m.channel == ChatChannel.SAY and m.text == "hello"
            for m in chat.messages
        ),
        f"chat: 'hello' missing from {chat.messages}",
    )

    status = ok("status", get_status.sync_detailed(session.session_id, client=client), GameStatus)
    check(created.character_name in status.active_players, f"status: {status.active_players}")
    check(isinstance(status.current_room, str), f"status: current_room {status.current_room!r}")

    bye = ok("logout", logout.sync_detailed(client=client), SuccessMessage)
    check(bye.success, f"logout: {bye.message}")

    # The session is closed: the same client now gets the documented 401.
    after = list_characters.sync_detailed(client=client)
    check(after.status_code == 401 and isinstance(after.parsed, ErrorBody), f"after logout: {after.status_code}")
    print("  python: flow passed")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: flow.py <base_url>")
    main(sys.argv[1])

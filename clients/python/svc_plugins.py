#!/usr/bin/env python3
"""Installs the approved community plugins of an svc-api server into a directory, verified.

    python3 svc_plugins.py sync --server URL --dir DIR [--token TOKEN] [--key FILE] [--dry-run]

URL      the server, e.g. https://svc.example.org (the API is under /api/v1)
DIR      where the plugins go: one file per listed version, `<name>_<sha256>.py`; DIR/.svc-plugins/
         keeps the pinned key, the applied state (`state.json`) and the last manifest
TOKEN    a login's JWT (or a personal access token once the server has them); also read from
         SVC_TOKEN; none where the server allows anonymous reads (PLUGIN_ANONYMOUS_READS=on)
--key    the server's public key (PEM) to trust, pinned from then on; without it, the key is
         fetched and pinned on first use
--dry-run  says what a sync would change and changes nothing

A sync fetches the signed manifest (a conditional request), verifies its Ed25519 signature with
the pinned key, refuses an expired manifest or one whose serial is lower than the last applied,
downloads each listed file it lacks by its digest and checks the digest, writes each file
under a temporary name, fsyncs and renames it, records the applied serial in the state file
(written the same way: that write is the commit), then removes the files of versions no longer
listed. A failure before the commit removes what it wrote, so DIR is as it was; a sync killed
before it leaves only whole files, which the state does not list. The framework loads only
the files the state lists, each checked against its digest (docs/plugin-manifest.md).

Prints one line per change and a summary (exit 0), or `refused: <reason>` / `failed: <reason>`
(exit 1; 2 for a bad command line). Python 3.11 standard library only.
"""
import argparse
import base64
import binascii
import datetime
import hashlib
import json
import os
import re
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request

# How far this machine's clock may be behind the server's: a manifest is refused only once it
# is this much past its expires_at (as the reference loader, docs/examples/manifest_loader.py).
CLOCK_SKEW = datetime.timedelta(minutes=5)
TIMEOUT_SECONDS = 30
STATE_DIR = ".svc-plugins"
TEMPORARY_PREFIX = ".svc-plugins-tmp-"
DIGEST = re.compile(r"^[0-9a-f]{64}$")


class Refused(Exception):
    """The server's answer is not to be trusted: nothing is installed."""


class Failed(Exception):
    """The sync could not be done (network, server, disk): nothing is installed."""


# --- Ed25519 signature verification, RFC 8032 section 5.1.7 ---------------------------------
# The standard library has no Ed25519. Verification needs no secret, so constant time does not
# matter here; points are in extended coordinates (X, Y, Z, T) with x = X/Z, y = Y/Z, xy = T/Z.

_P = 2**255 - 19
_L = 2**252 + 27742317777372353535851937790883648493
_D = -121665 * pow(121666, _P - 2, _P) % _P
_SQRT_M1 = pow(2, (_P - 1) // 4, _P)
_IDENTITY = (0, 1, 1, 0)


def _add(a, b):
    """Point addition on the twisted Edwards curve with a = -1 (RFC 8032 5.1.4)."""
    x1, y1, z1, t1 = a
    x2, y2, z2, t2 = b
    aa = (y1 - x1) * (y2 - x2) % _P
    bb = (y1 + x1) * (y2 + x2) % _P
    cc = 2 * t1 * t2 * _D % _P
    dd = 2 * z1 * z2 % _P
    e, f, g, h = bb - aa, dd - cc, dd + cc, bb + aa
    return (e * f % _P, g * h % _P, f * g % _P, e * h % _P)


def _multiply(scalar, point):
    result = _IDENTITY
    while scalar > 0:
        if scalar & 1:
            result = _add(result, point)
        point = _add(point, point)
        scalar >>= 1
    return result


def _same_point(a, b):
    return (a[0] * b[2] - b[0] * a[2]) % _P == 0 and (a[1] * b[2] - b[1] * a[2]) % _P == 0


def _x_of(y, sign):
    """The x with this sign bit for y (RFC 8032 5.1.3), or None when there is none."""
    if y >= _P:
        return None
    x2 = (y * y - 1) * pow(_D * y * y + 1, _P - 2, _P) % _P
    if x2 == 0:
        return None if sign else 0
    x = pow(x2, (_P + 3) // 8, _P)
    if (x * x - x2) % _P != 0:
        x = x * _SQRT_M1 % _P
    if (x * x - x2) % _P != 0:
        return None
    return _P - x if (x & 1) != sign else x


def _decode_point(encoded):
    y = int.from_bytes(encoded, "little")
    sign, y = y >> 255, y & ((1 << 255) - 1)
    x = _x_of(y, sign)
    return None if x is None else (x, y, 1, x * y % _P)


_BASE_Y = 4 * pow(5, _P - 2, _P) % _P
_BASE = (_x_of(_BASE_Y, 0), _BASE_Y, 1, _x_of(_BASE_Y, 0) * _BASE_Y % _P)


def ed25519_verify(public_key, message, signature):
    """True when `signature` (64 bytes) signs `message` under `public_key` (32 bytes)."""
    if len(public_key) != 32 or len(signature) != 64:
        return False
    a, r = _decode_point(public_key), _decode_point(signature[:32])
    s = int.from_bytes(signature[32:], "little")
    if a is None or r is None or s >= _L:
        return False
    k = int.from_bytes(hashlib.sha512(signature[:32] + public_key + message).digest(), "little") % _L
    # The cofactored check [8][S]B = [8]R + [8][k]A, which RFC 8032 names sufficient.
    return _same_point(_multiply(8 * s, _BASE), _multiply(8, _add(r, _multiply(k, a))))


# The DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410): the 32 key bytes follow it.
_SPKI_PREFIX = bytes.fromhex("302a300506032b6570032100")


def public_key_of_pem(pem):
    """The raw 32-byte key of a `PUBLIC KEY` PEM holding an Ed25519 key."""
    match = re.search(r"-----BEGIN PUBLIC KEY-----(.*?)-----END PUBLIC KEY-----", pem, re.S)
    try:
        der = base64.b64decode("".join(match.group(1).split()), validate=True) if match else b""
    except binascii.Error:
        der = b""
    if len(der) != 44 or not der.startswith(_SPKI_PREFIX):
        raise Refused("the key is not an Ed25519 public key in PEM")
    return der[len(_SPKI_PREFIX):]


# --- The manifest ---------------------------------------------------------------------------


def canonical_json(value):
    """The bytes the server signed: keys sorted at every level, no spaces, non-ASCII as \\uXXXX."""
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


def utc_instant(text):
    try:
        instant = datetime.datetime.fromisoformat(text)
    except (TypeError, ValueError):
        return None
    return instant if instant.tzinfo is not None else None


def verified_manifest(manifest, public_key, applied_serial, now):
    """The manifest's entries once it is signed by the key, unexpired and not older than applied."""
    if not isinstance(manifest, dict) or not isinstance(manifest.get("signature"), str):
        raise Refused("the manifest has no signature")
    signed = {name: value for name, value in manifest.items() if name != "signature"}
    try:
        signature = base64.b64decode(manifest["signature"], validate=True)
    except binascii.Error:
        signature = b""
    if not ed25519_verify(public_key, canonical_json(signed), signature):
        raise Refused("the signature does not verify with the pinned key")
    serial, expires_at, entries = manifest.get("serial"), utc_instant(manifest.get("expires_at")), manifest.get("plugins")
    if type(serial) is not int or serial < 0:
        raise Refused("the manifest has no serial (a server older than the replay defence)")
    if expires_at is None or not isinstance(entries, list):
        raise Refused("the manifest has no expires_at or no plugins")
    if now > expires_at + CLOCK_SKEW:
        raise Refused(
            f"the manifest expired at {manifest['expires_at']} (now {now.isoformat()}, "
            f"{int(CLOCK_SKEW.total_seconds())} s of clock skew allowed): fetch a fresh one"
        )
    if serial < applied_serial:
        raise Refused(f"serial {serial} is lower than serial {applied_serial} already applied: an older manifest replayed")
    for entry in entries:
        if not (
            isinstance(entry, dict)
            and type(entry.get("id")) is int
            and isinstance(entry.get("name"), str)
            and isinstance(entry.get("version"), str)
            and isinstance(entry.get("sha256"), str)
            and DIGEST.match(entry["sha256"])
        ):
            raise Refused("the manifest lists an entry without id, name, version and sha256")
    return serial, entries


def file_name(entry):
    """`<name>_<sha256>.py`: the digest makes it unique, and a new version a new file."""
    slug = re.sub(r"[^a-z0-9]+", "_", entry["name"].lower()).strip("_")[:64] or "plugin"
    return f"{slug}_{entry['sha256']}.py"


# --- Files, written whole or not at all -------------------------------------------------------


def sync_directory(path):
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def write_durably(directory, name, content):
    """A temporary name in the same directory, fsynced, renamed over `name`."""
    descriptor, temporary = tempfile.mkstemp(prefix=TEMPORARY_PREFIX, dir=directory)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, os.path.join(directory, name))
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def sha256_of_file(path):
    try:
        with open(path, "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest()
    except FileNotFoundError:
        return None


def read_json(path, default):
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except FileNotFoundError:
        return default
    except (OSError, ValueError):
        raise Refused(f"{path} is unreadable: repair or remove it") from None


def load_state(state_dir):
    state = read_json(os.path.join(state_dir, "state.json"), {"serial": -1, "files": {}})
    if not (isinstance(state, dict) and type(state.get("serial")) is int and isinstance(state.get("files"), dict)):
        raise Refused(f"{os.path.join(state_dir, 'state.json')} is unreadable: repair or remove it")
    return state


# --- HTTP -----------------------------------------------------------------------------------


class Server:
    def __init__(self, base, token):
        self.base = base.rstrip("/") + "/api/v1/community-plugins/"
        self.token = token

    def get(self, path, etag=None):
        """(status, headers, body) of a GET; 304 is an answer, any other status but 200 a failure."""
        request = urllib.request.Request(urllib.parse.urljoin(self.base, path))
        if self.token:
            # Unredirected: a redirect to another host does not take the token with it.
            request.add_unredirected_header("Authorization", f"Bearer {self.token}")
        if etag:
            request.add_header("If-None-Match", etag)
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:
                return response.status, response.headers, response.read()
        except urllib.error.HTTPError as error:
            if error.code == 304:
                return 304, error.headers, b""
            raise Failed(f"GET {path} answered {error.code}: {message_of(error.read())}") from None
        except (urllib.error.URLError, OSError) as error:
            raise Failed(f"GET {path}: {getattr(error, 'reason', error)}") from None

    def data(self, body, path):
        try:
            return json.loads(body)["data"]
        except (ValueError, KeyError, TypeError):
            raise Refused(f"GET {path} did not answer the API's JSON") from None


def message_of(body):
    try:
        return json.loads(body)["message"]
    except (ValueError, KeyError, TypeError):
        return body[:200].decode("utf-8", "replace")


# --- The sync -------------------------------------------------------------------------------


def pinned_key(server, state_dir, key_file):
    """The key to verify with, and its PEM when it is to be pinned by this sync."""
    if key_file:
        with open(key_file, encoding="utf-8") as handle:
            pem = handle.read()
        return public_key_of_pem(pem), pem
    pinned = os.path.join(state_dir, "key.pem")
    if os.path.exists(pinned):
        with open(pinned, encoding="utf-8") as handle:
            return public_key_of_pem(handle.read()), None
    _, _, body = server.get("manifest/key/")
    pem = server.data(body, "manifest/key/").get("public_key_pem")
    if not isinstance(pem, str):
        raise Refused("manifest/key/ has no public_key_pem")
    return public_key_of_pem(pem), pem


def current_manifest(server, state_dir, etag_allowed=True):
    """The manifest as now served, and the copy to keep: the kept copy when the server answers 304."""
    cached = read_json(os.path.join(state_dir, "manifest.json"), None)
    etag = cached.get("etag") if isinstance(cached, dict) and etag_allowed else None
    status, headers, body = server.get("manifest/", etag if isinstance(etag, str) else None)
    if status == 304:
        return cached["manifest"], None
    manifest = server.data(body, "manifest/")
    return manifest, {"etag": headers.get("ETag"), "manifest": manifest}


def sync(server_url, directory, token, key_file, dry_run, out):
    server = Server(server_url, token)
    state_dir = os.path.join(directory, STATE_DIR)
    state = load_state(state_dir)
    public_key, key_to_pin = pinned_key(server, state_dir, key_file)
    manifest, copy = current_manifest(server, state_dir)
    now = datetime.datetime.now(datetime.timezone.utc)
    try:
        serial, entries = verified_manifest(manifest, public_key, state["serial"], now)
    except Refused:
        if copy is not None:
            raise
        # The kept copy no longer passes (a clock apart from the server's): ask for a fresh one.
        manifest, copy = current_manifest(server, state_dir, etag_allowed=False)
        serial, entries = verified_manifest(manifest, public_key, state["serial"], now)

    wanted = {file_name(entry): entry for entry in entries}
    to_fetch = [name for name, entry in wanted.items() if sha256_of_file(os.path.join(directory, name)) != entry["sha256"]]
    new = [name for name in wanted if name not in state["files"]]
    gone = sorted(name for name in state["files"] if name not in wanted)
    if dry_run:
        report(out, "would ", wanted, state, new, to_fetch, gone, serial)
        return

    os.makedirs(state_dir, exist_ok=True)
    written = []
    try:
        for name in to_fetch:
            entry = wanted[name]
            _, _, content = server.get(f"files/{entry['sha256']}")
            if hashlib.sha256(content).hexdigest() != entry["sha256"]:
                raise Refused(f"the bytes sent for {entry['name']} {entry['version']} do not hash to {entry['sha256']}")
            existed = os.path.exists(os.path.join(directory, name))
            write_durably(directory, name, content)
            if not existed:
                written.append(name)
        sync_directory(directory)
        files = {name: {key: wanted[name][key] for key in ("id", "name", "version", "sha256")} for name in wanted}
        # The commit: from here the state lists the new set, every file of it whole on disk.
        write_durably(state_dir, "state.json", json.dumps({"serial": serial, "files": files}, indent=1).encode())
        sync_directory(state_dir)
    except BaseException:
        for name in written:
            os.unlink(os.path.join(directory, name))
        raise
    # After the commit, so that a failed sync pins nothing; a sync killed before these writes
    # pins the key next time, or fetches the whole manifest again.
    if key_to_pin is not None:
        write_durably(state_dir, "key.pem", key_to_pin.encode())
    if copy is not None:
        write_durably(state_dir, "manifest.json", json.dumps(copy).encode())
    for name in gone:
        if os.path.exists(os.path.join(directory, name)):
            os.unlink(os.path.join(directory, name))
    for leftover in os.listdir(directory):
        if leftover.startswith(TEMPORARY_PREFIX):
            os.unlink(os.path.join(directory, leftover))
    sync_directory(directory)
    sync_directory(state_dir)
    report(out, "", wanted, state, new, to_fetch, gone, serial)


def report(out, prefix, wanted, state, new, to_fetch, gone, serial):
    repaired = [name for name in to_fetch if name not in new]
    for name in new:
        out.write(f"{prefix}install {wanted[name]['name']} {wanted[name]['version']} ({name})\n")
    for name in repaired:
        out.write(f"{prefix}repair {wanted[name]['name']} {wanted[name]['version']} ({name})\n")
    for name in gone:
        out.write(f"{prefix}remove {state['files'][name]['name']} {state['files'][name]['version']} ({name})\n")
    unchanged = len(wanted) - len(new) - len(repaired)
    out.write(
        f"{prefix}apply serial {serial}: {len(new)} installed, {len(repaired)} repaired, "
        f"{len(gone)} removed, {unchanged} unchanged\n"
    )
    out.flush()


def main(argv):
    parser = argparse.ArgumentParser(prog="svc_plugins.py", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    command = commands.add_parser("sync", help="install the approved plugins into DIR")
    command.add_argument("--server", required=True)
    command.add_argument("--dir", required=True)
    command.add_argument("--token", default=os.environ.get("SVC_TOKEN"))
    command.add_argument("--key")
    command.add_argument("--dry-run", action="store_true")
    args = parser.parse_args(argv[1:])
    try:
        sync(args.server, args.dir, args.token, args.key, args.dry_run, sys.stdout)
    except Refused as refusal:
        print(f"refused: {refusal}", flush=True)
        return 1
    except (Failed, OSError) as failure:
        print(f"failed: {failure}", flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

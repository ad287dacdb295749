"""The jail's self-check, run inside it once per process before any test-run is offered.

argv[1] is JSON: a listening TCP port on the host's loopback, a host file's path, the name of a
variable set in the parent's environment. Each check passes when the thing is out of reach,
and the limits are proven by hitting them. Prints one JSON line: {"failed": [what, ...]}.
"""

import errno
import json
import os
import resource
import socket
import sys

probe = json.loads(sys.argv[1])
failed = []

try:
    with socket.create_connection(("127.0.0.1", probe["port"]), timeout=2):
        failed.append("the host's loopback network is reachable")
except OSError:
    pass

try:
    socket.getaddrinfo("example.com", 80)
    failed.append("name lookups work")
except OSError:
    pass

try:
    with open(probe["host_file"], "rb"):
        failed.append("a host file is readable")
except OSError:
    pass

if probe["canary"] in os.environ:
    failed.append("the parent's environment is visible")

try:
    resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))
    with open("/work/limit-check", "wb") as big:
        big.write(b"x" * 4096)
        big.flush()
    failed.append("the file size limit does not apply")
except OSError as error:
    if error.errno != errno.EFBIG:
        failed.append("the working directory is not writable")

try:
    resource.setrlimit(resource.RLIMIT_AS, (256 << 20, 256 << 20))
    hog = bytearray(512 << 20)
    failed.append("the address space limit does not apply")
except MemoryError:
    pass

try:
    # One process at most, and the runner is one already.
    resource.setrlimit(resource.RLIMIT_NPROC, (1, 1))
    child = os.fork()
    if child == 0:
        os._exit(0)
    os.waitpid(child, 0)
    failed.append("the process limit does not apply")
except OSError:
    pass

try:
    resource.setrlimit(resource.RLIMIT_NPROC, (2, 2))
    failed.append("a limit can be raised again")
except (OSError, ValueError):
    pass

print(json.dumps({"failed": failed}))

"""The jail's self-check, run inside it once per process before any test-run is offered.

argv[1] is JSON: a listening TCP port on the host's loopback, a host file's path, the name of a
variable set in the parent's environment. Each check passes when the thing is out of reach,
and the limits are proven by hitting them. Prints one JSON line: {"failed": [what, ...]}. The
tracer's view of the same run is checked outside (self-check.ts).
"""

import errno
import json
import os
import resource
import socket
import sys

probe = json.loads(sys.argv[1])
failed = []

# What follows is judged by the tracer outside too (self-check.ts): from here on, as a plugin's.
try:
    os.close(os.open("/runner/plugin-starts", os.O_RDONLY))
except OSError:
    pass

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
    # No second process: the jail's filter refuses it (the kernel's SIGSYS, which the tracer
    # sees; PID 1 survives it, and the call returns no child to wait for).
    child = os.fork()
    if child == 0:
        os._exit(0)
    os.waitpid(child, 0)
    failed.append("a second process can be started")
except OSError:
    pass

resource.setrlimit(resource.RLIMIT_NPROC, (1, 1))
try:
    resource.setrlimit(resource.RLIMIT_NPROC, (2, 2))
    failed.append("a limit can be raised again")
except (OSError, ValueError):
    pass

print(json.dumps({"failed": failed}))

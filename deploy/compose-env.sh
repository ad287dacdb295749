#!/bin/sh
# Writes the secrets every production service of docker-compose.yml needs into .env beside it,
# which Compose reads for every command (`up`, `config`, ...). A secret already there is kept:
# a new PLUGIN_MANIFEST_KEY would break the public key frameworks pinned, a new JWT_SECRET
# every token. git and the image leave .env out.
set -eu
cd "$(dirname "$0")/.."
umask 077
touch .env
# A last line without its line break would run into the one appended.
if [ -s .env ] && [ -n "$(tail -c 1 .env)" ]; then echo >>.env; fi
if ! grep -q '^JWT_SECRET=' .env; then
  printf 'JWT_SECRET=%s\n' "$(openssl rand -base64 48 | tr -d '\n')" >>.env
fi
if ! grep -q '^PLUGIN_MANIFEST_KEY=' .env; then
  # One line, its line breaks written as \n (the API reads either form), quoted so Compose
  # keeps it as it is.
  printf "PLUGIN_MANIFEST_KEY='%s'\n" "$(openssl genpkey -algorithm ed25519 | awk 'BEGIN { ORS = "\\n" } 1')" >>.env
fi
echo 'JWT_SECRET and PLUGIN_MANIFEST_KEY are in .env'

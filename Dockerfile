# Node 24 LTS, pinned (package.json's engines; docs/development.md says where each Node is tested).
# Build stage: compiles TypeScript and the native SQLite binding.
FROM node:24.11.1-bookworm-slim AS build
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
# `npm run build`'s own steps after tsc: the Python beside its compiled modules, and the stamp.
COPY scripts/copy-python.js scripts/build-stamp.js ./scripts/
COPY src ./src
COPY migrations ./migrations
RUN npm run build && npm prune --omit=dev

# Runtime stage: production dependencies and the compiled app, as a non-root user.
FROM node:24.11.1-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8009
WORKDIR /app
# The plugin validator judges uploads with CPython 3.11's own parser (bookworm's python3); the
# analyser's .py files and tables are in dist/ (copied by `npm run build`). bubblewrap is the
# reviewers' test-run jail and strace its observer (docs/plugin-test-run.md: the container needs
# user namespaces).
RUN apt-get update && apt-get install -y --no-install-recommends python3 bubblewrap strace && rm -rf /var/lib/apt/lists/*
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
RUN mkdir -p /app/data && chown -R node:node /app/data
USER node
EXPOSE 8009
CMD ["node", "dist/src/main.js"]

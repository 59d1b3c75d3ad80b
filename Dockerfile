# HiveGate cloud. Build: docker build -t hivegate-cloud .   Run: see docker-compose.yml.
# The build stage runs scripts/build-cloud-bundle.sh, which CI also runs on the host.
FROM node:20-bookworm-slim AS build
# The pnpm that package.json's packageManager pins (deploy.test.ts keeps the two equal): the one the lockfile is for.
RUN npm install -g pnpm@10.34.9 && apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY package.json pnpm-lock.yaml pnpm-workspace.yaml tsconfig.base.json ./
COPY shared/package.json shared/
COPY cloud/package.json cloud/
COPY agent/package.json agent/
COPY simulator/package.json simulator/
ENV npm_config_nodedir=/usr/local ONNXRUNTIME_NODE_INSTALL=skip
RUN pnpm install --frozen-lockfile --filter @hivegate/cloud...
COPY shared shared
COPY cloud cloud
COPY scripts/build-cloud-bundle.sh scripts/
RUN bash scripts/build-cloud-bundle.sh /bundle

FROM node:20-bookworm-slim
# The code belongs to root, so the service's user cannot change it; that user owns only /data, which holds the
# embedded database, the blobs and the admin socket and so is for it alone (a new volume takes this mode over).
RUN apt-get update && apt-get install -y --no-install-recommends ffmpeg tini \
 && rm -rf /var/lib/apt/lists/* \
 && install -d -o node -g node -m 0700 /data
COPY --from=build /bundle /app
WORKDIR /app
USER node
ENV NODE_ENV=production PORT=8600 HOST=0.0.0.0 DATA_DIR=/data
EXPOSE 8600
VOLUME ["/data"]
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8600)+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "--import", "tsx", "src/server.ts"]

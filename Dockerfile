# swift-webimage's runtime image: `webimage serve` on Debian 12 (bookworm).
#   docker build -t swift-webimage .
#   docker run --rm -p 8080:8080 swift-webimage          # then: curl localhost:8080/healthz
# The runtime stage is proven without a Docker engine by deploy/runtime-test.sh, which runs its
# RUN lines in a debootstrapped Debian, copies the same static binary in and starts the same command.

# Build: the official Swift image of Debian 12, the codec headers, a binary with the Swift runtime
# linked in statically (so the runtime stage needs no Swift toolchain).
FROM swift:6.3-bookworm AS build
WORKDIR /src
COPY scripts/install-deps.sh scripts/
RUN scripts/install-deps.sh --build && rm -rf /var/lib/apt/lists/*
COPY . .
RUN swift build -c release --static-swift-stdlib --product webimage \
    && install -m 0755 "$(swift build -c release --show-bin-path)/webimage" /usr/local/bin/webimage

# Run: a slim Debian with only the shared libraries the binary needs (no -dev package, no compiler).
FROM debian:bookworm-slim
COPY deploy/runtime-packages.txt /tmp/runtime-packages.txt
RUN apt-get update && sed -e 's/#.*//' /tmp/runtime-packages.txt | xargs apt-get install -y --no-install-recommends && rm -rf /var/lib/apt/lists/* /tmp/runtime-packages.txt
RUN useradd --system --uid 10001 --user-group --home-dir /nonexistent --no-create-home --shell /usr/sbin/nologin webimage && install -d -o webimage -g webimage -m 0700 /var/cache/webimage
COPY --from=build /usr/local/bin/webimage /usr/local/bin/webimage
USER webimage
# Memory: the default --memory-budget-mib is three quarters of the container's memory limit (at most 1024).
# A disk cache: -e WEBIMAGE_CACHE_DIR=/var/cache/webimage -v webimage-cache:/var/cache/webimage
EXPOSE 8080
# No curl in the image: bash's /dev/tcp asks /healthz (liveness) on the port the service listens on.
HEALTHCHECK --interval=30s --timeout=3s --start-period=5s --retries=3 CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/${WEBIMAGE_PORT:-8080} && printf 'GET /healthz HTTP/1.0\\r\\n\\r\\n' >&3 && head -n 1 <&3 | grep -q ' 200 '"]
ENTRYPOINT ["webimage"]
CMD ["serve", "--host", "0.0.0.0"]

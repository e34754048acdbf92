# tinytcp on Debian bookworm. A thin wrapper around the same scripts CI runs:
# install-deps.sh, then the release preset. Run privileged network demos with
# docker-compose.yml (NET_ADMIN and /dev/net/tun).
FROM debian:bookworm
WORKDIR /src/tinytcp
COPY scripts/install-deps.sh scripts/install-deps.sh
RUN ./scripts/install-deps.sh && rm -rf /var/lib/apt/lists/*
COPY . .
RUN cmake --preset release && cmake --build --preset release
ENV PATH=/src/tinytcp/build/release/bin:$PATH
CMD ["./scripts/demo.sh"]

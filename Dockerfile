# The traffic-migration image: the static binaries that `make build` makes, on an
# empty base with the CA certificates of Debian's ca-certificates package, as the
# non-root user 65532. /traffic-migration is the entrypoint (the hub manager and every
# other command); /traffic-migration-agent, beside it, is the spoke agent alone, which
# the add-on's agent Deployment runs.
#
# Build it with `make image`: it stages the binaries and the certificates into a
# build context of their own, so the build pulls nothing and needs no registry.
FROM scratch
ARG VERSION=dev
LABEL org.opencontainers.image.title="traffic-migration" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY traffic-migration /traffic-migration
COPY traffic-migration-agent /traffic-migration-agent
USER 65532:65532
ENTRYPOINT ["/traffic-migration"]

# The traffic-migration image, on a distroless base, as a non-root user: the static
# binary /traffic-migration (the entrypoint: the hub manager and every other command)
# and /traffic-migration-agent (the spoke agent alone, which the add-on's agent
# Deployment runs).
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY cmd/ cmd/
COPY pkg/ pkg/
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X open-cluster-management.io/traffic-migration/pkg/version.Version=${VERSION}" \
      -o /out/ ./cmd/traffic-migration ./cmd/traffic-migration-agent

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/traffic-migration /traffic-migration
COPY --from=build /out/traffic-migration-agent /traffic-migration-agent
USER 65532:65532
ENTRYPOINT ["/traffic-migration"]

# The traffic-migration image: one static binary that runs as the hub manager or the
# spoke agent, on a distroless base, as a non-root user.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY cmd/ cmd/
COPY pkg/ pkg/
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X open-cluster-management.io/traffic-migration/pkg/version.Version=${VERSION}" \
      -o /out/traffic-migration ./cmd/traffic-migration

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/traffic-migration /traffic-migration
USER 65532:65532
ENTRYPOINT ["/traffic-migration"]

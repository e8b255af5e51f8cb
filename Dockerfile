# The openkeel-ironic image: one static binary on a Debian slim base that
# carries only the programs the binary runs (see RUNTIME_PACKAGES below).
# Base images are pinned by tag; a test in deploy/helm/chart-test parses
# this file and holds it to that.

FROM golang:1.26.8-trixie AS build
WORKDIR /src
# Modules first, so that a source change does not download them again.
COPY go.mod go.sum ./
RUN go mod download
COPY cmd ./cmd
COPY internal ./internal
ARG VERSION=0.1.0-dev
# No cgo: the SQLite driver is pure Go, and a static binary needs no libc
# from the runtime stage.
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/ironic ./cmd/ironic

FROM debian:13.1-slim
# What the binary shells out to, nothing else: ipmitool (IPMI power and
# management), socat (serial console), xorriso (virtual media ISOs),
# qemu-utils (qemu-img image conversion), dosfstools and mtools (mkfs.vfat
# and mcopy for EFI boot images); ca-certificates so that TLS to BMCs,
# Keystone and image servers can be verified.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ca-certificates \
      dosfstools \
      ipmitool \
      mtools \
      qemu-utils \
      socat \
      xorriso \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 ironic \
 && useradd --system --uid 10001 --gid 10001 --home-dir /var/lib/ironic \
      --no-create-home --shell /usr/sbin/nologin ironic \
 && install -d -o 10001 -g 10001 -m 0750 /var/lib/ironic /httpboot /etc/ironic /etc/ironic/conf.d
COPY --from=build /out/ironic /usr/bin/ironic
# The upstream program names, so that existing manifests and scripts that
# run ironic-api, ironic-conductor or ironic-dbsync work unchanged.
RUN ln -s ironic /usr/bin/ironic-api \
 && ln -s ironic /usr/bin/ironic-conductor \
 && ln -s ironic /usr/bin/ironic-dbsync
USER 10001:10001
WORKDIR /var/lib/ironic
EXPOSE 6385 8089
ENTRYPOINT ["/usr/bin/ironic"]
CMD ["all-in-one"]

# driftfix: a static binary on an empty base, run as a non-root user. The
# root filesystem can be read-only: state lives on the volume at /var/lib/driftfix.
#   docker build --build-arg VERSION=$(git describe --tags --always) --build-arg REVISION=$(git rev-parse HEAD) -t driftfix/driftfix:dev .
# The binary carries Go's time zone database (time/tzdata), so a policy's
# quietHours.timezone works on the empty base.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG REVISION=""
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION} -X main.revision=${REVISION}" -o /out/driftfix ./cmd/driftfix \
 && /out/driftfix version \
 && mkdir -p /out/var/lib/driftfix /out/etc \
 && echo "driftfix:x:65532:65532:driftfix:/var/lib/driftfix:/sbin/nologin" > /out/etc/passwd \
 && echo "driftfix:x:65532:" > /out/etc/group

FROM scratch
ARG VERSION=dev
ARG REVISION=""
LABEL org.opencontainers.image.title="driftfix" \
      org.opencontainers.image.description="Finds why Argo CD applications stay OutOfSync and opens pull requests with the narrowest fix" \
      org.opencontainers.image.source="https://github.com/driftfix/driftfix" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/etc/passwd /out/etc/group /etc/
COPY --from=build --chown=65532:65532 /out/var/lib/driftfix /var/lib/driftfix
COPY --from=build /out/driftfix /usr/local/bin/driftfix
USER 65532:65532
VOLUME /var/lib/driftfix
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/driftfix"]
CMD ["run", "--config=/etc/driftfix/driftfix.yaml"]

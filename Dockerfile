# syntax=docker/dockerfile:1
# Every program's image, one target each, all on the same layers: a node that runs several pulls the
# bytes once (Node once), and the images differ only in ENTRYPOINT, USER and EXPOSE.
#   docker build --target kube-dns -t kube-dns-ts/kube-dns:0.1.0 .
#   docker build --target dnsmasq-nanny -t kube-dns-ts/dnsmasq-nanny:0.1.0 .
#   docker build --target dnscache -t kube-dns-ts/dnscache:0.1.0 .
#   docker build --target sidecar -t kube-dns-ts/sidecar:0.1.0 .
#   docker build --target node-cache -t kube-dns-ts/node-cache:0.1.0 .
# Stages, base images, the file capability and the sizes: manifests/README.md ("Images").

ARG BUILD_IMAGE=node:24-bookworm-slim
ARG RUNTIME_IMAGE=gcr.io/distroless/nodejs24-debian12:nonroot

# Compile TypeScript to dist/, and bundle the one class of @kubernetes/client-node kube-dns loads
# (build/bundle-client-node.ts). --ignore-scripts: `prepare` would run tsc before the sources are here,
# and the devDependency `node` would download a second Node; tsc runs on this image's Node 24.
FROM ${BUILD_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json tsconfig.json tsconfig.base.json ./
RUN npm ci --ignore-scripts
COPY build ./build
RUN node build/bundle-client-node.ts /src/client-node
COPY cmd ./cmd
COPY pkg ./pkg
RUN npm run build

# The dependencies the programs import at run time, and nothing else; client-node (and what only it
# needs, ~86 MB) gives way to the bundle.
FROM ${BUILD_IMAGE} AS prod-deps
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm uninstall --no-save --omit=dev --ignore-scripts @kubernetes/client-node
COPY --from=build /src/client-node ./node_modules/@kubernetes/client-node

FROM ${RUNTIME_IMAGE} AS runtime

# The runtime's root filesystem, once, with two changes. Its node gets cap_net_bind_service: dnscache,
# and kube-dns given CoreDNS's -conf, bind port 53 as a non-root user, and Kubernetes' capabilities.add
# NET_BIND_SERVICE reaches a non-root process only through a file capability on the executable (as
# CoreDNS's image sets on its binary); so every container that runs it keeps NET_BIND_SERVICE in its
# bounding set, or the kernel refuses to start it. And node-cache's tools: ip, iptables (nf_tables),
# nft, and cat for its readiness probe, with the libraries the runtime lacks, taken from Debian's
# packages as the runtime's own are (extracted, no maintainer scripts), iptables' names linked as
# update-alternatives would, each tool run once here so a missing library fails the build.
FROM ${BUILD_IMAGE} AS root
RUN apt-get update \
 && apt-get install -y --no-install-recommends libcap2-bin \
 && mkdir /debs && cd /debs \
 && apt-get download coreutils iproute2 iptables nftables libbpf1 libbsd0 libcap2 libcom-err2 libdb5.3 \
      libedit2 libelf1 libgmp10 libgssapi-krb5-2 libip4tc2 libip6tc2 libjansson4 libk5crypto3 libkeyutils1 \
      libkrb5-3 libkrb5support0 libmd0 libmnl0 libnetfilter-conntrack3 libnfnetlink0 libnftables1 libnftnl11 \
      libpcre2-8-0 libselinux1 libtinfo6 libtirpc-common libtirpc3 libxtables12 zlib1g \
 && rm -rf /var/lib/apt/lists/*
COPY --from=runtime / /rootfs/
RUN setcap cap_net_bind_service=+ep /rootfs/nodejs/bin/node \
 && dpkg-deb -x /debs/coreutils_*.deb /coreutils && rm /debs/coreutils_*.deb \
 && mkdir /tools && for deb in /debs/*.deb; do dpkg-deb -x "$deb" /tools; done \
 && rm -rf /tools/usr/share/doc /tools/usr/share/man /tools/usr/share/locale /tools/usr/share/info \
 && tar -C /tools -cf - . | tar -C /rootfs -xf - --keep-directory-symlink --skip-old-files \
 && cp /coreutils/bin/cat /rootfs/usr/bin/cat \
 && for name in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do \
      ln -sf xtables-nft-multi "/rootfs/usr/sbin/$name"; done \
 && chroot /rootfs cat /etc/os-release >/dev/null \
 && chroot /rootfs ip -V && chroot /rootfs iptables -V && chroot /rootfs ip6tables -V && chroot /rootfs nft -v

# What every target is: the root above as one layer, then node_modules, dist and package.json.
FROM scratch AS programs
COPY --from=root /rootfs/ /
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
WORKDIR /app
COPY --from=prod-deps /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY package.json ./
USER 65532:65532

# Each program: the Node flags of its bin's shebang (small young generation, size over speed).
FROM programs AS sidecar
EXPOSE 10054/tcp
ENTRYPOINT ["/nodejs/bin/node", "--max-semi-space-size=2", "--optimize-for-size", "/app/dist/cmd/sidecar/main.js"]

FROM programs AS dnscache
EXPOSE 53/udp 53/tcp
ENTRYPOINT ["/nodejs/bin/node", "--max-semi-space-size=2", "--optimize-for-size", "/app/dist/cmd/dnscache/main.js"]

# dnsmasq-nanny with its default child, dnscache, run by the same node. Real dnsmasq is not here
# (manifests/README.md says how to add it).
FROM programs AS dnsmasq-nanny
EXPOSE 53/udp 53/tcp 10056/tcp
ENTRYPOINT ["/nodejs/bin/node", "--max-semi-space-size=2", "--optimize-for-size", "/app/dist/cmd/dnsmasq-nanny/main.js"]

# NodeLocal DNSCache: root, as the original's image, for its interface and netfilter rules
# (manifests/optional/node-local-dns.yaml: hostNetwork, NET_ADMIN).
FROM programs AS node-cache
USER 0:0
EXPOSE 53/udp 53/tcp 8080/tcp 9253/tcp 9353/tcp
ENTRYPOINT ["/nodejs/bin/node", "--max-semi-space-size=2", "--optimize-for-size", "/app/dist/cmd/node-cache/main.js"]

# The default target, last.
FROM programs AS kube-dns
EXPOSE 10053/udp 10053/tcp 8081/tcp 53/udp 53/tcp 8080/tcp 8181/tcp 9153/tcp
ENTRYPOINT ["/nodejs/bin/node", "--max-semi-space-size=2", "--optimize-for-size", "/app/dist/cmd/kube-dns/main.js"]

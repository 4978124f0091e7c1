#!/usr/bin/env bash
# Starts the end-to-end stack on 127.0.0.1 inside its own network namespace:
# etcd, kube-apiserver, kube-controller-manager, Redis, and Argo CD's
# repo-server, application-controller and server (with real authentication).
# Writes run/kubeconfig (cluster admin) and run/argocd-token (a read-only
# local account "driftfix" with an API key), run/kubeconfig-alice (a person,
# client certificate user alice, with no rights until a scenario binds some),
# and run/audit-token (the bearer token the API server's audit webhook sends
# to https://127.0.0.1:9471/audit). Stop it with down.sh.
# DRIFTFIX_NETNS names the network namespace (default driftfix-e2e).
set -euo pipefail
K=$(cd "$(dirname "$0")" && pwd)
R=$K/run
NETNS=${DRIFTFIX_NETNS:-driftfix-e2e}
NS="ip netns exec $NETNS"
B=$K/bin
A=$(cd "$K" && GOTOOLCHAIN=go1.27.3 go list -m -f '{{.Dir}}' github.com/argoproj/argo-cd/v3)

for b in etcd kube-apiserver kube-controller-manager kubectl argocd helm; do
  [ -x "$B/$b" ] || { echo "up.sh: $B/$b is missing: run e2e/stack/build.sh first" >&2; exit 1; }
done
command -v redis-server >/dev/null || { echo "up.sh: redis-server is missing (apt-get install redis-server)" >&2; exit 1; }
command -v openssl >/dev/null || { echo "up.sh: openssl is missing" >&2; exit 1; }

[ -e "$R/etcd.pid" ] && "$K/down.sh" >/dev/null 2>&1 || true
rm -rf "$R"; mkdir -p "$R/pki" "$R/logs"
# The namespace is removed by down.sh only when this script made it: one that
# was there already (another user's, or made by hand) is left alone.
if ! ip netns list | awk '{print $1}' | grep -qxF "$NETNS"; then
  ip netns add "$NETNS"; $NS ip link set lo up
  echo "$NETNS" >"$R/netns-created"
fi

start=$(date +%s.%N)
since() { echo "$(echo "$(date +%s.%N) - $1" | bc)"; }
wait_http() { # url [curl options...]
  local u=$1; shift
  for _ in $(seq 1 1200); do $NS curl -sf "$@" "$u" >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "up.sh: timed out waiting for $u" >&2; return 1
}
bg() { # name command...: run in the namespace, log and remember the pid
  local name=$1; shift
  $NS "$@" >"$R/logs/$name.log" 2>&1 &
  echo $! >"$R/$name.pid"
}

# --- certificates (CA, apiserver and webhook serving, admin client, SA keys)
P=$R/pki
(
  cd "$P"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 30 -subj "/CN=driftfix-e2e-ca" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
  for n in apiserver webhook; do
    openssl req -newkey rsa:2048 -nodes -keyout $n.key -out $n.csr -subj "/CN=$n" 2>/dev/null
    printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc\n' > $n.ext
    openssl x509 -req -in $n.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out $n.crt -days 30 -extfile $n.ext 2>/dev/null
  done
  openssl req -newkey rsa:2048 -nodes -keyout admin.key -out admin.csr -subj "/O=system:masters/CN=admin" 2>/dev/null
  printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n' > client.ext
  openssl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out admin.crt -days 30 -extfile client.ext 2>/dev/null
  openssl genrsa -out sa.key 2048 2>/dev/null; openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
  # a person of the cluster (client certificate user alice), for the audit scenarios
  openssl req -newkey rsa:2048 -nodes -keyout alice.key -out alice.csr -subj "/O=e2e-people/CN=alice" 2>/dev/null
  openssl x509 -req -in alice.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out alice.crt -days 30 -extfile client.ext 2>/dev/null
)
cat >"$R/kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster: {server: https://127.0.0.1:6443, certificate-authority: $P/ca.crt}
users:
- name: admin
  user: {client-certificate: $P/admin.crt, client-key: $P/admin.key}
contexts:
- name: e2e
  context: {cluster: e2e, user: admin}
current-context: e2e
KC
sed -e "s|name: admin|name: alice|; s|admin.crt|alice.crt|; s|admin.key|alice.key|; s|user: admin|user: alice|" "$R/kubeconfig" >"$R/kubeconfig-alice"

# --- audit: the API server sends every write (Metadata level) to driftfix's
# audit endpoint on https://127.0.0.1:9471 (served with pki/webhook.crt) in
# batches, with the bearer token in run/audit-token (client-go sends a token
# only over TLS). Nothing listens there unless a
# scenario starts it: batch mode drops what it cannot deliver after a short
# retry and never holds a request, so other scenarios are not slowed.
AUDIT_TOKEN=$(head -c 24 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
(umask 077; printf '%s' "$AUDIT_TOKEN" >"$R/audit-token")
cat >"$R/audit-policy.yaml" <<'POLICY'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  verbs: [get, list, watch]
- level: None
  resources:
  - {group: coordination.k8s.io, resources: [leases]}
  - {group: "", resources: [events]}
  - {group: events.k8s.io, resources: [events]}
  - {group: authentication.k8s.io}
  - {group: authorization.k8s.io}
- level: Metadata
POLICY
(umask 077; cat >"$R/audit-webhook.kubeconfig" <<AUDITKC
apiVersion: v1
kind: Config
clusters:
- name: driftfix
  cluster: {server: https://127.0.0.1:9471/audit, certificate-authority: $P/ca.crt}
users:
- name: kube-apiserver
  user: {token: $AUDIT_TOKEN}
contexts:
- name: audit
  context: {cluster: driftfix, user: kube-apiserver}
current-context: audit
AUDITKC
)
AUDIT_FLAGS=(--audit-policy-file="$R/audit-policy.yaml" --audit-webhook-config-file="$R/audit-webhook.kubeconfig"
  --audit-webhook-mode=batch --audit-webhook-batch-max-wait=1s --audit-webhook-initial-backoff=200ms)

export KUBECONFIG=$R/kubeconfig
KC="$NS $B/kubectl"

t=$(date +%s.%N)
bg etcd "$B/etcd" --name default --data-dir "$R/etcd-data" \
  --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
  --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
  --initial-cluster default=http://127.0.0.1:2380 --listen-metrics-urls http://127.0.0.1:2381 --unsafe-no-fsync
wait_http http://127.0.0.1:2379/health; echo "etcd ready in $(since $t)s"

t=$(date +%s.%N)
bg kube-apiserver "$B/kube-apiserver" --etcd-servers=http://127.0.0.1:2379 \
  --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port=6443 \
  --tls-cert-file="$P/apiserver.crt" --tls-private-key-file="$P/apiserver.key" --client-ca-file="$P/ca.crt" \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-account-key-file="$P/sa.pub" --service-account-signing-key-file="$P/sa.key" \
  --service-cluster-ip-range=10.0.0.0/24 --endpoint-reconciler-type=none \
  --authorization-mode=Node,RBAC --allow-privileged=true --cert-dir="$R/apiserver-certs" "${AUDIT_FLAGS[@]}"
wait_http https://127.0.0.1:6443/readyz --cacert "$P/ca.crt"; echo "kube-apiserver ready in $(since $t)s"

t=$(date +%s.%N)
bg kube-controller-manager "$B/kube-controller-manager" --kubeconfig="$KUBECONFIG" \
  --authentication-kubeconfig="$KUBECONFIG" --authorization-kubeconfig="$KUBECONFIG" \
  --bind-address=127.0.0.1 --secure-port=10257 --leader-elect=false \
  --service-account-private-key-file="$P/sa.key" --root-ca-file="$P/ca.crt" \
  --cluster-signing-cert-file="$P/ca.crt" --cluster-signing-key-file="$P/ca.key" \
  --controllers='*,-nodeipam,-nodelifecycle' --horizontal-pod-autoscaler-sync-period=5s --cert-dir="$R/kcm-certs"
wait_http https://127.0.0.1:10257/healthz -k; echo "kube-controller-manager healthy in $(since $t)s"

bg redis redis-server --bind 127.0.0.1 --port 6379 --save "" --appendonly no --protected-mode yes

# --- Argo CD: CRDs, base config, a default project, and a read-only account
t=$(date +%s.%N)
$KC apply --server-side -f "$A/manifests/crds/application-crd.yaml" -f "$A/manifests/crds/appproject-crd.yaml" >/dev/null
# kubectl wait fails rather than waits while a new CRD has no status yet: retry.
for _ in $(seq 1 150); do
  $KC wait --for=condition=Established --timeout=20s crd/applications.argoproj.io crd/appprojects.argoproj.io >/dev/null 2>&1 && break
  sleep 0.2
done
$KC wait --for=condition=Established --timeout=20s crd/applications.argoproj.io crd/appprojects.argoproj.io >/dev/null
$KC create ns argocd >/dev/null
for f in argocd-cm argocd-rbac-cm argocd-secret argocd-cmd-params-cm argocd-ssh-known-hosts-cm argocd-tls-certs-cm argocd-gpg-keys-cm; do
  $KC -n argocd apply --server-side -f "$A/manifests/base/config/$f.yaml" >/dev/null
done
ADMIN_PW=$(head -c 18 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
HASH=$("$B/argocd" account bcrypt --password "$ADMIN_PW")
$KC -n argocd patch secret argocd-secret --type merge -p "{\"stringData\":{\"admin.password\":\"$HASH\",\"admin.passwordMtime\":\"$(date -u +%FT%TZ)\",\"server.secretkey\":\"$(head -c 32 /dev/urandom | base64)\"}}" >/dev/null
$KC -n argocd patch configmap argocd-cm --type merge -p '{"data":{"accounts.driftfix":"apiKey","timeout.reconciliation":"10s"}}' >/dev/null
$KC -n argocd patch configmap argocd-rbac-cm --type merge -p '{"data":{"policy.csv":"p, driftfix, applications, get, */*, allow\n"}}' >/dev/null
$KC apply -f - >/dev/null <<PROJ
apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {name: default, namespace: argocd}
spec:
  sourceRepos: ['*']
  destinations: [{namespace: '*', server: '*'}]
  clusterResourceWhitelist: [{group: '*', kind: '*'}]
PROJ
echo "Argo CD config applied in $(since $t)s"

mkdir -p "$R/argocd-local/tls" "$R/argocd-local/ssh" "$R/argocd-local/gpg/keys" "$R/argocd-local/gpg/source" "$R/helpers"
cp "$A/hack/git-verify-wrapper.sh" "$A/hack/gpg-wrapper.sh" "$R/helpers/" && chmod 755 "$R/helpers/"*.sh
ln -sf "$B/helm" "$R/helpers/helm"
export ARGOCD_FAKE_IN_CLUSTER=true ARGOCD_GPG_ENABLED=false \
  ARGOCD_TLS_DATA_PATH=$R/argocd-local/tls ARGOCD_SSH_DATA_PATH=$R/argocd-local/ssh \
  ARGOCD_GNUPGHOME=$R/argocd-local/gpg/keys ARGOCD_GPG_DATA_PATH=$R/argocd-local/gpg/source
t=$(date +%s.%N)
PATH=$R/helpers:$PATH ARGOCD_BINARY_NAME=argocd-repo-server bg repo-server "$B/argocd" --address 127.0.0.1 --port 8081 \
  --metrics-address 127.0.0.1 --metrics-port 8084 --redis 127.0.0.1:6379
wait_http http://127.0.0.1:8084/metrics; echo "argocd-repo-server up in $(since $t)s"
t=$(date +%s.%N)
ARGOCD_BINARY_NAME=argocd-application-controller bg app-controller "$B/argocd" --kubeconfig "$KUBECONFIG" --namespace argocd \
  --redis 127.0.0.1:6379 --repo-server 127.0.0.1:8081 --commit-server 127.0.0.1:8086 --metrics-port 8082 \
  --app-resync 10 --self-heal-timeout-seconds 2
wait_http http://127.0.0.1:8082/healthz; echo "argocd-application-controller healthy in $(since $t)s"
t=$(date +%s.%N)
ARGOCD_BINARY_NAME=argocd-server bg argocd-server "$B/argocd" --kubeconfig "$KUBECONFIG" --namespace argocd \
  --redis 127.0.0.1:6379 --repo-server 127.0.0.1:8081 --address 127.0.0.1 --port 8080 \
  --metrics-address 127.0.0.1 --metrics-port 8083 --insecure --dex-server http://127.0.0.1:5556
wait_http http://127.0.0.1:8080/healthz; echo "argocd-server healthy in $(since $t)s"

# --- an API token for the read-only account, through the REST API
SESSION=$($NS curl -sf -X POST -H 'Content-Type: application/json' -d "{\"username\":\"admin\",\"password\":\"$ADMIN_PW\"}" http://127.0.0.1:8080/api/v1/session | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
for _ in $(seq 1 50); do
  TOKEN=$($NS curl -sf -X POST -H 'Content-Type: application/json' -H "Authorization: Bearer $SESSION" -d '{"id":"e2e"}' \
    http://127.0.0.1:8080/api/v1/account/driftfix/token 2>/dev/null | sed -n 's/.*"token":"\([^"]*\)".*/\1/p') && [ -n "$TOKEN" ] && break
  sleep 0.2
done
[ -n "${TOKEN:-}" ] || { echo "up.sh: could not create the driftfix account token" >&2; exit 1; }
umask 077; printf '%s' "$TOKEN" >"$R/argocd-token"
# the admin's session, for tests that act as a person with the argocd CLI (argocd app diff needs projects, get)
printf '%s' "$SESSION" >"$R/argocd-admin-session"
echo "stack up in $(since $start)s (netns $NETNS; kubeconfig $R/kubeconfig; token $R/argocd-token)"

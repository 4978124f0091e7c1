package audit

import (
	"crypto/subtle"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"
)

// DefaultMaxBody bounds one batch the API server posts: its default batch
// of 400 events at Metadata level is well under 1 MiB.
const DefaultMaxBody = 8 << 20

// Handler serves the API server's audit webhook backend
// (--audit-webhook-config-file): POST, an audit.k8s.io/v1 EventList in
// JSON, authenticated by a bearer token (the token of the kubeconfig's
// user) or by a client certificate the server's TLS configuration verified
// and ClientCert accepts. The API server sends either only over HTTPS. Each
// refusal's body says why; the API server retries a batch it could not
// deliver.
type Handler struct {
	// Token is the shared bearer token, read when a request comes (a
	// rotated file needs no restart); "" accepts no token.
	Token func() string
	// ClientCert, when set, accepts a request whose client certificate the
	// TLS server verified (tls.Config.ClientCAs) if it approves the
	// certificate's subject common name.
	ClientCert func(commonName string) bool
	// MaxBody bounds a request's body (default DefaultMaxBody): larger is 413.
	MaxBody int64
	// Store keeps the writes.
	Store *Store
	// Log gets a line per refused request and per batch (nil: discard).
	Log *slog.Logger
	// Seen, when set, is told what became of each request (kept, refused,
	// unauthorized, ...).
	Seen func(outcome string)
}

func (h *Handler) log() *slog.Logger {
	if h.Log == nil {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return h.Log
}

func (h *Handler) seen(outcome string) {
	if h.Seen != nil {
		h.Seen(outcome)
	}
}

// authorized reports whether the request carries the bearer token or a
// verified client certificate ClientCert approves.
func (h *Handler) authorized(r *http.Request) bool {
	if h.ClientCert != nil && r.TLS != nil && len(r.TLS.VerifiedChains) > 0 && len(r.TLS.VerifiedChains[0]) > 0 &&
		h.ClientCert(r.TLS.VerifiedChains[0][0].Subject.CommonName) {
		return true
	}
	if h.Token == nil {
		return false
	}
	want := h.Token()
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// ServeHTTP takes one batch.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "audit events are POSTed", http.StatusMethodNotAllowed)
		h.seen("refused")
		return
	}
	if !h.authorized(r) {
		h.log().Warn("audit events refused: no valid bearer token or client certificate", "remote", r.RemoteAddr)
		http.Error(w, "audit events need the bearer token of the audit webhook's kubeconfig or an accepted client certificate", http.StatusUnauthorized)
		h.seen("unauthorized")
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			http.Error(w, "audit events are JSON (Content-Type application/json), not "+ct, http.StatusUnsupportedMediaType)
			h.seen("refused")
			return
		}
	}
	max := h.MaxBody
	if max <= 0 {
		max = DefaultMaxBody
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			h.log().Warn("audit batch refused: larger than --audit-max-body", "max_bytes", max)
			http.Error(w, "the batch is larger than driftfix reads (--audit-max-body); lower the API server's --audit-webhook-batch-max-size", http.StatusRequestEntityTooLarge)
			h.seen("too-large")
			return
		}
		http.Error(w, "read the batch: "+err.Error(), http.StatusBadRequest)
		h.seen("refused")
		return
	}
	events, err := Decode(body)
	if err != nil {
		h.log().Warn("audit batch refused", "error", err.Error())
		http.Error(w, err.Error(), http.StatusBadRequest)
		h.seen("refused")
		return
	}
	kept := h.Store.Add(events)
	h.log().Debug("audit batch", "events", len(events), "writes_kept", kept)
	h.seen("kept")
	w.WriteHeader(http.StatusOK)
}

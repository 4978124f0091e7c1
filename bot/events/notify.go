package events

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// NotifyHeader is the header Argo CD Notifications' webhook service sends
// the shared secret in (deploy/argocd/notifications-cm-patch.yaml).
const NotifyHeader = "X-Driftfix-Secret"

// maxNotifyBody bounds a notification's body: the template sends a few
// short fields.
const maxNotifyBody = 64 << 10

// Notification is the body deploy/argocd's template has Argo CD
// Notifications send when an application's sync succeeded or it turned
// OutOfSync.
type Notification struct {
	// Instance names the Argo CD instance (the policy's argocd entry); it
	// may be left out when the policy has one.
	Instance  string `json:"instance"`
	App       string `json:"app"`
	Namespace string `json:"namespace"`
	// SyncStatus is the application's sync status when Argo CD sent it.
	SyncStatus string `json:"syncStatus"`
	// FinishedAt is when its last operation finished (RFC 3339).
	FinishedAt string `json:"finishedAt"`
	// Trigger names the trigger that sent it, for the log.
	Trigger string `json:"trigger"`
}

// Notifications serves Argo CD Notifications' webhook: a POST whose
// NotifyHeader carries the shared secret and whose body is a
// Notification becomes App work for that application, for installations
// that cannot hold the watch stream open. A wrong or missing secret is
// refused with 401 before the body is read.
type Notifications struct {
	// Secret is the shared secret, read at each notification; empty
	// refuses them all.
	Secret func() string
	// Instances returns the instances' names (a reloaded policy may change
	// them); a notification naming none of them is refused; with one, a
	// notification may leave it out.
	Instances func() []string
	// Queue receives the work.
	Queue *Queue
	// Log gets a line per refusal (nil: discard).
	Log *slog.Logger
	// Seen, when set, is told the outcome of each notification.
	Seen func(event, outcome string)
}

func (n *Notifications) refuse(w http.ResponseWriter, code int, outcome, msg string) {
	if n.Seen != nil {
		n.Seen("argocd", outcome)
	}
	if n.Log != nil {
		n.Log.Warn("Argo CD notification refused", "status", code, "problem", msg)
	}
	http.Error(w, msg, code)
}

// ServeHTTP answers one notification.
func (n *Notifications) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		n.refuse(w, http.StatusMethodNotAllowed, "refused", "Argo CD notifications are POSTed here")
		return
	}
	secret := ""
	if n.Secret != nil {
		secret = n.Secret()
	}
	if secret == "" {
		n.refuse(w, http.StatusServiceUnavailable, "refused", "driftfix has no notification secret to check notifications with")
		return
	}
	got := r.Header.Get(NotifyHeader)
	if got == "" {
		n.refuse(w, http.StatusUnauthorized, "unsigned", "the notification has no "+NotifyHeader+" header: set it in the webhook service of argocd-notifications-cm")
		return
	}
	if subtle.ConstantTimeCompare([]byte(got), []byte(secret)) != 1 {
		n.refuse(w, http.StatusUnauthorized, "forged", NotifyHeader+" does not match the notification secret driftfix reads")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxNotifyBody))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		n.refuse(w, http.StatusRequestEntityTooLarge, "refused", fmt.Sprintf("the notification is larger than %d bytes", maxNotifyBody))
		return
	case err != nil:
		n.refuse(w, http.StatusBadRequest, "refused", "read the notification: "+err.Error())
		return
	}
	wk, err := n.work(body)
	if err != nil {
		n.refuse(w, http.StatusBadRequest, "refused", err.Error())
		return
	}
	if wk.Kind == "" {
		if n.Seen != nil {
			n.Seen("argocd", "ignored")
		}
		w.WriteHeader(http.StatusAccepted)
		fmt.Fprintln(w, "ignored: the application is not OutOfSync after a successful sync")
		return
	}
	o, err := n.Queue.Add(wk)
	if err != nil {
		n.refuse(w, http.StatusServiceUnavailable, "full", err.Error()+": the next cycle catches up")
		return
	}
	if n.Seen != nil {
		n.Seen("argocd", string(o))
	}
	w.WriteHeader(http.StatusAccepted)
	fmt.Fprintf(w, "%s: %s\n", o, wk.String())
}

// work reads a notification's body into the work it asks for (none when
// the application is not OutOfSync).
func (n *Notifications) work(body []byte) (Work, error) {
	var nt Notification
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&nt); err != nil {
		return Work{}, fmt.Errorf("the notification is not the JSON deploy/argocd's template sends: %w", err)
	}
	if nt.App == "" || nt.Namespace == "" {
		return Work{}, errors.New("the notification names no application: want app and namespace")
	}
	inst := nt.Instance
	var names []string
	if n.Instances != nil {
		names = n.Instances()
	}
	switch {
	case inst == "" && len(names) == 1:
		inst = names[0]
	case inst == "":
		return Work{}, fmt.Errorf("the notification names no instance: driftfix watches %d; add instance to the template", len(names))
	default:
		known := false
		for _, i := range names {
			known = known || i == inst
		}
		if !known {
			return Work{}, fmt.Errorf("instance %q is not an argocd entry of the policy", inst)
		}
	}
	if nt.SyncStatus != "OutOfSync" {
		return Work{}, nil
	}
	var at time.Time
	if nt.FinishedAt != "" {
		t, err := time.Parse(time.RFC3339, nt.FinishedAt)
		if err != nil {
			return Work{}, fmt.Errorf("finishedAt %q is not an RFC 3339 time", nt.FinishedAt)
		}
		at = t
	}
	via := "argocd notification"
	if nt.Trigger != "" {
		via += " " + nt.Trigger
	}
	return Work{Kind: App, App: inst + "/" + nt.Namespace + "/" + nt.App, At: at, Delivery: via}, nil
}

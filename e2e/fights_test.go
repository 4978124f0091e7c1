//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/driftfix/driftfix/bot/slack"
)

// TestFightHPAAgainstSelfHeal: Git declares replicas 2, an HPA's minimum is 4,
// and the Application has self-heal on. The HPA controller (in
// kube-controller-manager) and Argo CD's self-heal take turns at
// /spec/replicas, so Argo CD syncs the same revision again and again and the
// application flips between Synced and OutOfSync. driftfix once, run over a
// few cycles, reports it in the digest as a fight naming both writers and the
// cost, once.
func TestFightHPAAgainstSelfHeal(t *testing.T) {
	s := newStack(t)
	env := newBotEnvWith(t, s, "e2e-fight", "driftfix.db", hpaApp)
	raw, err := os.ReadFile(env.cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg := strings.Replace(string(raw), "policy: {stuckAfter: 1s, minStuckFor: 0s, labels: [driftfix]}",
		"policy: {stuckAfter: 1s, minStuckFor: 0s, labels: [driftfix], fights: {maxSelfHealSyncsPerHour: 2}}", 1)
	if cfg == string(raw) {
		t.Fatal("the e2e policy line changed; update this test")
	}
	if err := os.WriteFile(env.cfg, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	once := func() string {
		t.Helper()
		cmd := exec.Command(env.bin, "once", "--config", env.cfg)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		if code := cmd.ProcessState.ExitCode(); code != 0 && code != 1 {
			t.Fatalf("driftfix once: %v\n%s\n%s", err, out.String(), errb.String())
		}
		return out.String() + errb.String()
	}
	const name = "e2e-fight"
	s.hpaDrift(t, name, env.repo)
	s.kubectl(t, "", "-n", "argocd", "patch", "application", name, "--type", "merge",
		"-p", `{"spec":{"syncPolicy":{"automated":{"prune":true,"selfHeal":true}}}}`)
	// argocd-server serves only the list fields it knows: the list must still
	// tell driftfix the repository and that self-heal is on.
	listed := false
	for deadline := time.Now().Add(30 * time.Second); !listed && time.Now().Before(deadline); time.Sleep(time.Second) {
		apps, err := s.argo.ListApplications(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range apps {
			if a.Name == name && a.SelfHeal {
				if a.RepoURL != env.repo {
					t.Fatalf("the list gave repository %q, want %q", a.RepoURL, env.repo)
				}
				listed = true
			}
		}
	}
	if !listed {
		t.Fatal("the list never said self-heal is on")
	}

	// Wait until Argo CD counts three self-heal syncs in a row (its backoff
	// spaces them out). Self-heal syncs only the differing resources, which
	// status.history does not record: the count is the last operation's.
	var syncs int
	for deadline := time.Now().Add(4 * time.Minute); time.Now().Before(deadline); time.Sleep(5 * time.Second) {
		syncs, _ = strconv.Atoi(s.kubectl(t, "", "-n", "argocd", "get", "application", name, "-o", "jsonpath={.status.operationState.operation.sync.autoHealAttemptsCount}"))
		if syncs >= 3 {
			break
		}
	}
	if syncs < 3 {
		t.Fatalf("Argo CD counted %d self-heal syncs in 4 minutes; self-heal did not fight the HPA", syncs)
	}
	var lines []string
	var logs strings.Builder
	for i := 0; i < 4; i++ {
		logs.WriteString(once())
		time.Sleep(10 * time.Second)
	}
	for _, p := range env.sl.Posts() {
		var atts []slack.Attachment
		if err := json.Unmarshal([]byte(p["attachments"]), &atts); err != nil {
			t.Fatal(err)
		}
		for _, a := range atts {
			for _, bl := range a.Blocks {
				tx, _ := bl["text"].(map[string]any)
				text, _ := tx["text"].(string)
				for _, l := range strings.Split(text, "\n") {
					if strings.Contains(l, "take turns") {
						lines = append(lines, l)
					}
				}
			}
		}
	}
	t.Logf("fight lines: %q", lines)
	if len(lines) != 1 {
		t.Fatalf("the fight is told %d times in the digests, want once\n%s", len(lines), logs.String())
	}
	for _, want := range []string{"`argocd-controller` and `kube-controller-manager` take turns at `/spec/replicas`", "self-heal syncs of one revision", "`hpa-replicas`"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("the fight's line lacks %q:\n%s", want, lines[0])
		}
	}
}

package config

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// TestForRepo: a repository's file decides, under the central policy, only
// what the central policy lets it; labels and reviewers add, a quiet window
// adds, sign-off set centrally stays on, and a file setting a key the
// central policy does not allow is not used at all.
func TestForRepo(t *testing.T) {
	central := func(extra string) Policy {
		c, err := Parse([]byte("argocd: [{server: https://a.example.com, tokenFile: t}]\npolicy:\n  labels: [driftfix]\n  reviewers: [platform]\n" + extra))
		if err != nil {
			t.Fatal(err)
		}
		return c.Policy
	}
	night := time.Date(2026, 1, 1, 23, 30, 0, 0, time.UTC)
	noon := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, central, own string
		want               RepoPolicy
		quietAt            []time.Time // times that must be quiet
		loudAt             []time.Time // times that must not be
	}{
		{name: "no file", own: "-",
			want:   RepoPolicy{Labels: []string{"driftfix"}, Reviewers: []string{"platform"}, TitleStyle: TitleAuto, Fixes: true, Predict: true},
			loudAt: []time.Time{night, noon}},
		{name: "everything a repository may set",
			own: "labels: [gitops, team-shop]\nreviewers: [alice, acme/sre]\nquietHours: {from: '22:00', to: '07:00'}\ntitleStyle: conventional\nsignOff: true\nfixes: false\npredict: false\n",
			want: RepoPolicy{Labels: []string{"driftfix", "gitops", "team-shop"}, Reviewers: []string{"platform", "alice", "acme/sre"}, TitleStyle: TitleConventional,
				SignOff: true, Fixes: false, Predict: false, Own: true},
			quietAt: []time.Time{night}, loudAt: []time.Time{noon}},
		{name: "central sign-off stays on", central: "  signOff: true\n  titleStyle: plain\n", own: "signOff: false\n",
			want: RepoPolicy{Labels: []string{"driftfix"}, Reviewers: []string{"platform"}, TitleStyle: TitlePlain, SignOff: true, Fixes: true, Predict: true, Own: true}},
		{name: "central quiet hours stay", central: "  quietHours: {from: '11:00', to: '13:00'}\n", own: "quietHours: {from: '22:00', to: '07:00'}\n",
			want:    RepoPolicy{Labels: []string{"driftfix"}, Reviewers: []string{"platform"}, TitleStyle: TitleAuto, Fixes: true, Predict: true, Own: true},
			quietAt: []time.Time{night, noon}},
		{name: "a key not allowed: the file is not used", central: "  repoFile: {allow: [labels]}\n", own: "labels: [x]\npredict: false\n",
			want: RepoPolicy{Labels: []string{"driftfix"}, Reviewers: []string{"platform"}, TitleStyle: TitleAuto, Fixes: true, Predict: true}},
		{name: "files not read", central: "  repoFile: {allow: []}\n", own: "labels: [x]\n",
			want: RepoPolicy{Labels: []string{"driftfix"}, Reviewers: []string{"platform"}, TitleStyle: TitleAuto, Fixes: true, Predict: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var own *RepoFile
			if tc.own != "-" {
				var err error
				if own, err = ParseRepoFile([]byte(tc.own)); err != nil {
					t.Fatal(err)
				}
			}
			got := central(tc.central).ForRepo("acme/shop", own)
			tc.want.Repo = "acme/shop"
			quiet := got.quiet
			got.quiet = nil
			if !equalRepoPolicy(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
			got.quiet = quiet
			for _, at := range tc.quietAt {
				if !got.Quiet(at) {
					t.Errorf("%s must be quiet", at.Format("15:04"))
				}
			}
			for _, at := range tc.loudAt {
				if got.Quiet(at) {
					t.Errorf("%s must not be quiet", at.Format("15:04"))
				}
			}
		})
	}
}

func equalRepoPolicy(a, b RepoPolicy) bool {
	return a.Repo == b.Repo && slices.Equal(a.Labels, b.Labels) && slices.Equal(a.Reviewers, b.Reviewers) && a.TitleStyle == b.TitleStyle &&
		a.SignOff == b.SignOff && a.Fixes == b.Fixes && a.Predict == b.Predict && a.Own == b.Own
}

// TestReadRepoFileErrors: every problem of a repository's file names its key
// and line, and says why: a key the central policy keeps, a key it does not
// allow, an unknown key, a bad value.
func TestReadRepoFileErrors(t *testing.T) {
	c, err := Parse([]byte("argocd: [{server: https://a.example.com, tokenFile: t}]\npolicy:\n  repoFile: {allow: [labels, reviewers, titleStyle]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, in string
		want     []string // "line key: message part"
	}{
		{"central-only key", "labels: [a]\n\nsensitivePaths: [/spec]\n", []string{"line 3: sensitivePaths: a repository cannot decide it: the safety model"}},
		{"schedule", "schedule: '* * * * *'\n", []string{"line 1: schedule: a repository cannot decide it: the schedule is the bot's"}},
		{"under policy:", "policy:\n  labels: [a]\n", []string{"line 1: policy: a repository cannot decide it"}},
		{"not allowed", "labels: [a]\npredict: false\nsignOff: true\n", []string{
			"line 2: predict: the central policy does not let repositories set it (policy.repoFile.allow: labels, reviewers, titleStyle)",
			"line 3: signOff: the central policy does not let"}},
		{"unknown", "label: [a]\n", []string{"line 1: label: unknown key (a repository may set: labels, reviewers"}},
		{"bad values", "titleStyle: semantic\nreviewers: ['not a login']\nlabels: x\n", []string{
			`line 1: titleStyle: must be auto, conventional or plain, not "semantic"`,
			`line 2: reviewers[0]: "not a login" is not a GitHub login`,
			"line 3: labels: must be a list"}},
		{"fixes per cause", "fixes:\n  hpa-owns-replicas: []\n", []string{"line 2: fixes: a repository may only turn fix pull requests off"}},
		{"twice", "labels: [a]\nlabels: [b]\n", []string{"line 2: labels: appears twice"}},
		{"too many", "reviewers: [a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p]\n", []string{"line 1: reviewers: lists 16; a repository's file may list at most 15"}},
		{"an alias bomb", "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nlabels: *c\n", []string{"line 1: a: unknown key", "line 2: b: unknown key", "line 3: c: unknown key", "line 4: labels: must be a list"}},
		{"not YAML", "labels: [a\n", []string{"line 1: (file): not valid YAML"}},
		{"not a mapping", "- labels\n", []string{"line 1: (file): must be a mapping"}},
		{"driftfix's own labels", "labels: [gitops, driftfix/ignore, ' Driftfix ', DRIFTFIX/Stop]\n", []string{
			`line 1: labels[1]: "driftfix/ignore" is one of driftfix's own labels`,
			`line 1: labels[2]: " Driftfix " is one of driftfix's own labels`,
			`line 1: labels[3]: "DRIFTFIX/Stop" is one of driftfix's own labels`}},
		{"a second document", "labels: [a]\n---\npredict: false\n", []string{"line 2: (file): starts a second YAML document"}},
		{"a second, empty document", "labels: [a]\n\n...\n---\n", []string{"line 4: (file): starts a second YAML document"}},
		{"too big", "labels: [" + strings.Repeat("a,", 40000) + "a]\n", []string{"line 1: (file): is 80012 bytes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Policy.ReadRepoFile([]byte(tc.in))
			es, ok := err.(Errors)
			if !ok || len(es) != len(tc.want) {
				t.Fatalf("got %v, want %d problems: %q", err, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(es[i].Error(), w) {
					t.Errorf("problem %d: %q, want it to start %q", i, es[i].Error(), w)
				}
			}
		})
	}
	for _, empty := range []string{"", "\n# nothing yet\n", "---\n"} {
		own, err := c.Policy.ReadRepoFile([]byte(empty))
		if err != nil || own == nil {
			t.Errorf("%q: an empty file sets nothing, got %v", empty, err)
		}
	}
}

// TestRepoFileRulesErrors: policy.repoFile is the global policy's, and
// names only keys a repository's file can set.
func TestRepoFileRulesErrors(t *testing.T) {
	const head = "argocd: [{server: https://a.example.com, tokenFile: t}]\n"
	for _, tc := range []struct{ in, want string }{
		{"policy:\n  repoFile: {allow: [labels, dryRun]}\n", `line 3: policy.repoFile.allow[1]: "dryRun" is not a key a repository's file can set`},
		{"overrides:\n- match: {app: a}\n  policy: {repoFile: {allow: []}}\n", "line 4: overrides[0].policy.repoFile: is read from the global policy only"},
		{"policy:\n  titleStyle: Conventional\n", `line 3: policy.titleStyle: must be auto, conventional or plain, not "Conventional"`},
	} {
		_, err := Parse([]byte(head + tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.in, err, tc.want)
		}
	}
}

// FuzzParseRepoFile: any bytes a repository holds give a file or problems
// that each name a key, a line and a message; a parsed file always resolves,
// never adds one of driftfix's own labels, and was one YAML document.
func FuzzParseRepoFile(f *testing.F) {
	f.Add([]byte("labels: [gitops]\nreviewers: [alice, acme/sre]\nquietHours: {from: '22:00', to: '07:00', timezone: Europe/Berlin}\ntitleStyle: conventional\nsignOff: true\nfixes: false\npredict: false\n"))
	f.Add([]byte("schedule: '@daily'\npolicy: {labels: [a]}\n"))
	f.Add([]byte("labels: &a [x]\nreviewers: *a\n"))
	f.Add([]byte("fixes: {a: []}\n"))
	f.Add([]byte("labels: [driftfix/ignore]\n"))
	f.Add([]byte("labels: [a]\n---\nlabels: [driftfix/ignore]\n"))
	f.Add([]byte("---\nlabels: ['DriftFix/x ']\n...\n"))
	central := Defaults()
	f.Fuzz(func(t *testing.T, b []byte) {
		own, err := ParseRepoFile(b)
		if err != nil {
			es, ok := err.(Errors)
			if !ok || len(es) == 0 {
				t.Fatalf("error %T %v", err, err)
			}
			for _, e := range es {
				if e.Key == "" || e.Msg == "" || e.Line < 0 {
					t.Fatalf("problem without key, line or message: %+v", e)
				}
			}
			return
		}
		rp := central.ForRepo("o/r", own)
		if !slices.Contains(rp.Labels, "driftfix") {
			t.Fatalf("a repository's file removed a central label: %v", rp.Labels)
		}
		for _, l := range own.Labels {
			if ReservedLabel(l) {
				t.Fatalf("a repository's file added driftfix's own label %q", l)
			}
		}
		d := yaml.NewDecoder(bytes.NewReader(b))
		var n yaml.Node
		if d.Decode(&n) == nil && d.Decode(&n) == nil {
			t.Fatalf("a file of two YAML documents was read: %q", b)
		}
		rp.Quiet(time.Now())
	})
}

package render

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/driftfix/driftfix/remediations/render/internal/proc"
)

// probeEnv asks the test binary, started again, to take itself off the
// network as a render process does and then try the network and git.
const probeEnv = "DRIFTFIX_RENDER_TEST_PROBE"

// TestMain serves the render processes the tests start: the test binary is
// started again with childEnv set, and the package's init runs the render
// (the same entry point the driftfix binary serves) before TestMain is
// reached. Here it only answers the isolation probe.
func TestMain(m *testing.M) {
	if url := os.Getenv(probeEnv); url != "" {
		proc.Isolate()
		var out []string
		if _, err := http.Get(url); err != nil {
			out = append(out, "http: "+err.Error())
		}
		if _, err := (&http.Client{}).Get(url); err != nil {
			out = append(out, "client: "+err.Error())
		}
		if _, err := net.LookupHost("driftfix-probe.example.com"); err != nil {
			out = append(out, "dns: refused")
		}
		if _, err := exec.LookPath("git"); err != nil {
			out = append(out, "git: not found")
		}
		fmt.Print(strings.Join(out, "\n"))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// ordinary is a chart that renders one ConfigMap.
func ordinary() map[string][]byte {
	return chartFiles(map[string]string{"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  replicas: {{ 2 }}\n"})
}

// renderOrdinary checks that a render after a killed one still works.
func renderOrdinary(t *testing.T) {
	t.Helper()
	objs, err := Helm(ordinary(), HelmOptions{ChartDir: "c", ReleaseName: "r", Namespace: "n"})
	if err != nil {
		t.Fatalf("the next render: %v", err)
	}
	if len(objs) != 1 || objs[0]["metadata"].(map[string]any)["name"] != "r" || objs[0]["data"].(map[string]any)["replicas"] != int64(2) {
		t.Fatalf("the next render: %#v", objs)
	}
}

// TestRenderNeverRunsInTheBotsProcess: when no render process can be
// started the render fails saying so; it does not run in process instead.
func TestRenderNeverRunsInTheBotsProcess(t *testing.T) {
	defer func(e func() (string, error)) { proc.Executable = e }(proc.Executable)
	cases := []struct {
		name string
		exe  func() (string, error)
		want string
	}{
		{"no executable", func() (string, error) { return "", errors.New("no /proc") }, "find the binary to start a render process: no /proc"},
		{"executable gone", func() (string, error) { return "/nonexistent/driftfix", nil }, "start a render process (/nonexistent/driftfix)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			proc.Executable = c.exe
			objs, err := Helm(ordinary(), HelmOptions{ChartDir: "c", ReleaseName: "r", Namespace: "n"})
			if err == nil || objs != nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "chart c") {
				t.Fatalf("objs, err = %v, %v; want no objects and an error saying %q", objs, err, c.want)
			}
			_, err = Kustomize(map[string][]byte{"app/kustomization.yaml": []byte("namePrefix: a-\n")}, "app")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("kustomize: err = %v, want %q", err, c.want)
			}
		})
	}
}

// TestRenderProcessHasNoNetwork: inside a render process the default HTTP
// transport and client refuse, DNS lookups refuse and git cannot be found,
// whatever the checks before a render let through.
func TestRenderProcessHasNoNetwork(t *testing.T) {
	url, hits := listener(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(proc.Environ()[1:], probeEnv+"="+url, "HTTP_PROXY=http://127.0.0.1:1", "PATH="+os.Getenv("PATH"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("probe: %v", err)
	}
	for _, want := range []string{"http: ", "client: ", proc.ErrNoNetwork.Error(), "dns: refused", "git: not found"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("probe said %q, want %q", out, want)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the render process sent %d requests to %s", n, url)
	}
}

// TestRenderErrorsKeepTheirType: a render's error crosses the process
// boundary with its message and its LimitError or RemoteError.
func TestRenderErrorsKeepTheirType(t *testing.T) {
	_, err := Kustomize(map[string][]byte{"app/kustomization.yaml": []byte("resources:\n- https://example.com/x.yaml\n")}, "app")
	var re *RemoteError
	if !errors.As(err, &re) || re.URL != "https://example.com/x.yaml" || !strings.HasPrefix(err.Error(), "kustomize build app: app/kustomization.yaml refers to") {
		t.Errorf("err = %v, want the RemoteError under the build's name", err)
	}
	_, err = Helm(ordinary(), HelmOptions{ChartDir: "c", ReleaseName: "r", Namespace: "n", Limits: Limits{MaxRenderedBytes: 10}})
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != "MaxRenderedBytes" {
		t.Errorf("err = %v, want a MaxRenderedBytes LimitError", err)
	}
}

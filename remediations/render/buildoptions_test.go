package render

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kustomize/v5/commands/build"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/driftfix/driftfix/bot/drift"
)

// outsideRoot is an overlay whose kustomization names a file outside its own
// directory: kustomize's default load restrictor refuses it.
func outsideRoot() map[string][]byte {
	return map[string][]byte{
		"apps/web/kustomization.yaml": []byte("resources:\n- ../shared/cm.yaml\n- deploy.yaml\n"),
		"apps/web/deploy.yaml":        []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n"),
		"apps/shared/cm.yaml":         []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\n"),
	}
}

// unordered lists a Deployment before the Namespace it goes in: kustomize's
// legacy order puts the Namespace first, --reorder none keeps this order.
func unordered() map[string][]byte {
	return map[string][]byte{
		"app/kustomization.yaml": []byte("resources:\n- deploy.yaml\n- ns.yaml\n"),
		"app/deploy.yaml":        []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n"),
		"app/ns.yaml":            []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: web\n"),
	}
}

// needsPlugin names a transformer that is no builtin: only a plugin can run it.
func needsPlugin() map[string][]byte {
	return map[string][]byte{
		"app/kustomization.yaml": []byte("resources:\n- cm.yaml\ntransformers:\n- fn.yaml\n"),
		"app/cm.yaml":            []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"),
		"app/fn.yaml":            []byte("apiVersion: example.com/v1\nkind: Frobnicator\nmetadata:\n  name: f\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: ./frob\n"),
	}
}

func kinds(objs []drift.Object) string {
	var out []string
	for _, o := range objs {
		out = append(out, drift.Str(o, "kind")+"/"+drift.Str(o, "metadata", "name"))
	}
	return strings.Join(out, ",")
}

// TestKustomizeBuildOptions: argocd-cm's kustomize.buildOptions change the
// build as they change `kustomize build`, and an option driftfix cannot
// render as Argo CD would is refused with an error naming it.
func TestKustomizeBuildOptions(t *testing.T) {
	for _, tc := range []struct {
		name    string
		files   map[string][]byte
		dir     string
		options string
		want    string   // the objects, in order, when it builds
		wantErr []string // what the error says, when it does not
	}{
		{name: "outside the root is refused by default", files: outsideRoot(), dir: "apps/web",
			wantErr: []string{"kustomize build apps/web", "security; file", "is not in or below"}},
		{name: "LoadRestrictionsNone reads outside the root", files: outsideRoot(), dir: "apps/web",
			options: "--load-restrictor LoadRestrictionsNone", want: "ConfigMap/shared,Deployment/web"},
		{name: "the = form and extra white space", files: outsideRoot(), dir: "apps/web",
			options: "\t--load-restrictor=LoadRestrictionsNone \n", want: "ConfigMap/shared,Deployment/web"},
		{name: "LoadRestrictionsRootOnly", files: outsideRoot(), dir: "apps/web",
			options: "--load-restrictor LoadRestrictionsRootOnly", wantErr: []string{"is not in or below"}},
		{name: "an illegal load restrictor", files: outsideRoot(), dir: "apps/web",
			options: "--load-restrictor none", wantErr: []string{"kustomize.buildOptions", "illegal flag value --load-restrictor none"}},
		{name: "kustomize 3's spelling is an unknown flag", files: outsideRoot(), dir: "apps/web",
			options: "--load_restrictor none", wantErr: []string{`argocd-cm kustomize.buildOptions "--load_restrictor none"`, "unknown flag: --load_restrictor"}},
		{name: "legacy order without options", files: unordered(), dir: "app", want: "Namespace/web,Deployment/web"},
		{name: "--reorder none keeps the listed order", files: unordered(), dir: "app", options: "--reorder none", want: "Deployment/web,Namespace/web"},
		{name: "--reorder legacy", files: unordered(), dir: "app", options: "--reorder=legacy", want: "Namespace/web,Deployment/web"},
		{name: "an illegal order", files: unordered(), dir: "app", options: "--reorder random", wantErr: []string{"illegal flag value --reorder random"}},
		{name: "--enable-helm is refused", files: unordered(), dir: "app", options: "--enable-helm",
			wantErr: []string{"kustomize.buildOptions", "--enable-helm is not supported", "no network, no helm binary"}},
		{name: "--enable-helm=false is Helm off", files: unordered(), dir: "app", options: "--enable-helm=false", want: "Namespace/web,Deployment/web"},
		{name: "Helm's settings without Helm change nothing", files: unordered(), dir: "app",
			options: "--helm-command /usr/local/bin/helm --helm-kube-version 1.30 --helm-api-versions v1", want: "Namespace/web,Deployment/web"},
		{name: "an unknown flag", files: unordered(), dir: "app", options: "--reorder none --frobnicate",
			wantErr: []string{"argocd-cm kustomize.buildOptions", "unknown flag: --frobnicate"}},
		{name: "an unknown shorthand", files: unordered(), dir: "app", options: "-x",
			wantErr: []string{"kustomize.buildOptions", "unknown shorthand flag: 'x'"}},
		{name: "a flag without its value", files: unordered(), dir: "app", options: "--load-restrictor",
			wantErr: []string{"kustomize.buildOptions", "flag needs an argument: --load-restrictor"}},
		{name: "a word that is no option", files: unordered(), dir: "app", options: "--reorder none extra",
			wantErr: []string{`"extra" is not an option`, "second path"}},
		{name: "--output is refused", files: unordered(), dir: "app", options: "-o /tmp/out",
			wantErr: []string{"--output /tmp/out is not supported"}},
		{name: "--enable-managedby-label is refused", files: unordered(), dir: "app", options: "--enable-managedby-label",
			wantErr: []string{"--enable-managedby-label is not supported"}},
		{name: "--help is refused", files: unordered(), dir: "app", options: "-h", wantErr: []string{"--help makes kustomize print its help"}},
		{name: "plugins asked for, none needed", files: unordered(), dir: "app",
			options: "--enable-alpha-plugins --enable-exec --network --mount type=bind,src=/x,dst=/y -e A=b", want: "Namespace/web,Deployment/web"},
		{name: "plugins asked for and needed", files: needsPlugin(), dir: "app", options: "--enable-alpha-plugins --enable-exec",
			wantErr: []string{"enables plugins, which driftfix never runs"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := KustomizeWithOptions(tc.files, tc.dir, KustomizeOptions{BuildOptions: tc.options})
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatalf("built %s, want an error", kinds(objs))
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not say %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := kinds(objs); got != tc.want {
				t.Errorf("built %s, want %s", got, tc.want)
			}
		})
	}
}

// TestKustomizeBuildOptionsRefusedBeforeAnyProcess: an option that is
// refused is refused by the bot, without starting a render process.
func TestKustomizeBuildOptionsRefusedBeforeAnyProcess(t *testing.T) {
	started := 0
	childStarted = func(int) { started++ }
	defer func() { childStarted = nil }()
	if _, err := KustomizeWithOptions(unordered(), "app", KustomizeOptions{BuildOptions: "--enable-helm"}); err == nil {
		t.Fatal("--enable-helm built")
	}
	if started != 0 {
		t.Errorf("%d render processes started for a refused option", started)
	}
}

// TestLoadRestrictionsNoneStaysInTheStagedFiles: without a load restrictor a
// kustomization can name any path, but the build reads an in-memory file
// system holding only the staged files: a file on disk, by an absolute path
// or by climbing above the repository, is not found.
func TestLoadRestrictionsNoneStaysInTheStagedFiles(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret.yaml")
	if err := os.WriteFile(secret, []byte("apiVersion: v1\nkind: Secret\nmetadata:\n  name: on-disk\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	climb := strings.Repeat("../", 12) + strings.TrimPrefix(secret, "/")
	for _, ref := range []string{secret, climb, "../../../../etc/hostname", "/etc"} {
		t.Run(ref, func(t *testing.T) {
			files := map[string][]byte{"apps/web/kustomization.yaml": []byte("resources:\n- " + ref + "\n")}
			objs, err := KustomizeWithOptions(files, "apps/web", KustomizeOptions{BuildOptions: "--load-restrictor LoadRestrictionsNone"})
			if err == nil {
				t.Fatalf("built %s from outside the staged files", kinds(objs))
			}
			if !strings.Contains(err.Error(), "doesn't exist") || strings.Contains(err.Error(), "on-disk") {
				t.Errorf("want the path not found, got %v", err)
			}
		})
	}
	// Above the repository is its root, in memory: a staged file there is
	// what climbing out finds.
	files := map[string][]byte{
		"apps/web/kustomization.yaml": []byte("resources:\n- ../../../../cm.yaml\n"),
		"cm.yaml":                     []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: root\n"),
	}
	objs, err := KustomizeWithOptions(files, "apps/web", KustomizeOptions{BuildOptions: "--load-restrictor LoadRestrictionsNone"})
	if err != nil || kinds(objs) != "ConfigMap/root" {
		t.Fatalf("climbing to the repository root: %s, %v", kinds(objs), err)
	}
}

// cobraBuild parses args with the build command as the kustomize binary makes
// it (NewCmdBuild, the alpha function flags, cobra's help flag) and returns
// the options it would build with, or its error.
func cobraBuild(args []string) (*krusty.Options, []string, error) {
	buildMu.Lock()
	defer buildMu.Unlock()
	cmd := build.NewCmdBuild(filesys.MakeFsInMemory(), build.MakeHelp("kustomize", "build"), io.Discard)
	build.AddFunctionAlphaEnablementFlags(cmd.Flags())
	cmd.InitDefaultHelpFlag()
	cmd.Flags().SetOutput(io.Discard)
	if err := cmd.ParseFlags(args); err != nil {
		return nil, nil, err
	}
	if err := build.Validate(append([]string{"."}, cmd.Flags().Args()...)); err != nil {
		return nil, nil, err
	}
	return build.HonorKustomizeFlags(krusty.MakeDefaultOptions(), cmd.Flags()), cmd.Flags().Args(), nil
}

// TestBuildFlagsAreKustomizeBuildsFlags: the flags driftfix parses
// kustomize.buildOptions with are those of the kustomize binary's build
// command, flag for flag, and parse alike.
func TestBuildFlagsAreKustomizeBuildsFlags(t *testing.T) {
	describe := func(fl *pflag.FlagSet) map[string]string {
		out := map[string]string{}
		fl.VisitAll(func(f *pflag.Flag) {
			out[f.Name] = fmt.Sprintf("-%s %s default %q noopt %q", f.Shorthand, f.Value.Type(), f.DefValue, f.NoOptDefVal)
		})
		return out
	}
	buildMu.Lock()
	cmd := build.NewCmdBuild(filesys.MakeFsInMemory(), build.MakeHelp("kustomize", "build"), io.Discard)
	build.AddFunctionAlphaEnablementFlags(cmd.Flags())
	cmd.InitDefaultHelpFlag()
	want := describe(cmd.Flags())
	got := describe(buildFlags())
	buildMu.Unlock()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("flags differ from kustomize build's:\n got %v\nwant %v", got, want)
	}
	for _, args := range [][]string{
		nil, {"--load-restrictor", "LoadRestrictionsNone"}, {"--load-restrictor=none"}, {"--reorder", "none"}, {"--reorder=legacy", "--reorder", "none"},
		{"--enable-alpha-plugins", "--network", "--network-name", "host", "--mount", "a", "-e", "A=1", "--as-current-user", "--enable-exec"},
		{"--helm-command", "h", "--helm-api-versions", "v1", "--helm-kube-version", "1.30", "--helm-debug"},
		{"--frobnicate"}, {"-z"}, {"--reorder"}, {"--enable-helm=maybe"}, {"x"}, {"--", "--reorder", "none"}, {"-e"},
	} {
		want, rest, werr := cobraBuild(args)
		var got *krusty.Options
		var gerr error
		func() {
			buildMu.Lock()
			defer buildMu.Unlock()
			fl := buildFlags()
			if gerr = fl.Parse(args); gerr == nil {
				if gerr = build.Validate(append([]string{"."}, fl.Args()...)); gerr == nil {
					got = build.HonorKustomizeFlags(krusty.MakeDefaultOptions(), fl)
					if !reflect.DeepEqual(fl.Args(), rest) {
						t.Errorf("%q: arguments %q, kustomize build's %q", args, fl.Args(), rest)
					}
				}
			}
		}()
		if fmt.Sprint(gerr) != fmt.Sprint(werr) || !reflect.DeepEqual(got, want) {
			t.Errorf("%q: %+v, %v; kustomize build: %+v, %v", args, got, gerr, want, werr)
		}
	}
}

// FuzzKustomizeBuildOptions: any kustomize.buildOptions value gives options
// or an error that names argocd-cm's key; never a panic, never plugins, Helm
// or the managed-by label; and the same options however the value is spaced.
func FuzzKustomizeBuildOptions(f *testing.F) {
	for _, s := range []string{"", "--load-restrictor LoadRestrictionsNone", "--reorder none", "--enable-helm", "--enable-helm=false",
		"--enable-alpha-plugins --enable-exec", "-o x", "--output=", "-h", "--", "-- a", "-e A=b --mount x", "--frobnicate", "-x",
		"--load_restrictor none", "---", "-", "--reorder", "--network-name=host --as-current-user", "--helm-api-versions a --helm-api-versions b",
		"--enable-managedby-label=0", "extra", "--reorder=legacy --reorder=none"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := parseBuildOptions(s)
		again, err2 := parseBuildOptions(" " + strings.Join(strings.Fields(s), "  ") + "\n")
		if (err == nil) != (err2 == nil) {
			t.Fatalf("%q: %v, respaced: %v", s, err, err2)
		}
		if err != nil {
			if !strings.Contains(err.Error(), "argocd-cm "+BuildOptionsKey) {
				t.Fatalf("%q: the error does not name argocd-cm's key: %v", s, err)
			}
			return
		}
		if !reflect.DeepEqual(b, again) {
			t.Fatalf("%q: %+v, respaced: %+v", s, b.opts, again.opts)
		}
		o := b.opts
		if o.PluginConfig.PluginRestrictions != types.PluginRestrictionsBuiltinsOnly || o.PluginConfig.HelmConfig.Enabled || o.AddManagedbyLabel {
			t.Fatalf("%q: options enable what driftfix never runs: %+v", s, o)
		}
		if o.LoadRestrictions != types.LoadRestrictionsRootOnly && o.LoadRestrictions != types.LoadRestrictionsNone {
			t.Fatalf("%q: load restrictions %v", s, o.LoadRestrictions)
		}
		switch o.Reorder {
		case krusty.ReorderOptionUnspecified, krusty.ReorderOptionNone, krusty.ReorderOptionLegacy:
		default:
			t.Fatalf("%q: reorder %q", s, o.Reorder)
		}
	})
}

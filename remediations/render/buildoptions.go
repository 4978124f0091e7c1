package render

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/spf13/pflag"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kustomize/v5/commands/build"
)

// BuildOptionsKey is the argocd-cm key whose value Argo CD appends to
// `kustomize build`, and that KustomizeOptions.BuildOptions holds.
const BuildOptionsKey = "kustomize.buildOptions"

// KustomizeOptions are how one kustomization is built.
type KustomizeOptions struct {
	// BuildOptions are the command-line options Argo CD passes to
	// `kustomize build` (argocd-cm's kustomize.buildOptions), as written
	// there: Argo CD splits them on white space. An option driftfix cannot
	// render as Argo CD would is refused (see parseBuildOptions).
	BuildOptions string
	// Limits bound the build; zero fields take DefaultLimits.
	Limits Limits
	// Unread are files the caller did not read (see Unread).
	Unread Unread
}

// buildMu serialises parsing: kustomize's build command keeps its flags in
// package variables.
var buildMu sync.Mutex

// parseBuildOptions reads opts as `kustomize build` reads them, with the
// flag definitions of kustomize v5.8.2 (the release of the kustomize API
// driftfix builds with), and returns the krusty options they give. Without
// --reorder the order is kustomize's legacy one (Namespaces first), as the
// command gives it unless the kustomization sets sortOptions. Options that
// change the build in memory are honoured (--load-restrictor, --reorder);
// options that only matter to plugins are accepted, since plugins stay
// disabled either way (--enable-alpha-plugins, --enable-exec, --network,
// --mount, --env, ...: a kustomization that needs a plugin then fails as
// kustomize fails without plugins); Helm's options are accepted while Helm
// is off. What driftfix cannot render as Argo CD would is an error naming the
// option: --enable-helm, --output, --enable-managedby-label and --help.
func parseBuildOptions(opts string) (kustomizeBuild, error) {
	args := strings.Fields(opts)
	if len(args) == 0 {
		return kustomizeBuild{opts: defaultKustomizeOptions()}, nil
	}
	b, err := parseBuildArgs(args)
	if err != nil {
		return kustomizeBuild{}, fmt.Errorf("argocd-cm %s %q: %w", BuildOptionsKey, opts, err)
	}
	return b, nil
}

// kustomizeBuild is what parseBuildOptions read.
type kustomizeBuild struct {
	opts *krusty.Options
	// plugins says the options ask for plugins, which stay disabled.
	plugins bool
}

// defaultKustomizeOptions are `kustomize build`'s options without flags,
// plugins (and so Helm) disabled.
func defaultKustomizeOptions() *krusty.Options {
	o := krusty.MakeDefaultOptions()
	o.Reorder = krusty.ReorderOptionUnspecified // what the command passes without --reorder
	o.PluginConfig = types.DisabledPluginConfig()
	return o
}

// buildFlags returns the flags of the kustomize binary's build command, at
// their defaults, defined by kustomize's own functions as NewCmdBuild and the
// binary define them, and cobra's help flag. NewCmdBuild itself is not used:
// it registers a shell completion for --load-restrictor in a map of cobra's
// that is never emptied, so a command made per build would leak (a test
// compares these flags with NewCmdBuild's).
func buildFlags() *pflag.FlagSet {
	fl := pflag.NewFlagSet("build", pflag.ContinueOnError)
	fl.SetOutput(io.Discard) // usage and deprecation notices
	build.AddFlagOutputPath(fl)
	build.AddFunctionBasicsFlags(fl)
	build.AddFlagLoadRestrictor(fl)
	build.AddFlagEnablePlugins(fl)
	build.AddFlagReorderOutput(fl)
	build.AddFlagEnableManagedbyLabel(fl)
	build.AddFlagEnableHelm(fl)
	build.AddFunctionAlphaEnablementFlags(fl) // the binary adds these to build
	fl.BoolP("help", "h", false, "help for build")
	return fl
}

func parseBuildArgs(args []string) (kustomizeBuild, error) {
	var b kustomizeBuild
	buildMu.Lock()
	defer buildMu.Unlock()
	// The flags' values live in the build package's variables: defining
	// the flags again resets them to their defaults.
	fl := buildFlags()
	if err := fl.Parse(args); err != nil {
		return b, err
	}
	if help, _ := fl.GetBool("help"); help {
		return b, errors.New("--help makes kustomize print its help instead of manifests")
	}
	// Argo CD runs `kustomize build <path> <options>`: a word that is no
	// option is a second path.
	if err := build.Validate(append([]string{"."}, fl.Args()...)); err != nil {
		if len(fl.Args()) > 0 {
			return b, fmt.Errorf("%q is not an option: kustomize takes it for a second path to build (%w)", fl.Args()[0], err)
		}
		return b, err
	}
	if on, _ := fl.GetBool("enable-helm"); on {
		return b, errors.New("--enable-helm is not supported: kustomize would run a helm binary and download charts, and driftfix renders without either (no network, no helm binary), so its render could not match Argo CD's")
	}
	if out, _ := fl.GetString("output"); out != "" {
		return b, fmt.Errorf("--output %s is not supported: kustomize would write the manifests to that path instead of handing them to Argo CD", out)
	}
	if on, _ := fl.GetBool("enable-managedby-label"); on {
		return b, errors.New("--enable-managedby-label is not supported: the label's value names the kustomize release Argo CD runs, which driftfix cannot know")
	}
	o := build.HonorKustomizeFlags(krusty.MakeDefaultOptions(), fl)
	// Plugins stay off whatever the flags say, and the label is refused
	// above (HonorKustomizeFlags would also read it from driftfix's own
	// environment, which is not Argo CD's).
	o.PluginConfig = types.DisabledPluginConfig()
	o.AddManagedbyLabel = false
	b.opts = o
	b.plugins, _ = fl.GetBool("enable-alpha-plugins")
	if exec, _ := fl.GetBool("enable-exec"); exec {
		b.plugins = true
	}
	return b, nil
}

package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/driftfix/driftfix/bot/config"
)

// configCmd is `driftfix config validate FILE`: every problem is printed
// with its line and key.
func (c *cli) configCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config validate [FILE] [--repo-file FILE]",
		Short: "Check a policy file or a repository's own file; each problem is printed with its line and key",
		Args:  cobra.ArbitraryArgs,
		RunE: c.runE(func(cmd *cobra.Command, args []string) (int, error) {
			if len(args) > 0 {
				return exitUsage, fmt.Errorf("unknown command %q: want %s validate FILE", args[0], cmd.CommandPath())
			}
			return exitUsage, fmt.Errorf("name the command: %s validate FILE", cmd.CommandPath())
		}),
	}
	validate := &cobra.Command{
		Use:   "validate [FILE] [--repo-file .github/driftfix.yaml]",
		Short: "Check a policy file or a repository's own file; each problem is printed with its line and key",
		Long: `Checks the policy file FILE, a repository's own .github/driftfix.yaml given
with --repo-file, or both: then the repository's file is also checked
against what FILE's policy.repoFile.allow lets repositories set.`,
		Example: `  driftfix config validate driftfix.yaml
  driftfix config validate --repo-file .github/driftfix.yaml
  driftfix config validate driftfix.yaml --repo-file .github/driftfix.yaml`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return fmt.Errorf("name one policy file: %s FILE", cmd.CommandPath())
			}
			return nil
		},
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return []string{"yaml", "yml"}, cobra.ShellCompDirectiveFilterFileExt
		},
	}
	repoFile := validate.Flags().String("repo-file", "", "a repository's own driftfix file ("+config.RepoFilePath+") to check")
	_ = validate.MarkFlagFilename("repo-file", "yaml", "yml")
	validate.RunE = c.runE(func(cmd *cobra.Command, args []string) (int, error) {
		if len(args) == 0 && *repoFile == "" {
			return exitUsage, fmt.Errorf("name a policy file (%s FILE) or a repository's file (--repo-file %s)", cmd.CommandPath(), config.RepoFilePath)
		}
		var policy *config.Config
		if len(args) == 1 {
			cfg, code, err := validateConfig(args[0], c.stdout, c.stderr)
			if err != nil {
				return code, err
			}
			policy = cfg
		}
		if *repoFile != "" {
			return validateRepoFile(*repoFile, policy, c.stdout, c.stderr)
		}
		return exitClean, nil
	})
	cmd.AddCommand(validate)
	return cmd
}

// validateConfig checks a policy file, printing each problem with its line
// and key.
func validateConfig(file string, stdout, stderr io.Writer) (*config.Config, int, error) {
	cfg, err := config.Load(file)
	if err := printProblems(file, err, stderr); err != nil {
		return nil, exitUsage, err
	}
	fmt.Fprintf(stdout, "%s: valid\n", file)
	return cfg, exitClean, nil
}

// validateRepoFile checks a repository's own driftfix file and, when the
// central policy is given, whether that policy lets repositories set each
// key the file sets.
func validateRepoFile(file string, policy *config.Config, stdout, stderr io.Writer) (int, error) {
	b, err := readPolicyFile(file)
	if err != nil {
		return exitUsage, err
	}
	own, err := config.ParseRepoFile(b)
	if err == nil && policy != nil {
		err = policy.Policy.CheckRepoFile(own)
	}
	if err := printProblems(file, err, stderr); err != nil {
		return exitUsage, err
	}
	fmt.Fprintf(stdout, "%s: valid\n", file)
	return exitClean, nil
}

// printProblems prints each problem of a file with its line and key.
func printProblems(file string, err error, stderr io.Writer) error {
	var es config.Errors
	switch {
	case errors.As(err, &es):
		for _, e := range es {
			fmt.Fprintf(stderr, "%s:%d: %s: %s\n", file, e.Line, e.Key, e.Msg)
		}
		return fmt.Errorf("%d %s in %s", len(es), plural(len(es), "problem", "problems"), file)
	case err != nil:
		return err
	}
	return nil
}

// readPolicyFile reads a file a user names, refusing what is not a regular
// file or is far larger than any driftfix file.
func readPolicyFile(file string) ([]byte, error) {
	st, err := os.Stat(file)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("read %s: not a regular file", file)
	}
	if st.Size() > 1<<20 {
		return nil, fmt.Errorf("read %s: %d bytes; a driftfix file is far smaller", file, st.Size())
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	return b, nil
}

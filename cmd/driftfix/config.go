package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/driftfix/driftfix/bot/config"
)

// configCmd is `driftfix config validate FILE`: every problem is printed
// with its line and key.
func (c *cli) configCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config validate FILE",
		Short: "Check a policy file; each problem is printed with its line and key",
		Args:  cobra.ArbitraryArgs,
		RunE: c.runE(func(cmd *cobra.Command, args []string) (int, error) {
			if len(args) > 0 {
				return exitUsage, fmt.Errorf("unknown command %q: want %s validate FILE", args[0], cmd.CommandPath())
			}
			return exitUsage, fmt.Errorf("name the command: %s validate FILE", cmd.CommandPath())
		}),
	}
	cmd.AddCommand(&cobra.Command{
		Use:     "validate FILE",
		Short:   "Check a policy file; each problem is printed with its line and key",
		Example: "  driftfix config validate driftfix.yaml",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("name one policy file: %s FILE", cmd.CommandPath())
			}
			return nil
		},
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return []string{"yaml", "yml"}, cobra.ShellCompDirectiveFilterFileExt
		},
		RunE: c.runE(func(_ *cobra.Command, args []string) (int, error) {
			return validateConfig(args[0], c.stdout, c.stderr)
		}),
	})
	return cmd
}

func validateConfig(file string, stdout, stderr io.Writer) (int, error) {
	_, err := config.Load(file)
	var es config.Errors
	switch {
	case errors.As(err, &es):
		for _, e := range es {
			fmt.Fprintf(stderr, "%s:%d: %s: %s\n", file, e.Line, e.Key, e.Msg)
		}
		return exitUsage, fmt.Errorf("%d %s in %s", len(es), plural(len(es), "problem", "problems"), file)
	case err != nil:
		return exitUsage, err
	}
	fmt.Fprintf(stdout, "%s: valid\n", file)
	return exitClean, nil
}

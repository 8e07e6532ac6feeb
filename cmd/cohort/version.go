package main

import (
	"fmt"

	"github.com/cohortdm/cohort/internal/buildinfo"

	"github.com/spf13/cobra"
)

// version is the release this binary was built as, set at link time:
//
//	go build -ldflags "-X main.version=v0.3.0" ./cmd/cohort
//
// It is a constant in all but name: nothing writes it at run time. Without
// it, the module version from the build info is used ("devel" for a build
// from a work tree).
var version string

func (a *app) versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and Go version of this binary (also: cohort --version)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			bi := buildinfo.Read(version)
			if a.format == "json" {
				return a.printJSON(bi)
			}
			fmt.Fprintf(a.stdout, "cohort %s\n", bi)
			return nil
		},
	}
}

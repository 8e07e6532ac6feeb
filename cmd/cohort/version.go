package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

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

// buildInfo is what `cohort version` reports.
type buildInfo struct {
	Version    string `json:"version"`
	Commit     string `json:"commit,omitempty"`
	CommitTime string `json:"commit_time,omitempty"`
	Modified   bool   `json:"modified,omitempty"`
	Go         string `json:"go"`
	Platform   string `json:"platform"`
}

// readBuildInfo combines the link-time version with what the Go toolchain
// recorded in the binary (module version, VCS revision and time).
func readBuildInfo(linked string) buildInfo {
	bi := buildInfo{Version: linked, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if info, ok := debug.ReadBuildInfo(); ok {
		if bi.Version == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			bi.Version = info.Main.Version
		}
		if info.GoVersion != "" {
			bi.Go = info.GoVersion
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				bi.Commit = s.Value
			case "vcs.time":
				bi.CommitTime = s.Value
			case "vcs.modified":
				bi.Modified = s.Value == "true"
			}
		}
	}
	if bi.Version == "" {
		bi.Version = "devel"
	}
	return bi
}

// String is the one-line form: "v0.3.0 (commit 3473267a1b2c, 2026-11-23T09:39:30Z, go1.26.8, linux/amd64)".
func (b buildInfo) String() string {
	var parts []string
	if b.Commit != "" {
		c := b.Commit[:min(12, len(b.Commit))]
		if b.Modified {
			c += " with local changes"
		}
		parts = append(parts, "commit "+c)
	}
	if b.CommitTime != "" {
		parts = append(parts, b.CommitTime)
	}
	parts = append(parts, b.Go, b.Platform)
	return fmt.Sprintf("%s (%s)", b.Version, strings.Join(parts, ", "))
}

func (a *app) versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and Go version of this binary (also: cohort --version)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			bi := readBuildInfo(version)
			if a.format == "json" {
				return a.printJSON(bi)
			}
			fmt.Fprintf(a.stdout, "cohort %s\n", bi)
			return nil
		},
	}
}
